"""Claude through the ``anthropic`` SDK, an optional extra (``pip install 'ghostei[anthropic]'``).

The Messages API takes the system prompt as a separate field and images as base64 source
blocks. It has no sampling seed, so ``config.seed`` is ignored here (``supports_seed`` is
False). Temperature is sent only when the installed SDK still has the parameter: SDK 2.x
speaks API version 2026-10-21, which dropped sampling parameters and rejects them with a 400,
so there the model's own default sampling applies (``sends_temperature`` records which).
"""

from __future__ import annotations

import base64
import inspect
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from .base import (
    Completion,
    Message,
    ProviderConfig,
    ProviderConfigError,
    register_provider,
)
from .clients import shared_client
from .credentials import resolve_api_key
from .errors import call_sdk
from .images import prepare_image

if TYPE_CHECKING:
    import anthropic

DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
INSTALL_HINT = "the anthropic provider needs the extra: pip install 'ghostei[anthropic]'"


def anthropic_request_messages(
    messages: Sequence[Message], config: ProviderConfig
) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system, messages)`` for the Messages API: system turns joined into one field, the
    rest as content blocks with text first and then each image."""
    system = [m.text for m in messages if m.role == "system" and m.text]
    out: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role == "system":
            continue
        blocks: list[dict[str, Any]] = []
        if msg.text:
            blocks.append({"type": "text", "text": msg.text})
        for image in msg.images:
            mime, data = prepare_image(image, config.image_max_side)
            source = {"type": "base64", "media_type": mime, "data": base64.b64encode(data).decode()}
            blocks.append({"type": "image", "source": source})
        out.append({"role": msg.role, "content": blocks})
    return ("\n\n".join(system) if system else None), out


class AnthropicProvider:
    """A Claude model behind the Anthropic Messages API."""

    supports_seed: ClassVar[bool] = False

    def __init__(self, config: ProviderConfig) -> None:
        if not config.model:
            raise ProviderConfigError("no model given: pass --model NAME")
        try:
            import anthropic
        except ImportError as exc:
            raise ProviderConfigError(INSTALL_HINT) from exc

        self.config = config
        key = resolve_api_key(config, DEFAULT_KEY_ENV)
        # The key lives only inside the client; max_retries=0 leaves retrying to RetryingProvider.
        # One client per process and endpoint (clients.py): building one costs a TLS context.
        self._client: anthropic.Anthropic = shared_client(
            "anthropic",
            config.base_url,
            config.timeout,
            key,
            lambda: anthropic.Anthropic(
                api_key=key, base_url=config.base_url, timeout=config.timeout, max_retries=0
            ),
        )
        self.sends_temperature = (
            "temperature" in inspect.signature(self._client.messages.create).parameters
        )

    def __repr__(self) -> str:
        return f"AnthropicProvider(model={self.config.model!r}, base_url={self.config.base_url!r})"

    def request(self, messages: Sequence[Message]) -> dict[str, Any]:
        """The keyword arguments of the Messages API call for ``messages``."""
        cfg = self.config
        system, turns = anthropic_request_messages(messages, cfg)
        req: dict[str, Any] = {
            "model": cfg.model,
            "messages": turns,
            "max_tokens": cfg.max_tokens,
        }
        if self.sends_temperature and cfg.temperature is not None:
            req["temperature"] = cfg.temperature
        if system is not None:
            req["system"] = system
        if cfg.response_schema is not None:
            # The Messages API's way to a schema on every Claude model: one tool whose input
            # is the answer, which the model is made to call.
            schema = cfg.response_schema
            req["tools"] = [
                {
                    "name": schema.name,
                    "description": schema.description or f"Give the answer as {schema.name}.",
                    "input_schema": schema.schema,
                }
            ]
            req["tool_choice"] = {"type": "tool", "name": schema.name}
        if cfg.extra_body:
            req["extra_body"] = dict(cfg.extra_body)
        return req

    def complete(self, messages: Sequence[Message]) -> Completion:
        """One request to the API; SDK errors become ProviderError."""
        import anthropic

        request = self.request(messages)
        response = call_sdk(
            lambda: self._client.messages.create(**request),
            anthropic,
            where=self._where(),
            timeout=self.config.timeout,
            secret=self._client.api_key,
        )
        text = "".join(block.text for block in response.content if block.type == "text")
        schema = self.config.response_schema
        answered = [
            b for b in response.content if b.type == "tool_use" and schema and b.name == schema.name
        ]
        if answered:  # the schema's tool called: its input is the answer
            text = json.dumps(answered[0].input, ensure_ascii=False)
        return Completion(
            text=text,
            prompt_tokens=response.usage.input_tokens,
            completion_tokens=response.usage.output_tokens,
            finish_reason=getattr(response, "stop_reason", None),
        )

    def _where(self) -> str:
        return f"model {self.config.model!r} at {self.config.base_url or 'api.anthropic.com'}"


register_provider("anthropic")(AnthropicProvider)
