"""Retries with exponential backoff and jitter, as a wrapper around any provider.

Only transient failures are retried: 429, 408, 5xx, timeouts and dropped connections. Other
4xx mean the request itself is wrong, and sending it again would only spend money. The SDKs'
own retries are switched off (``max_retries=0`` on their clients) so these are the only ones,
and every request they make is counted.

Every retry is said, one line on the ``ghostei.providers`` logger (stderr by default): which
episode (``REQUEST_CONTEXT``, set by the runner), the attempt, the cause and the wait. An
error that is not transient by nature but comes back the same twice in a row (a 500 with the
same body: a model that cannot take the request) is not retried again.

A 429 is the endpoint's limit, not the request's: with a ``RateLimiter`` (shared by every
request to the endpoint, see ratelimit.py) the backoff it causes holds back every request in
flight, in this process and in the worker processes that share the limiter.
"""

from __future__ import annotations

import contextvars
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from .base import Completion, Message, Provider, ProviderConfig, ProviderError
from .ratelimit import RateLimiter

Sleep = Callable[[float], None]
RetryOn = Callable[[ProviderError], bool]

TOO_MANY_REQUESTS = 429
LOG = logging.getLogger("ghostei.providers")
# Who is asking (e.g. "case 3, agent t3a"), for the retry lines; set per episode by the runner.
REQUEST_CONTEXT: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="")


def is_transient(exc: ProviderError) -> bool:
    """Whether trying again may help: 429, 408, 5xx, timeouts, dropped connections."""
    return exc.retryable


def is_rate_limited(exc: ProviderError) -> bool:
    """Whether the endpoint said it is over its rate limit (HTTP 429)."""
    return exc.retryable and exc.status == TOO_MANY_REQUESTS


class RetryingProvider:
    """``inner`` retried on transient errors, up to ``config.max_retries`` times.

    The wait before retry ``n`` (from 0) is ``min(cap, base * 2**n)`` with equal jitter (a
    uniform draw in its upper half), so it grows exponentially yet parallel workers do not
    retry in lockstep. A ``Retry-After`` hint is honoured when longer, up to the same cap.
    ``sleep`` and ``rng`` are injectable so tests neither wait nor depend on chance.

    With a ``limiter``, every attempt first waits until the endpoint may be called, and a 429
    holds the endpoint back for the whole backoff, so that every request to it waits too.
    ``retry_on`` narrows which transient errors are retried (the endpoint check retries only
    rate limits: a dead server should be reported at once, a busy one waited for).
    """

    def __init__(
        self,
        inner: Provider,
        *,
        sleep: Sleep = time.sleep,
        rng: random.Random | None = None,
        limiter: RateLimiter | None = None,
        retry_on: RetryOn = is_transient,
    ) -> None:
        self.inner = inner
        self.sleep = sleep
        self.limiter = limiter
        self.retry_on = retry_on
        # Unseeded by default on purpose: jitter only spreads out retries in time, it never
        # changes what the model answers, and workers sharing a seed would retry in lockstep.
        self.rng = rng if rng is not None else random.Random()

    @property
    def config(self) -> ProviderConfig:
        """The wrapped provider's configuration."""
        return self.inner.config

    def __repr__(self) -> str:
        return f"RetryingProvider({self.inner!r}, max_retries={self.config.max_retries})"

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0 for the first)."""
        cap = self.config.backoff_cap
        ceiling = min(cap, self.config.backoff_base * 2.0**retry)
        wait = ceiling / 2 + self.rng.uniform(0, ceiling / 2)
        if retry_after is not None:
            wait = max(wait, retry_after)
        return min(cap, wait)

    def complete(self, messages: Sequence[Message]) -> Completion:
        """The inner provider's completion, retrying transient failures."""
        spent = 0
        retries = max(0, self.config.max_retries)
        waited: float | None = None  # the hold this call has already slept through itself
        last: tuple[int | None, str] | None = None
        for attempt in range(retries + 1):
            if self.limiter is not None:
                self.limiter.wait(waited)
            try:
                completion = self.inner.complete(messages)
            except ProviderError as exc:
                spent += exc.requests
                if not (exc.retryable and self.retry_on(exc)):
                    exc.requests = spent
                    raise
                delay = self.delay(attempt, exc.retry_after)
                if self.limiter is not None and exc.status == TOO_MANY_REQUESTS:
                    # The endpoint's limit: every request waits, even when this one gives up.
                    waited = self.limiter.hold(delay)
                answer = (exc.status, str(exc))
                # A status answered twice with the same body is the request, not the moment
                # (no rate limit or timeout says so): a third try would only cost time.
                same = answer == last and exc.status not in (None, TOO_MANY_REQUESTS, 408)
                last = answer
                if attempt == retries or same:
                    why = (
                        "the same answer twice"
                        if same
                        else f"{attempt + 1} attempt{'s' if attempt else ''}"
                    )
                    raise ProviderError(
                        f"{exc} (gave up after {why})",
                        status=exc.status,
                        retryable=False,  # already retried: the caller should not retry again
                        retry_after=exc.retry_after,
                        requests=spent,
                    ) from exc
                who = REQUEST_CONTEXT.get()
                LOG.warning(
                    "retry%s: attempt %d of %d failed (%s); next in %.1f s",
                    f" ({who})" if who else "",
                    attempt + 1,
                    retries + 1,
                    exc,
                    delay,
                )
                self.sleep(delay)
            else:
                return replace(completion, requests=spent + completion.requests)
        raise AssertionError("unreachable: the loop returns or raises")
