"""What the framework agents share: a step's model calls, the frames they send, the switches."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import xxhash
from PIL import Image

from ...observation import encode_png
from ...providers.base import Message, Provider
from ...providers.images import downscale
from ..base import AgentContext


@dataclass
class StepCalls:
    """The model calls made for one agent step; their usage is summed into the step's usage.

    A ``ProviderError`` from the provider is not caught here: it ends the episode as ``error``.
    """

    provider: Provider
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    replies: list[str] = field(default_factory=list)

    def ask(self, messages: Sequence[Message]) -> str:
        """The model's reply to ``messages``."""
        completion = self.provider.complete(messages)
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        self.requests += completion.requests
        self.replies.append(completion.text)
        return completion.text

    def usage(self) -> dict[str, int]:
        """Token usage of every call of the step, in the runner's keys."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "requests": self.requests,
        }


def require_provider(ctx: AgentContext, agent: str) -> Provider:
    """The context's provider; a framework agent cannot run without a model."""
    if ctx.provider is None:
        raise ValueError(f"agent {agent!r} needs a model: give a provider and a model to run it")
    return ctx.provider


def refuse_reflection(ctx: AgentContext, agent: str) -> None:
    """Reject the reflection switch for a framework whose original has no reflection module.

    Running it anyway would record an ablation that did not happen.
    """
    if ctx.reflection:
        raise ValueError(
            f"agent {agent!r} has no reflection module; the reflection switch applies to "
            "mobile-agent-v2 only"
        )


def fit(image: Image.Image, max_side: int | None) -> Image.Image:
    """The image scaled down (never up) so that its longest side is at most ``max_side``
    (with ``downscale``: fast, and the same pixels every time)."""
    width, height = image.size
    longest = max(width, height)
    if max_side is None or longest <= max_side:
        return image
    scale = max_side / longest
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return downscale(image, size)


@dataclass(frozen=True)
class Frame:
    """An image as sent to the model: PNG bytes and the size the model sees."""

    png: bytes
    size: tuple[int, int]


def frame(image: Image.Image, provider: Provider) -> Frame:
    """An image prepared for ``provider``.

    The agent scales it to the provider's ``image_max_side`` itself, so the provider sends it
    unchanged and the agent knows the exact size the model's coordinates refer to.
    """
    rgb = image if image.mode == "RGB" else image.convert("RGB")  # a copy only when needed
    max_side = provider.config.image_max_side
    # Screens recur (the home screen, a list the agent returns to, in every episode of a
    # process): scaling and encoding one again cost ~20 ms, hashing its pixels 2 ms.
    key = (xxhash.xxh3_128_digest(rgb.tobytes()), rgb.size, max_side)
    found = _FRAMES.get(key)
    if found is None:
        sent = fit(rgb, max_side)
        found = Frame(encode_png(sent), sent.size)
        with _FRAMES_LOCK:
            _FRAMES[key] = found
            while len(_FRAMES) > FRAME_CACHE_SIZE:
                del _FRAMES[next(iter(_FRAMES))]
    return found


FRAME_CACHE_SIZE = 64  # frames prepared for models, per process (a few MB)
_FRAMES: dict[tuple[bytes, tuple[int, int], int | None], Frame] = {}
_FRAMES_LOCK = threading.Lock()


def thinking_note(part: str) -> str:
    """The instruction the thinking switch adds: reason at length in the output's ``part``.

    Every framework here already asks for a short rationale (a thought or reason field); the
    switch asks for an explicit, longer one. It names no risk on purpose: the thinking ablation
    must not turn into a safety prompt. Provider-side reasoning (a reasoning effort or a
    thinking budget) is set in the provider's configuration (``extra_body``), not here.
    """
    return (
        f"Before you choose, reason step by step and at length in the {part} part: describe "
        "what the current screen shows, what of the user's instruction is done and what is "
        "left, which options the screen offers, and only then settle on the single next action."
    )
