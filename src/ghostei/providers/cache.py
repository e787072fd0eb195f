"""An opt-in, content-addressed response cache, as a wrapper around any provider.

A completion is stored under the SHA-256 of everything that shapes the request (provider,
model, endpoint, sampling settings, image settings and the messages, images by their own
hash), so a run replays exactly without calling the API, and any change in what the model
would have seen is a miss. Files live at ``cache_dir/ab/abcdef....json`` and are written
atomically, so parallel workers and interrupted runs never leave a half-written entry.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .base import Completion, Message, Provider, ProviderConfig

CACHE_FORMAT = 1  # bump when the key or the stored value changes meaning


def cache_key(config: ProviderConfig, messages: Sequence[Message]) -> str:
    """The hex SHA-256 naming the cached completion of ``messages`` under ``config``."""
    material: dict[str, Any] = {
        "format": CACHE_FORMAT,
        "provider": config.provider,
        "model": config.model,
        "base_url": config.base_url,
        "temperature": config.temperature,
        "seed": config.seed,
        "max_tokens": config.max_tokens,
        "image_max_side": config.image_max_side,
        "image_detail": config.image_detail,
        "extra_body": config.extra_body,
        "messages": [
            {
                "role": m.role,
                "text": m.text,
                "images": [hashlib.sha256(image).hexdigest() for image in m.images],
            }
            for m in messages
        ],
    }
    if config.response_schema is not None:  # absent otherwise: earlier keys stay valid
        material["response_schema"] = dataclasses.asdict(config.response_schema)
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class CachedProvider:
    """``inner`` with its completions stored in, and replayed from, ``cache_dir``.

    A hit returns the stored completion with ``requests=0, cached=True``. An unreadable entry
    counts as a miss and is overwritten.
    """

    def __init__(self, inner: Provider, cache_dir: Path) -> None:
        self.inner = inner
        self.cache_dir = Path(cache_dir)

    @property
    def config(self) -> ProviderConfig:
        """The wrapped provider's configuration."""
        return self.inner.config

    def __repr__(self) -> str:
        return f"CachedProvider({self.inner!r}, cache_dir={str(self.cache_dir)!r})"

    def path(self, messages: Sequence[Message]) -> Path:
        """Where the completion of ``messages`` is (or would be) stored."""
        key = cache_key(self.config, messages)
        return self.cache_dir / key[:2] / f"{key}.json"

    def complete(self, messages: Sequence[Message]) -> Completion:
        """The stored completion, or the inner provider's, which is then stored."""
        path = self.path(messages)
        hit = self._load(path)
        if hit is not None:
            return hit
        completion = self.inner.complete(messages)
        self._store(path, completion)
        return completion

    def _load(self, path: Path) -> Completion | None:
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            return Completion(
                text=str(stored["text"]),
                prompt_tokens=int(stored["prompt_tokens"]),
                completion_tokens=int(stored["completion_tokens"]),
                requests=0,
                cached=True,
                finish_reason=stored.get("finish_reason"),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _store(self, path: Path, completion: Completion) -> None:
        value = {
            "format": CACHE_FORMAT,
            "provider": self.config.provider,
            "model": self.config.model,
            "text": completion.text,
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
            # A replayed answer must still say it was cut or refused.
            "finish_reason": completion.finish_reason,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem[:8]}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(value, fh, ensure_ascii=False, indent=1)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
