"""Token usage, request counts and cost, summed per episode and per agent.

``Usage`` counts what a run actually spent: a completion replayed from the cache costs no
tokens and no requests and is counted in ``cached`` instead, and requests spent on a failed
call still count. A ``PriceTable`` (model -> USD per million prompt/completion tokens,
loaded from JSON or TOML) turns usage into cost.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .base import Completion, Message, Provider, ProviderConfig, ProviderError


@dataclass
class Usage:
    """Running totals of model calls."""

    completions: int = 0  # answers received, cached ones included
    cached: int = 0  # answers replayed from the response cache
    failures: int = 0  # calls that ended in a ProviderError
    requests: int = 0  # HTTP requests made, retries included
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, completion: Completion) -> None:
        """Count one completion."""
        self.completions += 1
        self.requests += completion.requests
        if completion.cached:
            self.cached += 1
            return
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens

    def add_failure(self, error: ProviderError) -> None:
        """Count a call that failed, with the requests it spent."""
        self.failures += 1
        self.requests += error.requests

    def __add__(self, other: Usage) -> Usage:
        mine, theirs = asdict(self), asdict(other)
        return Usage(**{name: mine[name] + theirs[name] for name in mine})

    def to_dict(self) -> dict[str, int]:
        """The totals as plain JSON-ready numbers."""
        return asdict(self)


class Price(BaseModel):
    """What a model costs, in USD per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: float = Field(ge=0)
    completion: float = Field(ge=0)


_TABLE = TypeAdapter(dict[str, Price])


class PriceTable:
    """Prices by model name; a model missing from the table has no known cost."""

    def __init__(self, prices: Mapping[str, Price]) -> None:
        self.prices = dict(prices)

    @classmethod
    def load(cls, path: Path) -> PriceTable:
        """A table from a ``.json`` or ``.toml`` file shaped like
        ``{"gpt-4o": {"prompt": 2.5, "completion": 10.0}}``."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
            raw = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
            return cls(_TABLE.validate_python(raw))
        except (OSError, ValueError, ValidationError) as exc:
            # ValidationError and JSON/TOML decode errors are ValueErrors; named for clarity.
            raise ValueError(f"bad price table {path}: {exc}") from exc

    def cost(self, model: str, usage: Usage) -> float | None:
        """USD spent by ``usage`` on ``model``, or None when the model has no price."""
        price = self.prices.get(model)
        if price is None:
            return None
        return (
            usage.prompt_tokens * price.prompt + usage.completion_tokens * price.completion
        ) / 1_000_000


class MeteredProvider:
    """``inner`` with every call counted into ``usage`` (one per episode or per agent)."""

    def __init__(self, inner: Provider, usage: Usage | None = None) -> None:
        self.inner = inner
        self.usage = usage if usage is not None else Usage()

    @property
    def config(self) -> ProviderConfig:
        """The wrapped provider's configuration."""
        return self.inner.config

    def __repr__(self) -> str:
        return f"MeteredProvider({self.inner!r})"

    def complete(self, messages: Sequence[Message]) -> Completion:
        """The inner provider's completion, counted."""
        try:
            completion = self.inner.complete(messages)
        except ProviderError as exc:
            self.usage.add_failure(exc)
            raise
        self.usage.add(completion)
        return completion
