"""Agreement between two judges on one run: confusion matrices and Cohen's kappa.

Episodes are paired by (agent, case). The confusion matrix counts every paired episode that
is not an ``error`` (an infrastructure failure is the same for every judge) over the outcome
labels and the two "no verdict" labels, rows by the first judge, columns by the second.
Cohen's kappa is computed on the episodes both judges labelled with an outcome label (TC,
FAS, PAS, BF), overall and per agent — and only between *blind* judges, neither of which saw
the other's conclusions: agreement with a judge that was shown the answer measures nothing.
When one of the two was not blind (``hybrid``, or LLM verdicts made seeing the rules'
findings), the matrices stay but every kappa is withheld (None) and the reason is given.

Kappa and the observed agreement come with a 95 % percentile-bootstrap interval (the scored
pairs resampled, 2,000 times, seed 0: reproducible to the last digit), and each judge's
episodes left out of them are counted by why (undetermined, judge_error).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..rundir import EpisodeRecord
from ..verdict import LABELS, Label

MATRIX_LABELS: tuple[Label, ...] = (*LABELS, "undetermined", "judge_error")
N_BOOT = 2000  # bootstrap resamples of an interval
SEED = 0
Interval = tuple[float, float]


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


def _kappa_of(counts: Mapping[tuple[str, str], int], labels: Sequence[str]) -> float | None:
    """Cohen's kappa from the counts of label pairs (all within ``labels``)."""
    n = sum(counts.values())
    if n == 0:
        return None
    observed = sum(k for (a, b), k in counts.items() if a == b) / n
    firsts: Counter[str] = Counter()
    seconds: Counter[str] = Counter()
    for (a, b), k in counts.items():
        firsts[a] += k
        seconds[b] += k
    expected = sum(firsts[k] * seconds[k] for k in labels) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def _percentile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, linearly interpolated (numpy's default)."""
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (pos - lo) * (ordered[hi] - ordered[lo])


def bootstrap_intervals(
    scored: Sequence[tuple[str, str]],
    labels: Sequence[str] = LABELS,
    *,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    level: float = 0.95,
) -> tuple[Interval | None, Interval | None]:
    """Percentile-bootstrap intervals of kappa and of the observed agreement over the scored
    pairs (resampled with replacement). A resample whose kappa is undefined is left out of
    kappa's; None where nothing is left (no pairs)."""
    if not scored:
        return None, None
    rng = random.Random(seed)
    kappas: list[float] = []
    observed: list[float] = []
    n = len(scored)
    for _ in range(n_boot):
        counts = Counter(rng.choices(scored, k=n))
        observed.append(sum(k for (a, b), k in counts.items() if a == b) / n)
        kappa = _kappa_of(counts, labels)
        if kappa is not None:
            kappas.append(kappa)
    tail = (1.0 - level) / 2

    def interval(values: list[float]) -> Interval | None:
        if not values:
            return None
        values.sort()
        return (_percentile(values, tail), _percentile(values, 1.0 - tail))

    return interval(kappas), interval(observed)


def cohen_kappa(pairs: Iterable[tuple[str, str]], labels: Sequence[str] = LABELS) -> float | None:
    """Cohen's kappa over the pairs where both labels are in ``labels``.

    ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement and ``p_e`` the agreement
    expected by chance from each judge's label frequencies. None when undefined: no pairs,
    or ``p_e = 1`` (both judges gave every episode one and the same label, so agreement
    cannot be told apart from chance).
    """
    return _kappa_of(Counter((a, b) for a, b in pairs if a in labels and b in labels), labels)


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
    kappa_ci: Interval | None = None  # 95 % percentile bootstrap
    observed_ci: Interval | None = None
    # Per judge (first, second): its paired episodes left out of kappa, by why (the label it
    # gave that is no outcome: undetermined, judge_error), whatever the other judge said.
    left_out: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "judges": [self.first, self.second],
            "labels": list(self.labels),
            "matrix": self.matrix,
            "paired": self.paired,
            "scored": self.scored,
            "observed": self.observed,
            "observed_ci": list(self.observed_ci) if self.observed_ci else None,
            "kappa": self.kappa,
            "kappa_ci": list(self.kappa_ci) if self.kappa_ci else None,
            "intervals": {"method": "percentile bootstrap", "n_boot": N_BOOT, "seed": SEED},
            "left_out": self.left_out,
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
    kappa_ci, observed_ci = bootstrap_intervals(scored)
    left_out = {
        first: dict(Counter(a for a, _ in pairs if a not in LABELS)),
        second: dict(Counter(b for _, b in pairs if b not in LABELS)),
    }
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
        kappa_ci=kappa_ci,
        observed_ci=observed_ci,
        left_out=left_out,
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
        return replace(ag, kappa=None, kappa_ci=None) if told else ag

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
