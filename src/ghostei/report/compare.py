"""Across runs: a leaderboard of (run, agent) by VR, and the paired comparison of two runs.

The leaderboard shows VR exposed (VR over the episodes whose attack reached the agent) and
the exposed share beside VR: resisting an attack the agent never saw says nothing of it. Its
rates carry Wilson intervals, as every report's do; the paired comparison's differences carry
paired percentile-bootstrap intervals (``metrics.paired_difference``): a difference of two
rates over the same episodes has no closed form that respects the pairing.

``--format csv`` of ``ghostei compare`` is the leaderboard, or with ``--paired`` the paired
rows (agent, metric, a, b, diff, bounds, n): the table a spreadsheet wants in each case.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from ..agents.frameworks import MODEL_AGENTS
from ..attacks import STANDARD
from ..cases.identity import case_digest
from ..defences import agent_labels, base_agent
from ..judge.store import JudgeChoice, judged_records, used_judges
from ..metrics import CI_METRICS, PairedDifference, paired_difference
from ..rundir import EpisodeRecord, RunDir
from .fitted import FittedColumn, FittedTable
from .tables import (
    CSV_COLUMNS,
    EXPOSURE_TITLES,
    INTERVAL_METHOD,
    INTERVALS_ARE,
    RATE_TITLES,
    Scored,
    attack_of,
    ci_cell,
    csv_text,
    md_table,
    metric_cells,
    number,
    pct,
    rate,
    with_ci,
)


@dataclass(frozen=True)
class RunEntry:
    """One run as compared: its display name, the model of its manifest, its judged records."""

    name: str
    path: Path
    model: str | None
    agents: list[str]  # the run's agent order
    records: list[EpisodeRecord]
    warnings: tuple[str, ...] = ()  # e.g. a torn last line left out of the records
    attack: str = STANDARD  # the run's attack condition (``ghostei.attacks``)
    cases: int | None = None  # the cases of its manifest
    # Case id -> digest of the case's content (``ghostei.cases.identity``): what an id named
    # in this run. Empty: not known, and a paired comparison trusts the ids.
    digests: dict[int, str] = field(default_factory=dict)
    # Who gave its LLM judge's verdicts (``JudgeIdentity.describe()``; none for the rules).
    judged_by: tuple[str, ...] = ()

    def model_of(self, agent: str) -> str | None:
        """The run's model, for the agents that used one (reference agents call none)."""
        used = base_agent(agent) in MODEL_AGENTS or any(
            r.usage.get("requests", 0) for r in self.records if r.agent == agent
        )
        return self.model if used else None


def load_run(
    path: Path, judge: str, name: str | None = None, choice: JudgeChoice | None = None
) -> RunEntry:
    """A run folder's records as ``judge`` labels them (an LLM judge's: of the stored judge
    ``choice`` names).

    Raises RunDirError if it is no run, a record is corrupt, or the run holds verdicts of
    several LLM judges and ``choice`` names none of them (AmbiguousJudge).
    """
    run = RunDir(path)
    manifest = run.manifest()
    config = manifest.get("config") or {}
    model = (config.get("model") or {}).get("model")
    records = judged_records(run, judge, choice)
    judged_by = tuple(i.describe() for i in used_judges(run, judge, choice))
    return RunEntry(
        name=name or path.name or str(path),
        path=path,
        model=model if isinstance(model, str) else None,
        agents=agent_labels(config),
        records=records,
        warnings=tuple(torn.describe() for torn in run.torn_lines()),
        attack=attack_of(config),
        cases=len(manifest.get("cases") or []),
        digests={case.id: case_digest(case) for case in run.cases()},
        judged_by=judged_by,
    )


@dataclass(frozen=True)
class LeaderRow:
    """One agent of one run on the leaderboard."""

    run: str
    agent: str
    model: str | None
    scored: Scored
    attack: str = STANDARD  # the run's attack condition

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "agent": self.agent,
            "model": self.model,
            "attack": self.attack,
            **self.scored.to_json(),
        }


