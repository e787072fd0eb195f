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


class ProviderError(RuntimeError):
    """The provider could not answer (after its retries): the episode becomes ``error``."""


@dataclass(frozen=True)
class ProviderConfig:
    """How to reach a model. The API key is read from ``api_key_env`` when the provider is
    built and is never stored here, so it cannot reach a manifest, a log or a report."""

    provider: str = "openai"
    model: str = ""
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
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


class Provider(Protocol):
    """A chat model behind an API."""

    config: ProviderConfig

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
