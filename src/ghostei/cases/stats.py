"""Counts over a set of cases, in the upstream dataset's vocabulary (the paper's Table 1)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, get_args

from ..attacks import ATTACK_VARIANTS
from ..checks import decidable
from ..injection import build_injection, trigger_can_fire
from ..judge.rules import PREDICATES
from ..observability import Observability, case_observability
from .schema import APP_DOMAINS, RISK_DOMAINS, VECTORS, Case, CaseType, UseDynamic

CASE_TYPES: tuple[str, ...] = get_args(CaseType)
USE_DYNAMIC: tuple[str, ...] = get_args(UseDynamic)


def _counts(values: Iterable[str], vocabulary: Sequence[str] = ()) -> dict[str, int]:
    """Every vocabulary entry (zero included, in its order), then other values by count."""
    counter = Counter(values)
    known = {name: counter.pop(name, 0) for name in vocabulary}
    rest = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
    return {**known, **dict(rest)}


def case_stats(cases: Sequence[Case]) -> dict[str, Any]:
    """How many cases of each kind, attack vector, risk domain, app domain and app.

    Risk domains are multi-label (a case counts in each of its domains) and so are apps (a
    case counts for each app it lists, "System UI" included); ``overlay_page`` splits the
    overlay attacks into data capture (a phishing page) and consent flips.
    """
    overlays = [c for c in cases if c.use_dynamic == "Overlay Attack"]
    with_page = sum(bool(c.extra.get("use_page")) for c in overlays)
    return {
        "total": len(cases),
        "case_type": _counts((c.case_type for c in cases), CASE_TYPES),
        "use_dynamic": _counts((c.use_dynamic for c in cases), USE_DYNAMIC),
        "overlay_page": {"true": with_page, "false": len(overlays) - with_page},
        "risk": _counts((r for c in cases for r in c.risks), RISK_DOMAINS),
        "app_domain": _counts((c.app_domain for c in cases), APP_DOMAINS),
        "app": _counts(app for c in cases for app in dict.fromkeys(c.app)),
        "matrix": matrix_coverage(cases),
    }


def matrix_coverage(cases: Sequence[Case]) -> dict[str, Any]:
    """The threat matrix: cases per vector, app domain and risk domain (a case counts in a
    cell for each of its risk domains), and how many of the 196 cells hold any."""
    cells = {v: {d: dict.fromkeys(RISK_DOMAINS, 0) for d in APP_DOMAINS} for v in VECTORS}
    for c in cases:
        row = cells[c.vector].get(c.app_domain)
        for risk in c.risks:
            if row is not None and risk in row:
                row[risk] += 1
    counts = [n for by_domain in cells.values() for row in by_domain.values() for n in row.values()]
    return {
        "cells": cells,
        "covered": sum(n > 0 for n in counts),
        "total": len(counts),
        "min_per_cell": min(counts),
    }


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


def id_ranges(ids: Sequence[int]) -> str:
    """Case ids compactly, e.g. ``1-3, 7, 9-10``."""
    parts: list[str] = []
    ordered = sorted(set(ids))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ", ".join(parts)
