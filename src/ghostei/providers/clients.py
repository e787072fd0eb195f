"""SDK clients, one per process per endpoint configuration.

Building an ``openai.OpenAI`` or ``anthropic.Anthropic`` client loads a TLS context (some
35-55 ms of CPU), and every episode builds its providers afresh; the clients themselves are
thread-safe (one ``httpx.Client`` each, with its own pool of connections). So a process
keeps one client per SDK, endpoint, timeout and key, and every provider with that
configuration uses it: episodes save the construction and reuse open connections.

The key is part of what tells clients apart (a changed environment gets a client of its
own), as a hash: the key itself stays inside the client.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

MAX_CLIENTS = 32  # endpoints a process talks to; past this the oldest are let go

_CLIENTS: dict[tuple[Any, ...], Any] = {}
_LOCK = threading.Lock()


def shared_client(
    sdk: str, base_url: str | None, timeout: float, api_key: str, make: Callable[[], T]
) -> T:
    """The process's client of ``sdk`` for this endpoint, timeout and key; ``make()`` builds
    it the first time."""
    digest = hashlib.sha256(api_key.encode("utf-8")).hexdigest()
    key = (sdk, base_url, timeout, digest)
    with _LOCK:  # one construction per key, even when episodes start at once
        client = _CLIENTS.get(key)
        if client is None:
            if len(_CLIENTS) >= MAX_CLIENTS:
                del _CLIENTS[next(iter(_CLIENTS))]  # providers holding it keep it alive
            client = _CLIENTS[key] = make()
        found: T = client
        return found


def clear_clients() -> None:
    """Forget every kept client (the next provider builds a new one)."""
    with _LOCK:
        _CLIENTS.clear()
