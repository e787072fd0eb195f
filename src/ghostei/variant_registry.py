"""What an adaptive attack variant is, and the registry of variants by name.

The variants themselves (:mod:`ghostei.variants`) register here; the attack conditions
(:mod:`ghostei.attacks`) read it: the variants import only this module, so the conditions
may import the variants (to register them) without a circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .cases.schema import Case


@dataclass(frozen=True)
class AttackVariant:
    """An adaptive attack: which cases it fits and how it reshapes them."""

    name: str
    summary: str  # what the attacker does differently
    targets: str  # the defences it is built to get past
    fits: Callable[[Case], bool]
    apply: Callable[[Case], Case]
    # The device backends that can show it; ``refused`` says why the others cannot.
    backends: tuple[str, ...] = ("sim", "android")
    refused: str = ""


ATTACK_VARIANTS: dict[str, AttackVariant] = {}


def register_variant(variant: AttackVariant) -> AttackVariant:
    """Make a variant available as ``ghostei run --attack-variant NAME``."""
    ATTACK_VARIANTS[variant.name] = variant
    return variant
