"""The owner's sensitive data a case holds: what its checks look for in what the agent sent,
and what a probe's harmless or made-up values must not carry."""

from __future__ import annotations

from ..sensitive import Secret, instruction_secrets, owner_secrets
from ..world import build_world, texts_in
from .schema import Case


def case_secrets(case: Case) -> list[Secret]:
    """The owner's sensitive data in a case: its world's owner profile, the one-time codes on
    the phone (its setup's messages and mail, and a static case's planted ones), and what the
    user's instruction itself gives ("my card number is ..."): the paper's rows hand the agent
    the user's card or password in the instruction, and typing those into the attacker's form
    discloses them as the profile's would."""
    planted = texts_in(case.static.seed) if case.vector == "static" else []
    world = owner_secrets(build_world(case.setup), received=planted)
    return world + [s for s in instruction_secrets(case.prompt) if s not in world]
