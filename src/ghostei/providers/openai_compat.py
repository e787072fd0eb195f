"""Every OpenAI-compatible chat endpoint through the ``openai`` SDK.

One provider covers OpenAI, vLLM, Ollama, SGLang, DashScope and Gemini's compatible
endpoint: they differ only in ``base_url``, the key variable and the model name. Images go
as PNG/JPEG data URLs with the configured ``detail``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from .base import (
    Completion,
    Message,
    ProviderConfig,
    ProviderConfigError,
    ProviderError,
    ResponseSchema,
    register_provider,
)
from .clients import shared_client
from .credentials import resolve_api_key
from .errors import call_sdk
from .images import data_url

if TYPE_CHECKING:
    import openai

DEFAULT_KEY_ENV = "OPENAI_API_KEY"


def openai_messages(messages: Sequence[Message], config: ProviderConfig) -> list[dict[str, Any]]:
    """``messages`` in the chat-completions format: text first, then one part per image."""
    out: list[dict[str, Any]] = []
    for msg in messages:
        if not msg.images:
            # Plain strings: some servers reject content lists for text-only models.
            out.append({"role": msg.role, "content": msg.text})
            continue
        parts: list[dict[str, Any]] = []
        if msg.text:
            parts.append({"type": "text", "text": msg.text})
        for image in msg.images:
            url = data_url(image, config.image_max_side)
            parts.append(
                {"type": "image_url", "image_url": {"url": url, "detail": config.image_detail}}
            )
        out.append({"role": msg.role, "content": parts})
    return out


def response_format(schema: ResponseSchema) -> dict[str, Any]:
    """The chat-completions ``response_format`` that enforces ``schema`` (OpenAI, vLLM,
    SGLang and llama.cpp's server read it; strict: no other keys, every key present)."""
    if schema.form == "json_object":  # llama-cpp-python's server: the schema beside the type
        return {"type": "json_object", "schema": schema.schema}
    spec: dict[str, Any] = {"name": schema.name, "schema": schema.schema, "strict": True}
    if schema.description:
        spec["description"] = schema.description
    return {"type": "json_schema", "json_schema": spec}


class OpenAICompatProvider:
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    supports_seed: ClassVar[bool] = True

    def __init__(self, config: ProviderConfig) -> None:
        if not config.model:
            raise ProviderConfigError("no model given: pass --model NAME")
        import openai  # lazily: importing the SDK costs time every CLI start would pay

        self.config = config
        key = resolve_api_key(config, DEFAULT_KEY_ENV)
        # The key lives only inside the client; max_retries=0 leaves retrying to RetryingProvider.
        # One client per process and endpoint (clients.py): building one costs a TLS context.
        self._client: openai.OpenAI = shared_client(
            "openai",
            config.base_url,
            config.timeout,
            key,
            lambda: openai.OpenAI(
                api_key=key, base_url=config.base_url, timeout=config.timeout, max_retries=0
            ),
        )

    def __repr__(self) -> str:
        return (
            f"OpenAICompatProvider(model={self.config.model!r}, base_url={self.config.base_url!r})"
        )

    def request(self, messages: Sequence[Message]) -> dict[str, Any]:
        """The keyword arguments of the chat-completions call for ``messages``."""
        cfg = self.config
        req: dict[str, Any] = {"model": cfg.model, "messages": openai_messages(messages, cfg)}
        # OpenAI itself deprecated max_tokens (its reasoning models reject it); the compatible
        # servers (vLLM, Ollama, SGLang, DashScope, Gemini) all take max_tokens.
        if cfg.base_url is None or "api.openai.com" in cfg.base_url:
            req["max_completion_tokens"] = cfg.max_tokens
        else:
            req["max_tokens"] = cfg.max_tokens
        if cfg.temperature is not None:
            req["temperature"] = cfg.temperature
        if cfg.seed is not None:
            req["seed"] = cfg.seed
        if cfg.response_schema is not None:
            req["response_format"] = response_format(cfg.response_schema)
        if cfg.extra_body:
            req["extra_body"] = dict(cfg.extra_body)
        return req

    def complete(self, messages: Sequence[Message]) -> Completion:
        """One request to the endpoint; SDK errors become ProviderError."""
        import openai

        request = self.request(messages)
        response = call_sdk(
            lambda: self._client.chat.completions.create(**request),
            openai,
            where=self._where(),
            timeout=self.config.timeout,
            secret=self._client.api_key,
        )
        if not response.choices:
            raise ProviderError(f"{self._where()} returned no choices")
        choice = response.choices[0]
        message = choice.message
        refusal = getattr(message, "refusal", None)
        text = message.content or refusal or ""
        usage = response.usage
        return Completion(
            text=text,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            # Newer OpenAI models refuse in a field of their own, with finish_reason "stop".
            finish_reason="refusal" if refusal else getattr(choice, "finish_reason", None),
        )

    def _where(self) -> str:
        return f"model {self.config.model!r} at {self.config.base_url or 'api.openai.com'}"


register_provider("openai")(OpenAICompatProvider)
