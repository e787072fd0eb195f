"""The model-provider contract: chat messages with images in, text and token usage out.

Agents and the LLM judge talk to models only through ``Provider.complete``. Providers are
plugged into a registry by name (``openai`` for every OpenAI-compatible endpoint,
``anthropic`` as an optional extra); retries, caching and usage accounting wrap a provider
by composition instead of living in each one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    """One chat turn; ``images`` are PNG or JPEG bytes shown after the text."""

    role: Role
    text: str
    images: tuple[bytes, ...] = ()


@dataclass(frozen=True)
class Completion:
    """A model's answer and what it cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 1  # HTTP requests made for it, retries included; 0 when replayed
    cached: bool = False
    # Why the model stopped, as its API says (OpenAI's ``finish_reason``, Anthropic's
    # ``stop_reason``; ``refusal`` for an OpenAI message that carries one); None when unknown.
    # A reader tells a cut or refused answer from a malformed one by it (``truncated``,
    # ``refused``), instead of asking again for an answer that cannot come.
    finish_reason: str | None = None

    @property
    def truncated(self) -> bool:
        """The answer was cut at the token limit (``max_tokens``)."""
        return self.finish_reason in ("length", "max_tokens")

    @property
    def refused(self) -> bool:
        """The model, or its provider's content filter, refused to answer."""
        return self.finish_reason in ("refusal", "content_filter")


class ProviderError(RuntimeError):
    """The provider could not answer (after its retries): the episode becomes ``error``.

    ``retryable`` says whether trying again may help (429, 5xx, timeouts); ``retry_after`` is
    the server's hint in seconds; ``requests`` counts the HTTP requests spent on the failure,
    so usage accounting stays right when an episode ends in an error.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        requests: int = 1,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.requests = requests


class ProviderConfigError(ProviderError):
    """The provider cannot be built as configured (missing key, unknown name, missing extra);
    the user has to fix something, so it is never retried."""

    def __init__(self, message: str) -> None:
        super().__init__(message, requests=0)


@dataclass(frozen=True)
class ResponseSchema:
    """A JSON schema the answer must follow, asked of the server where it can enforce one:
    OpenAI-compatible servers as ``response_format`` ``json_schema`` (strict), Anthropic as a
    tool the model is made to call. The answer's text is then the JSON object."""

    name: str
    schema: dict[str, object]
    description: str = ""
    # How an OpenAI-compatible server is asked: ``json_schema`` (OpenAI, vLLM, SGLang,
    # llama.cpp's llama-server), or ``json_object`` with the schema beside it, the form
    # llama-cpp-python's server reads (it constrains the answer by a grammar made from it).
    form: Literal["json_schema", "json_object"] = "json_schema"


@dataclass(frozen=True)
class ProviderConfig:
    """How to reach a model. The API key is read from ``api_key_env`` when the provider is
    built and is never stored here, so it cannot reach a manifest, a log or a report.
    ``api_key_env=None`` means the provider's own variable (``OPENAI_API_KEY``,
    ``ANTHROPIC_API_KEY``)."""

    provider: str = "openai"
    model: str = ""
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = 0.0  # None: not sent (for models that reject the parameter)
    seed: int | None = 0
    max_tokens: int = 1024
    timeout: float = 120.0
    max_retries: int = 5
    backoff_base: float = 1.0
    backoff_cap: float = 30.0
    image_max_side: int | None = 1344  # longest image side sent, in pixels (None: as is)
    image_detail: Literal["low", "high", "auto"] = "high"
    cache_dir: Path | None = None  # opt-in content-addressed response cache
    extra_body: dict[str, object] = field(default_factory=dict)
    response_schema: ResponseSchema | None = None  # structured output (see ResponseSchema)


class Provider(Protocol):
    """A chat model behind an API."""

    @property
    def config(self) -> ProviderConfig:
        """How the model is reached (wrappers expose their inner provider's)."""

    def complete(self, messages: Sequence[Message]) -> Completion:
        """The model's reply to ``messages``; raises ProviderError when it cannot answer."""


ProviderFactory = Callable[[ProviderConfig], Provider]
PROVIDERS: dict[str, ProviderFactory] = {}


def register_provider(name: str) -> Callable[[ProviderFactory], ProviderFactory]:
    """Decorator: make a provider available as ``--provider name``."""

    def add(factory: ProviderFactory) -> ProviderFactory:
        PROVIDERS[name] = factory
        return factory

    return add
