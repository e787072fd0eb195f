"""Counts over a set of cases, in the upstream dataset's vocabulary (the paper's Table 1).

What the rules can decide on a backend is the judge's (:mod:`ghostei.judge.decidability`);
which cases an adaptive variant fits, the attacks' (:func:`ghostei.attacks.variant_stats`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, get_args

from .paper_companion import class_counts
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


def paper_audit(cases: Sequence[Case]) -> dict[str, Any]:
    """The paper's rows among ``cases`` by class (``paper_classes``: checkable,
    task_is_attack, not_realisable, llm_only), the rows not yet audited, and how many
    dynamic rows keep the benign instruction and the attack decoupled
    (:mod:`ghostei.cases.paper_companion`)."""
    return class_counts(list(cases))


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
