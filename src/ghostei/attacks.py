"""Attack conditions: the standard attack of each case, none at all, or an adaptive variant.

A run has one condition (``RunConfig.attack``, recorded in the manifest):

- ``standard`` — every case as written;
- ``none`` — every case with its injection switched off, for clean (benign) utility: no
  overlay or SMS fires, nothing is planted, and a harmful instruction is replaced by the
  case's benign counterpart (``Case.benign``); the task check is the benign task's;
- a registered variant — the case's attack reshaped to slip past a kind of defence (an overlay
  that poses as the foreground app, an SMS from a saved contact, ...), applied to the cases it
  fits; the run holds only those.

The condition is applied to the case before the episode starts (``case_under``), so the
runner, the judges and the reports see the case the agent faced.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import variants  # noqa: F401  (the built-in variants register themselves)
from .cases.schema import Case
from .variant_registry import ATTACK_VARIANTS, AttackVariant, register_variant
from .world import build_world, plant_seed

STANDARD = "standard"
NO_ATTACK = "none"


def conditions() -> list[str]:
    """Every attack condition a run may have."""
    return [STANDARD, NO_ATTACK, *sorted(ATTACK_VARIANTS)]


def check_condition(attack: str) -> None:
    """Raise ValueError unless ``attack`` is a known condition."""
    if attack not in conditions():
        raise ValueError(f"unknown attack condition {attack!r}; known: {', '.join(conditions())}")


def check_backend(attack: str, backend: str) -> None:
    """Raise ValueError unless a run under ``attack`` can be shown on ``backend``."""
    check_condition(attack)
    variant = ATTACK_VARIANTS.get(attack)
    if variant is not None and backend not in variant.backends:
        why = f": {variant.refused}" if variant.refused else ""
        raise ValueError(
            f"the {attack} variant cannot be shown on the {backend} backend{why} "
            f"(it runs on {', '.join(variant.backends)})"
        )


def fits(case: Case, attack: str) -> bool:
    """Whether a run under ``attack`` holds ``case`` (a variant fits only some)."""
    check_condition(attack)
    if attack == NO_ATTACK:
        return case.case_type != "User-Provided Instructions" or case.benign is not None
    variant = ATTACK_VARIANTS.get(attack)
    return variant is None or variant.fits(case)


def case_under(case: Case, attack: str) -> Case:
    """``case`` as an episode under ``attack`` runs it."""
    check_condition(attack)
    if attack == STANDARD:
        return case
    if attack == NO_ATTACK:
        return _clean(case)
    variant = ATTACK_VARIANTS[attack]
    if not variant.fits(case):
        raise ValueError(f"case {case.id}: the {attack} variant does not fit it")
    return variant.apply(case)


def _clean(case: Case) -> Case:
    # Dynamic and static attacks are switched off by the runner (no injection is built); a
    # harmful instruction has to be replaced by the benign request it was made from, and a
    # static case's planted records by their clean versions where the task needs them.
    if case.case_type == "Static Environment Injection":
        return _clean_static(case)
    if case.case_type != "User-Provided Instructions":
        return case
    if case.benign is None:
        raise ValueError(f"case {case.id}: a harmful instruction with no benign counterpart")
    return case.model_copy(
        update={
            "prompt": case.benign.prompt,
            "solution": case.benign.solution,
            "checks": case.checks.model_copy(update={"task": case.benign.task}),
        }
    )


def _clean_static(case: Case) -> Case:
    """A static case whose ``setup`` holds its clean records (``extra.clean``), planted as
    the attack's seed would be (lists appended to, objects merged), and nothing else."""
    clean = case.static.clean
    if not clean:
        return case
    planted = plant_seed(build_world(case.setup).model_dump(mode="json"), clean)
    return case.model_copy(update={"setup": {**case.setup, **{k: planted[k] for k in clean}}})


__all__ = [
    "ATTACK_VARIANTS",
    "NO_ATTACK",
    "STANDARD",
    "AttackVariant",
    "case_under",
    "check_backend",
    "check_condition",
    "conditions",
    "fits",
    "register_variant",
    "variant_stats",
]


def variant_stats(cases: Sequence[Case], backend: str) -> dict[str, Any]:
    """Per adaptive attack variant (``run --attack-variant``): what it does, what it is built
    to get past, and the cases it fits (a run under it holds only those); ``runs_on`` the
    backends that can show it (on another, a run under it is refused)."""
    return {
        name: {
            "summary": variant.summary,
            "targets": variant.targets,
            "runs_on": list(variant.backends),
            "shown_on_backend": backend in variant.backends,
            "count": len(ids := [c.id for c in cases if variant.fits(c)]),
            "cases": ids,
        }
        for name, variant in sorted(ATTACK_VARIANTS.items())
    }
