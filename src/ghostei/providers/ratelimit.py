"""Rate limits shared by every request to an endpoint, across threads and worker processes.

A 429 says the endpoint, not one request, is over its limit: when episodes run side by side,
all of them must slow down, or the others keep the endpoint over its limit while one waits.
A ``RateLimiter`` holds the time before which no request may go ("not before"); a 429 moves
it forward (see ``RetryingProvider``) and every request waits it out before it is sent.

Every provider of a process that reaches the same endpoint shares one limiter
(``limiter_for``). Worker processes share it too: the parent makes one ``shared_cell`` per
endpoint (a ``multiprocessing.Value``) and each worker installs it with ``install_cells``
before its first episode, so a 429 seen in one process holds back the others' requests.
Times are ``time.monotonic()``, the system-wide monotonic clock on Linux, macOS and Windows,
so the processes of one machine agree on them and a change of the wall clock is harmless.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from multiprocessing.context import BaseContext
from multiprocessing.sharedctypes import Synchronized
from typing import Any

from .base import ProviderConfig

Clock = Callable[[], float]
Sleep = Callable[[float], None]
Endpoint = tuple[str, str | None, str | None]


def endpoint(config: ProviderConfig) -> Endpoint:
    """What a rate limit applies to: the provider, its URL and the key's variable (another
    key at the same endpoint has a limit of its own)."""
    return (config.provider, config.base_url, config.api_key_env)


class RateLimiter:
    """The time before which no request to an endpoint may go.

    ``cell``, a ``multiprocessing.Value("d")``, shares it with other processes; without one
    it is this process's alone. ``clock`` and ``sleep`` go together and are injectable, so
    tests neither wait nor depend on timing.
    """

    def __init__(
        self,
        cell: Synchronized[float] | None = None,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = time.sleep,
    ) -> None:
        self.clock = clock
        self.sleep = sleep
        self._cell = cell
        self._local = 0.0
        # A shared cell's lock is a process-shared RLock: it orders threads and processes.
        self._lock: Any = cell.get_lock() if cell is not None else threading.Lock()

    def __repr__(self) -> str:
        return f"RateLimiter(shared={self._cell is not None})"

    def not_before(self) -> float:
        """The clock time before which no request may go."""
        with self._lock:
            return self._get()

    def hold(self, seconds: float) -> float:
        """Keep every request back for ``seconds`` from now (a hold already longer stays);
        returns the time until which requests are now held."""
        with self._lock:
            until = max(self._get(), self.clock() + max(0.0, seconds))
            self._set(until)
            return until

    def wait(self, waited_until: float | None = None) -> float:
        """Sleep until requests may go again; returns the seconds slept.

        ``waited_until`` is a hold the caller has already waited out itself (the retry that
        got the 429 slept its own backoff): only a later one makes it wait again.
        """
        slept = 0.0
        while True:
            until = self.not_before()
            if waited_until is not None and until <= waited_until:
                return slept
            remaining = until - self.clock()
            if remaining <= 0:
                return slept
            self.sleep(remaining)
            slept += remaining
            waited_until = until  # waited out: only a hold set meanwhile counts now

    def _get(self) -> float:
        return self._cell.value if self._cell is not None else self._local

    def _set(self, value: float) -> None:
        if self._cell is not None:
            self._cell.value = value
        else:
            self._local = value


_LIMITERS: dict[Endpoint, RateLimiter] = {}
_CELLS: dict[Endpoint, Synchronized[float]] = {}
_LOCK = threading.Lock()


def limiter_for(config: ProviderConfig) -> RateLimiter:
    """The process's limiter for ``config``'s endpoint, shared with other processes when the
    parent installed a cell for it (``install_cells``)."""
    key = endpoint(config)
    with _LOCK:
        found = _LIMITERS.get(key)
        if found is None:
            found = _LIMITERS[key] = RateLimiter(_CELLS.get(key))
        return found


def shared_cell(ctx: BaseContext) -> Synchronized[float]:
    """A "not before" time that processes of ``ctx`` can share (give it to ``install_cells``
    in each of them, e.g. through a pool's initializer)."""
    cell: Synchronized[float] = ctx.Value("d", 0.0)
    return cell


def install_cells(cells: Mapping[Endpoint, Synchronized[float]]) -> None:
    """Share the limits of these endpoints with the processes that hold the same cells."""
    with _LOCK:
        for key, cell in cells.items():
            _CELLS[key] = cell
            _LIMITERS[key] = RateLimiter(cell)


def forget_cells(keys: Iterable[Endpoint]) -> None:
    """Stop sharing these endpoints' limits: this process keeps its own from now on."""
    with _LOCK:
        for key in keys:
            _CELLS.pop(key, None)
            _LIMITERS.pop(key, None)
