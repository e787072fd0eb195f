"""A check of a model endpoint before any episode: reachable, the right path, the model known,
images taken (when the agent sends them), a context large enough for the agent's largest
prompt — or a message that says what to fix.

Without it a wrong base URL costs one ``HTTP 404`` per episode, a dead server half a minute of
retries per episode, a text-only server a failed request per step, and a context too small
an ``HTTP 400`` on every long step. The check sends one tiny request (and one with an 8x8
image) and reads the answer the way a user would want it read. It retries nothing but a rate
limit: a 429 is waited out as every request waits it out (``--max-retries``, the backoff,
``Retry-After`` up to ``--backoff-cap``, the endpoint's shared limiter), since a briefly
rate-limited key is no reason to refuse a run; a dead or wrong endpoint is said at once.

The context is what the server says it serves: ``max_model_len`` in ``GET /v1/models`` (vLLM,
SGLang) or ``n_ctx`` in ``GET /props`` (llama.cpp's llama-server). A server that says neither
(llama-cpp-python, the hosted APIs) cannot be checked without sending a prompt as long as the
agent's, minutes on a CPU; the check then says what the agent needs and leaves it to the user.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from PIL import Image

from ..png import encode_png
from .base import Message, ProviderConfig, ProviderError
from .build import build_provider
from .credentials import key_env
from .openai_compat import DEFAULT_KEY_ENV
from .retry import TOO_MANY_REQUESTS, is_rate_limited

# The probe's text: servers answer it like any request; the project's scripted test server
# recognises it and answers it without spending a scripted reply.
PROBE_TEXT = "ghostei endpoint check: reply with the word OK."


class EndpointError(RuntimeError):
    """The endpoint cannot serve the run; the message names the URL and the likely fix."""


@dataclass(frozen=True)
class PromptSize:
    """The largest request a client sends, which the model's context must hold: its text in
    tokens (None: not known) and the most images in one request."""

    text_tokens: int | None
    images: int


@dataclass(frozen=True)
class EndpointReport:
    """What the check found: the requests it made, and the context window the server
    reports (None: it does not say), against the tokens the run needs (None: not known)."""

    requests: int
    context: int | None
    needed: int | None
    who: str = "the agent"

    def note(self) -> str | None:
        """A line for the user when the context could not be checked."""
        if self.needed is None or self.context is not None:
            return None
        return (
            f"the server does not say its context size: {self.who} needs at least "
            f"{self.needed:,} tokens (its largest prompt plus --max-tokens); serve the model "
            f"with a context at least that large (llama.cpp: --n_ctx {_ctx_hint(self.needed)})"
        )


def check_endpoint(config: ProviderConfig, needs: Mapping[str, PromptSize]) -> EndpointReport:
    """Raise EndpointError unless ``config``'s endpoint can serve every client in ``needs``
    (who, e.g. ``--agent t3a``, to its largest request): it answers a tiny request, one with
    an image when a client sends images, and, where the server reports its context window,
    the largest prompt plus ``max_tokens`` fits in it."""
    probe = replace(config, max_tokens=8, cache_dir=None, extra_body={}, response_schema=None)
    provider = build_provider(probe, retry_on=is_rate_limited)
    where = config.base_url or f"the {config.provider} API"
    try:
        provider.complete([Message("user", PROBE_TEXT)])
    except ProviderError as exc:
        raise EndpointError(_explain(config, where, exc)) from None
    requests = 1
    seeing = [who for who, size in needs.items() if size.images]
    if seeing:
        requests += 1
        try:
            white = Image.new("RGB", (8, 8), (255, 255, 255))
            provider.complete([Message("user", PROBE_TEXT, (encode_png(white),))])
        except ProviderError as exc:
            if exc.status == TOO_MANY_REQUESTS:  # the limit, not the image
                raise EndpointError(_explain(config, where, exc)) from None
            raise EndpointError(
                f"{where} answered a text request but not one with an image ({exc}). "
                f"{seeing[0]} sends screenshots: serve a vision model, or use a text-only "
                "agent such as t3a (or the judge's --text-only)."
            ) from None
    sized = {who: s.text_tokens for who, s in needs.items() if s.text_tokens is not None}
    if not sized:
        return EndpointReport(requests, server_context(config), None)
    who = max(sized, key=lambda w: sized[w])
    prompt = sized[who]
    needed = prompt + config.max_tokens
    context = server_context(config)
    if context is not None and context < needed:
        raise EndpointError(
            f"{where} serves {config.model!r} with a context of {context:,} tokens, but "
            f"{who} sends prompts of up to about {prompt:,} tokens"
            f"{' and images' if needs[who].images else ''} and asks for up to --max-tokens "
            f"{config.max_tokens:,} more: serve it with a context of at least {needed:,} "
            f"(llama.cpp: --n_ctx {_ctx_hint(needed)}; vLLM: --max-model-len), or lower "
            "--max-tokens"
        )
    return EndpointReport(requests, context, needed, who)


def server_context(config: ProviderConfig) -> int | None:
    """The context window (tokens) the server reports for ``config.model``, or None."""
    if config.provider != "openai" or not config.base_url:
        return None
    base = config.base_url.rstrip("/")
    listed = _get(f"{base}/models", config)
    entries = [e for e in (listed or {}).get("data", []) if isinstance(e, dict)]
    named = [e for e in entries if e.get("id") == config.model]
    # A one-model server (llama.cpp) answers under any name: its entry is the model's.
    for entry in named or (entries if len(entries) == 1 else []):
        value = entry.get("max_model_len")
        if isinstance(value, int) and value > 0:
            return value
    root = base.removesuffix("/v1")
    settings = (_get(f"{root}/props", config) or {}).get("default_generation_settings")
    value = settings.get("n_ctx") if isinstance(settings, dict) else None
    return value if isinstance(value, int) and value > 0 else None


def _get(url: str, config: ProviderConfig) -> dict[str, Any] | None:
    """``GET url`` as JSON; None for any failure (an optional route, read when present)."""
    headers = {"Accept": "application/json"}
    key = os.environ.get(key_env(config, DEFAULT_KEY_ENV), "").strip()
    if key:
        headers["Authorization"] = f"Bearer {key}"
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, headers=headers), timeout=min(config.timeout, 10.0)
        ) as answer:
            data = json.load(answer)
    except (OSError, ValueError):  # URLError, HTTPError and timeouts are OSErrors
        return None
    return data if isinstance(data, dict) else None


def _ctx_hint(needed: int) -> int:
    """The power of two at or above ``needed``: how context sizes are usually given."""
    return 1 << max(0, needed - 1).bit_length()


def _explain(config: ProviderConfig, where: str, exc: ProviderError) -> str:
    text = str(exc)
    # What the server said, without the message's own "model 'M' at URL" preamble.
    low = text.split(" answered HTTP", 1)[-1].lower()
    url = (config.base_url or "").rstrip("/")
    if exc.status is None and "timed out" in low:
        return (
            f"{where} did not answer a one-line request within --timeout {config.timeout:g} s: "
            "is the model loaded? A model on a CPU may need a longer --timeout."
        )
    if exc.status is None:
        return f"cannot reach {where}: is the server running, at that address? ({text})"
    if exc.status == TOO_MANY_REQUESTS:
        return (
            f"{where} is rate-limiting requests (HTTP 429) and still was after the retries "
            f"(--max-retries {config.max_retries}): wait for the limit to reset, or allow "
            f"more retries ({text})"
        )
    if exc.status in (401, 403):
        key = config.api_key_env or "the provider's key variable"
        return f"{where} refused the API key from {key} (HTTP {exc.status}): {text}"
    if exc.status == 404 and url and not url.endswith("/v1"):
        return (
            f"{where} has no chat-completions route (HTTP 404): OpenAI-compatible servers "
            f"serve under /v1, try --base-url {url}/v1"
        )
    if exc.status in (400, 404, 422) and "model" in low:
        return (
            f"{where} does not know the model {config.model!r} (HTTP {exc.status}): check "
            f"--model against the server's list of models ({text})"
        )
    return f"{where} cannot serve the run: {text}"
