"""A check of a model endpoint before any episode: reachable, the right path, the model known,
images taken (when the agent sends them) — or a message that says what to fix.

Without it a wrong base URL costs one ``HTTP 404`` per episode, a dead server half a minute of
retries per episode, and a text-only server a failed request per step. The check sends one
tiny request (and one with an 8x8 image), without retries, and reads the answer the way a
user would want it read.
"""

from __future__ import annotations

from dataclasses import replace

from PIL import Image

from ..png import encode_png
from .base import Message, ProviderConfig, ProviderError
from .build import build_provider

# The probe's text: servers answer it like any request; the project's scripted test server
# recognises it and answers it without spending a scripted reply.
PROBE_TEXT = "ghostei endpoint check: reply with the word OK."


class EndpointError(RuntimeError):
    """The endpoint cannot serve the run; the message names the URL and the likely fix."""


def check_endpoint(config: ProviderConfig, *, images: bool, who: str = "the agent") -> int:
    """Raise EndpointError unless ``config``'s endpoint answers a tiny request (and, with
    ``images``, one carrying an image). Returns the requests made."""
    probe = replace(config, max_retries=0, max_tokens=8, cache_dir=None, extra_body={})
    provider = build_provider(probe, sleep=lambda _: None)
    where = config.base_url or f"the {config.provider} API"
    try:
        provider.complete([Message("user", PROBE_TEXT)])
    except ProviderError as exc:
        raise EndpointError(_explain(config, where, exc)) from None
    if not images:
        return 1
    try:
        provider.complete(
            [Message("user", PROBE_TEXT, (encode_png(Image.new("RGB", (8, 8), (255, 255, 255))),))]
        )
    except ProviderError as exc:
        raise EndpointError(
            f"{where} answered a text request but not one with an image ({exc}). "
            f"{who} sends screenshots: serve a vision model, or use a text-only agent "
            "such as t3a."
        ) from None
    return 2


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
