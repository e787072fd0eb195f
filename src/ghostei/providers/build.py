"""A provider by configuration: the registered base provider, then retries, then the cache."""

from __future__ import annotations

import random
import time

from .base import PROVIDERS, Provider, ProviderConfig, ProviderConfigError
from .cache import CachedProvider
from .ratelimit import RateLimiter, limiter_for
from .retry import RetryingProvider, RetryOn, Sleep, is_transient


def build_provider(
    config: ProviderConfig,
    *,
    sleep: Sleep | None = None,
    rng: random.Random | None = None,
    limiter: RateLimiter | None = None,
    retry_on: RetryOn = is_transient,
) -> Provider:
    """The provider named by ``config.provider``, wrapped in retries (of the errors
    ``retry_on`` accepts) and (when ``config.cache_dir`` is set) the response cache,
    outermost so a hit makes no request.

    Its retries share the process's rate limiter for the endpoint (``limiter_for``), so a 429
    slows down every request to it. A caller that injects ``sleep`` keeps time itself: its
    provider shares no limiter unless it is given one.
    """
    factory = PROVIDERS.get(config.provider)
    if factory is None:
        known = ", ".join(sorted(PROVIDERS))
        raise ProviderConfigError(f"unknown provider {config.provider!r}; known: {known}")
    if limiter is None and sleep is None:
        limiter = limiter_for(config)
    provider: Provider = RetryingProvider(
        factory(config), sleep=sleep or time.sleep, rng=rng, limiter=limiter, retry_on=retry_on
    )
    if config.cache_dir is not None:
        provider = CachedProvider(provider, config.cache_dir)
    return provider
