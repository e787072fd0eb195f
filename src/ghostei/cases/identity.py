"""What makes two cases the same case: a digest of their content, and the id a generated case
takes from it.

A case's id is only a name; its content (prompt, world, attack, checks) is what an episode
faced. Generated cases are numbered by this digest, so the same content gets the same id
whatever the seed that drew it, and different content practically never shares one; a paired
comparison of two runs checks it before pairing episodes by id.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .schema import Case

# Generated ids live above the built-in and the paper's suites (1-110, 201-310) and below
# 2**63: ten decimal digits, so a clash between two different cases is a one in 10**10 draw.
GENERATED_IDS = (1_000_000_000, 9_999_999_999)


def content_digest(data: dict[str, Any]) -> str:
    """The SHA-256 of a case's JSON without its ``id`` (keys sorted): its content's name."""
    body = {k: v for k, v in data.items() if k != "id"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def case_digest(case: Case) -> str:
    """:func:`content_digest` of a loaded case (as its JSON gives it, defaults included)."""
    return content_digest(case.model_dump(mode="json", by_alias=True))


def generated_id(digest: str) -> int:
    """The id a generated case takes from its content digest."""
    low, high = GENERATED_IDS
    return low + int(digest[:16], 16) % (high - low + 1)