def leaderboard(runs: Sequence[RunEntry]) -> list[LeaderRow]:
    """Every (run, agent), least vulnerable first: VR ascending (undefined last), then TC."""
    rows = []
    for entry in runs:
        seen = dict.fromkeys([*entry.agents, *(r.agent for r in entry.records)])
        for agent in seen:
            records = [r for r in entry.records if r.agent == agent]
            if records:
                scored = Scored.of(records)
                model = entry.model_of(agent)
                rows.append(LeaderRow(entry.name, agent, model, scored, entry.attack))

    def key(row: LeaderRow) -> tuple[bool, float, float]:
        vr = row.scored.metrics.vr
        return (vr is None, vr or 0.0, -row.scored.metrics.tc)

    return sorted(rows, key=key)  # stable: ties keep the runs' order


# The paired bootstrap's resamples and seed: a comparison is reproducible to the last digit.
N_BOOT, SEED = 2000, 0


class CasesDiffer(ValueError):
    """Two runs name different cases by one id: pairing their episodes would compare apples
    with oranges (e.g. generated suites of two seeds numbered alike)."""


def same_cases(a: RunEntry, b: RunEntry) -> None:
    """Raise CasesDiffer when a case id of both runs' episodes names different content."""
    shared = {r.case for r in a.records} & {r.case for r in b.records}
    differ = sorted(
        i for i in shared if i in a.digests and i in b.digests and a.digests[i] != b.digests[i]
    )
    if differ:
        shown = ", ".join(map(str, differ[:5])) + (" …" if len(differ) > 5 else "")
        raise CasesDiffer(
            f"--paired: {a.name} and {b.name} hold different cases under the same id "
            f"({len(differ)} of {len(shared)}: {shown}); pair runs of the same cases (for a "
            "generated suite: the same seed and options)"
        )


def paired_rows(
    a: RunEntry, b: RunEntry, *, n_boot: int = N_BOOT, seed: int = SEED
) -> list[tuple[str, PairedDifference]]:
    """For each agent of both runs and each rate: B minus A over the episodes scored in both.

    Raises CasesDiffer when the runs name different cases by one id."""
    same_cases(a, b)
    agents_b = {r.agent for r in b.records}
    agents = [x for x in dict.fromkeys(r.agent for r in a.records) if x in agents_b]
    rows = []
    for agent in agents:
        ra = [r for r in a.records if r.agent == agent]
        rb = [r for r in b.records if r.agent == agent]
        for metric in CI_METRICS:
            rows.append((agent, paired_difference(ra, rb, metric, n_boot=n_boot, seed=seed)))
    return rows


# ----- rendering ------------------------------------------------------------------------------


def compare_json(
    judge: str,
    runs: Sequence[RunEntry],
    rows: Sequence[LeaderRow],
    paired: Sequence[tuple[str, PairedDifference]] | None,
) -> dict[str, Any]:
    """The leaderboard (and the paired comparison) as JSON."""
    data: dict[str, Any] = {
        "judge": judge,
        "runs": [
            {
                "name": e.name,
                "path": str(e.path),
                "model": e.model,
                "attack": e.attack,
                "judged_by": list(e.judged_by),
            }
            for e in runs
        ],
        "intervals": INTERVAL_METHOD,
        "leaderboard": [row.to_json() for row in rows],
    }
    if paired is not None:
        data["paired"] = {
            "a": runs[0].name,
            "b": runs[1].name,
            "intervals": {"method": "paired percentile bootstrap", "n_boot": N_BOOT, "seed": SEED},
            "rows": [{"agent": agent, **d.to_json()} for agent, d in paired],
        }
    return data


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:+.1f} pp"


