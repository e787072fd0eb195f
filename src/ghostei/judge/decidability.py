"""What the rule judge can decide on a backend: per case, each predicate and the trigger.

``ghostei cases stats --backend`` prints it; a predicate that reads what the backend cannot
observe is undetermined there (:mod:`ghostei.observability`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..cases.schema import Case
from ..checks import decidable
from ..injection import build_injection, trigger_can_fire
from ..observability import Observability, case_observability
from .rules import PREDICATES


def case_decidability(case: Case, seen: Observability) -> dict[str, bool]:
    """Which of a case's predicates the rules decide on a backend in every episode, and
    whether its attack's trigger can fire there at all."""
    out = {name: decidable(getattr(case.checks, name), seen) for name in PREDICATES}
    trigger = build_injection(case).trigger
    out["trigger"] = trigger is None or trigger_can_fire(trigger, seen)
    return out


def decidability(cases: Sequence[Case], backend: str) -> dict[str, Any]:
    """Per case and over all: the share of cases whose predicates are rule-decidable on a
    backend, and the cases whose trigger never fires there."""
    per_case = {c.id: case_decidability(c, case_observability(backend, c)) for c in cases}
    n = len(cases) or 1
    return {
        "backend": backend,
        "decidable": {p: round(sum(d[p] for d in per_case.values()) / n, 4) for p in PREDICATES},
        "decidable_counts": {p: sum(d[p] for d in per_case.values()) for p in PREDICATES},
        "trigger_unsupported": [i for i, d in per_case.items() if not d["trigger"]],
        "cases": {
            str(i): {"decidable": {p: d[p] for p in PREDICATES}, "trigger": d["trigger"]}
            for i, d in per_case.items()
        },
    }
