"""Model providers: the contract, the OpenAI-compatible and Anthropic providers, and the
wrappers that add retries, a response cache and usage accounting."""

from __future__ import annotations

from . import anthropic_provider, openai_compat  # noqa: F401  (they register themselves)
from .base import (
    PROVIDERS,
    Completion,
    Message,
    Provider,
    ProviderConfig,
    ProviderConfigError,
    ProviderError,
    ResponseSchema,
    register_provider,
)
from .build import build_provider
from .cache import CachedProvider, cache_key
from .retry import RetryingProvider
from .usage import MeteredProvider, Price, PriceTable, Usage

__all__ = [
    "PROVIDERS",
    "CachedProvider",
    "Completion",
    "Message",
    "MeteredProvider",
    "Price",
    "PriceTable",
    "Provider",
    "ProviderConfig",
    "ProviderConfigError",
    "ProviderError",
    "ResponseSchema",
    "RetryingProvider",
    "Usage",
    "build_provider",
    "cache_key",
    "register_provider",
]