def _signed_ci(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f"[{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"


def _paired_cells(agent: str, d: PairedDifference) -> list[str]:
    return [agent, RATE_TITLES[d.metric], pct(d.a), pct(d.b), _signed(d.diff), _signed_ci(d.ci)]


PAIRED_HEADER = ("agent", "metric", "A", "B", "B − A", "95% CI", "n")
# The leaderboard's rates, each with its interval.
_BOARD_RATES = ("tc", "vr", *EXPOSURE_TITLES)


def compare_markdown(
    runs: Sequence[RunEntry],
    rows: Sequence[LeaderRow],
    paired: Sequence[tuple[str, PairedDifference]] | None,
    judge: str,
) -> str:
    """The leaderboard as Markdown, and the paired comparison when asked."""
    header = ["run", "agent", "model", "N", "TC", "VR", *EXPOSURE_TITLES.values()]
    body = [
        [
            row.run,
            row.agent,
            row.model or "—",
            str(row.scored.metrics.n),
            *(with_ci(rate(row.scored.metrics, k), row.scored.ci[k]) for k in _BOARD_RATES),
        ]
        for row in rows
    ]
    parts = [
        "# GhostEI leaderboard",
        f"Judge: {judge}. Sorted by VR, least vulnerable first; brackets are {INTERVALS_ARE}. "
        "VR exposed: VR over the episodes whose attack reached the agent; exposed: their share.",
        md_table(header, body, right=3),
    ]
    if paired is not None:
        parts += [
            f"## Paired: A = {runs[0].name}, B = {runs[1].name}",
            "Over the (agent, case) episodes scored in both runs; pp = percentage points. "
            f"The 95% CI of a difference is a paired percentile bootstrap ({N_BOOT} joint "
            f"resamples of the pairs, seed {SEED}).",
            md_table(PAIRED_HEADER, [[*_paired_cells(a, d), str(d.n)] for a, d in paired], 2),
        ]
    return "\n\n".join(parts) + "\n"


def _bounds(ci: tuple[float, float] | None) -> list[str]:
    return [number(ci[0]), number(ci[1])] if ci else ["", ""]


LEADER_CSV = ("run", "model", *CSV_COLUMNS[2:])
PAIRED_CSV = ("agent", "metric", "a", "b", "diff", "diff_lo", "diff_hi", "n")


def compare_csv(
    rows: Sequence[LeaderRow], paired: Sequence[tuple[str, PairedDifference]] | None
) -> str:
    """The leaderboard as CSV, or the paired rows when a paired comparison was asked for."""
    if paired is not None:
        return csv_text(
            PAIRED_CSV,
            (
                [agent, d.metric, number(d.a), number(d.b), number(d.diff), *_bounds(d.ci), d.n]
                for agent, d in paired
            ),
        )
    out = [
        [row.run, row.model or "", row.agent, *metric_cells(row.scored), row.attack] for row in rows
    ]
    return csv_text(LEADER_CSV, out)


def compare_tables(
    runs: Sequence[RunEntry],
    rows: Sequence[LeaderRow],
    paired: Sequence[tuple[str, PairedDifference]] | None,
    judge: str,
) -> list[RenderableType]:
    """The leaderboard (and the paired comparison) for a terminal."""
    title = f"GhostEI leaderboard (judge: {judge}; least vulnerable first)"
    # The rank and agent start every part of a narrow table; the rank tells the rows apart.
    columns = [FittedColumn("#"), *(FittedColumn(c, name=True) for c in ("agent", "run", "model"))]
    columns += [FittedColumn(c) for c in ("N", "TC", "VR", *EXPOSURE_TITLES.values())]
    table = FittedTable(title, columns, keys=2)
    for i, row in enumerate(rows, 1):
        m, ci = row.scored.metrics, row.scored.ci
        table.add_row(
            str(i),
            row.agent,
            row.run,
            row.model or "—",
            str(m.n),
            *(ci_cell(rate(m, k), ci[k]) for k in _BOARD_RATES),
        )
    out: list[RenderableType] = [
        table,
        Text(f"Dim, under each rate: {INTERVALS_ARE}.", style="dim"),
    ]
    if paired is not None:
        title = f"paired: A = {runs[0].name}, B = {runs[1].name} (pp: percentage points)"
        columns = [FittedColumn(c, name=i < 2) for i, c in enumerate(PAIRED_HEADER)]
        t = FittedTable(title, columns, keys=2)
        last = None
        for agent, d in paired:
            if last is not None and agent != last:
                t.add_section()
            last = agent
            t.add_row(*_paired_cells(agent, d), str(d.n))
        out += [t, Text(f"95% CI: paired percentile bootstrap ({N_BOOT} resamples, seed {SEED}).")]
    return out
