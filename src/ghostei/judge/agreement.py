"""Agreement between two judges on one run: confusion matrices and Cohen's kappa.

Episodes are paired by (agent, case). The confusion matrix counts every paired episode that
is not an ``error`` (an infrastructure failure is the same for every judge) over the outcome
labels and the two "no verdict" labels, rows by the first judge, columns by the second.
Cohen's kappa is computed on the episodes both judges labelled with an outcome label (TC,
FAS, PAS, BF), overall and per agent — and only between *blind* judges, neither of which saw
the other's conclusions: agreement with a judge that was shown the answer measures nothing.
When one of the two was not blind (``hybrid``, or LLM verdicts made seeing the rules'
findings), the matrices stay but every kappa is withheld (None) and the reason is given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..rundir import EpisodeRecord
from ..verdict import LABELS, Label

MATRIX_LABELS: tuple[Label, ...] = (*LABELS, "undetermined", "judge_error")


def confusion(
    pairs: Iterable[tuple[str, str]], labels: Sequence[str] = MATRIX_LABELS
) -> list[list[int]]:
    """``m[i][j]``: how many pairs the first judge labelled ``labels[i]``, the second
    ``labels[j]``; pairs with a label outside ``labels`` are not counted."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for a, b in pairs:
        if a in index and b in index:
            matrix[index[a]][index[b]] += 1
    return matrix


def cohen_kappa(pairs: Iterable[tuple[str, str]], labels: Sequence[str] = LABELS) -> float | None:
    """Cohen's kappa over the pairs where both labels are in ``labels``.

    ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement and ``p_e`` the agreement
    expected by chance from each judge's label frequencies. None when undefined: no pairs,
    or ``p_e = 1`` (both judges gave every episode one and the same label, so agreement
    cannot be told apart from chance).
    """
    kept = [(a, b) for a, b in pairs if a in labels and b in labels]
    n = len(kept)
    if n == 0:
        return None
    observed = sum(a == b for a, b in kept) / n
    expected = sum(
        (sum(a == k for a, _ in kept) / n) * (sum(b == k for _, b in kept) / n) for k in labels
    )
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


@dataclass(frozen=True)
class LabelAgreement:
    """One label, one judge against the other: how often each gave it, and together."""

    label: str
    first: int  # episodes the first judge gave this label
    second: int  # episodes the second judge gave this label
    both: int  # episodes both gave it

    @property
    def specific(self) -> float | None:
        """Specific agreement on this label: ``2 both / (first + second)``; None if unused."""
        given = self.first + self.second
        return 2 * self.both / given if given else None


@dataclass(frozen=True)
class Agreement:
    """Two judges over the same episodes."""

    first: str
    second: str
    labels: tuple[str, ...]
    matrix: list[list[int]]  # rows: first judge, columns: second judge, over ``labels``
    paired: int  # episodes in the matrix
    scored: int  # episodes both judges gave an outcome label (kappa's N)
    observed: float | None  # agreement over the scored episodes
    kappa: float | None
    per_label: list[LabelAgreement] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "judges": [self.first, self.second],
            "labels": list(self.labels),
            "matrix": self.matrix,
            "paired": self.paired,
            "scored": self.scored,
            "observed": self.observed,
            "kappa": self.kappa,
            "per_label": {
                la.label: {
                    "first": la.first,
                    "second": la.second,
                    "both": la.both,
                    "specific": la.specific,
                }
                for la in self.per_label
            },
        }


def agreement(first: str, second: str, pairs: Sequence[tuple[str, str]]) -> Agreement:
    """The agreement of two judges' label pairs."""
    matrix = confusion(pairs)
    scored = [(a, b) for a, b in pairs if a in LABELS and b in LABELS]
    observed = sum(a == b for a, b in scored) / len(scored) if scored else None
    per_label = [
        LabelAgreement(
            label, first=sum(matrix[i]), second=sum(row[i] for row in matrix), both=matrix[i][i]
        )
        for i, label in enumerate(MATRIX_LABELS)
    ]
    return Agreement(
        first=first,
        second=second,
        labels=MATRIX_LABELS,
        matrix=matrix,
        paired=sum(map(sum, matrix)),
        scored=len(scored),
        observed=observed,
        kappa=cohen_kappa(scored),
        per_label=per_label,
    )


@dataclass(frozen=True)
class Comparison:
    """Two judges on a run: overall and per agent, with the episodes not compared."""

    overall: Agreement
    per_agent: dict[str, Agreement]
    errors: int  # episodes that ended in error (no judge labels them)
    unpaired: int  # episodes only one of the record lists holds
    # Judges of the two that were not blind, each with why: kappa is withheld.
    not_blind: dict[str, str] = field(default_factory=dict)

    @property
    def blind(self) -> bool:
        """Whether both judges were blind (kappa is reported only then)."""
        return not self.not_blind

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            **self.overall.to_json(),
            "blind": self.blind,
            "not_blind": self.not_blind,
            "errors": self.errors,
            "unpaired": self.unpaired,
            "per_agent": {a: ag.to_json() for a, ag in self.per_agent.items()},
        }


def compare_judges(
    first: str,
    a: Iterable[EpisodeRecord],
    second: str,
    b: Iterable[EpisodeRecord],
    *,
    not_blind: Mapping[str, str] | None = None,
) -> Comparison:
    """The agreement of two judges' labellings of the same run's episodes.

    ``not_blind`` names the judges (of the two) that saw another's conclusions, with why:
    then every kappa is None (withheld).
    """
    told = dict(not_blind or {})

    def scored(ag: Agreement) -> Agreement:
        return replace(ag, kappa=None) if told else ag

    theirs = {r.key: r for r in b}
    mine = {r.key: r for r in a}
    pairs: dict[str, list[tuple[str, str]]] = {}
    errors = 0
    for key, r in mine.items():
        other = theirs.get(key)
        if other is None:
            continue
        if r.label == "error" or other.label == "error":
            errors += 1
            continue
        pairs.setdefault(r.agent, []).append((r.label, other.label))
    everything = [p for ps in pairs.values() for p in ps]
    return Comparison(
        overall=scored(agreement(first, second, everything)),
        per_agent={agent: scored(agreement(first, second, ps)) for agent, ps in pairs.items()},
        errors=errors,
        unpaired=len(mine.keys() ^ theirs.keys()),
        not_blind=told,
    )
