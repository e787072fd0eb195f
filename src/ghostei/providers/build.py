"""A provider by configuration: the registered base provider, then retries, then the cache."""

from __future__ import annotations

import random
import time

from .base import PROVIDERS, Provider, ProviderConfig, ProviderConfigError
from .cache import CachedProvider
from .retry import RetryingProvider, Sleep


def build_provider(
    config: ProviderConfig, *, sleep: Sleep = time.sleep, rng: random.Random | None = None
) -> Provider:
    """The provider named by ``config.provider``, wrapped in retries and (when
    ``config.cache_dir`` is set) the response cache, outermost so a hit makes no request."""
    factory = PROVIDERS.get(config.provider)
    if factory is None:
        known = ", ".join(sorted(PROVIDERS))
        raise ProviderConfigError(f"unknown provider {config.provider!r}; known: {known}")
    provider: Provider = RetryingProvider(factory(config), sleep=sleep, rng=rng)
    if config.cache_dir is not None:
        provider = CachedProvider(provider, config.cache_dir)
    return provider
