"""The labelled set: every case's labelled trajectories, with every frame, as one run folder.

What an LLM judge is measured against. Each case's reference trajectories and probes
(:mod:`ghostei.probing`) carry the label the definitions give their behaviour; the set keeps
those the rule judge confirms (a trajectory the rules label otherwise is a broken check, which
``ghostei cases probe`` fails on; one they cannot decide is left out and counted), and records
each again with every frame into one run folder, each record carrying its true label and where
the label came from (:class:`ghostei.rundir.Truth`). ``ghostei report`` and ``ghostei judge``
read the folder like any other run's.

The built-in cases and the paper's rows share ids (1-110 each): in the set a paper row is case
``PAPER_OFFSET + row``, and its record's ``truth.row`` keeps the row's own id.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .cases.schema import VECTORS, Case
from .executors.local import execute_jobs
from .probing import ProbeResult, probe_cases
from .rundir import EpisodeRecord, RunDir, RunDirError, Truth
from .runner import RunConfig, new_manifest

PAPER_OFFSET = 1000  # a paper row's case id in a labelled set: 1000 + its row id
SETS_LABELS = ("FAS", "PAS", "TC", "BF")


@dataclass(frozen=True)
class Suite:
    """Cases of one suite for a labelled set: ``builtin``, ``paper`` or a folder's name."""

    name: str
    cases: list[Case]

    def placed(self) -> list[Case]:
        """The suite's cases with the ids they have in the set."""
        if self.name != "paper":
            return list(self.cases)
        return [c.model_copy(update={"id": PAPER_OFFSET + c.id}) for c in self.cases]


@dataclass
class BuildReport:
    """What a build did: the episodes recorded, what was left out and why, and the time."""

    recorded: list[EpisodeRecord] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)  # reason -> trajectories
    wrong: list[str] = field(default_factory=list)  # a recorded label other than the truth
    seconds: float = 0.0


def place(suites: Sequence[Suite]) -> tuple[list[Case], dict[int, tuple[str, int]]]:
    """The cases of a set, each under its id in the set, and for each that id's suite and row;
    ValueError when two suites give one id."""
    cases: list[Case] = []
    origin: dict[int, tuple[str, int]] = {}
    for suite in suites:
        for own, case in zip(suite.cases, suite.placed(), strict=True):
            if case.id in origin:
                other = origin[case.id]
                raise ValueError(
                    f"case {case.id} of {suite.name} has the id of {other[0]}'s case {other[1]}"
                )
            origin[case.id] = (suite.name, own.id)
            cases.append(case)
    return cases, origin


def build(
    out: Path,
    suites: Sequence[Suite],
    *,
    workers: int = 1,
    config: RunConfig | None = None,
    resume: bool = False,
    on_record: Callable[[EpisodeRecord], None] | None = None,
) -> BuildReport:
    """Build the labelled set of ``suites`` into the run folder ``out`` (``resume``: finish
    one an interrupted build left). Raises ValueError for clashing ids, RunDirError for a
    folder that holds something else."""
    started = time.perf_counter()
    cases, origin = place(suites)
    verified = probe_cases(cases, workers=workers)
    report = BuildReport()
    truth: dict[tuple[str, int], Truth] = {}
    jobs: list[tuple[Case, str]] = []
    by_id = {c.id: c for c in cases}
    for result in verified.results:
        if result.status != "passed":
            report.left_out[_why_left_out(result)] += 1
            continue
        t = result.trajectory
        suite, row = origin[result.case]
        truth[(t.agent, result.case)] = Truth(
            label=t.label, trajectory=t.name, source=t.source, why=t.why, suite=suite, row=row
        )
        jobs.append((by_id[result.case], t.agent))
    agents = tuple(dict.fromkeys(agent for _, agent in jobs))
    config = replace(config or RunConfig(frames="all"), agents=agents)
    run = RunDir(out)
    if resume:
        if [c.id for c in run.cases()] != [c.id for c in cases]:
            raise RunDirError(f"{out} holds a labelled set of other cases; resume it with those")
        run.repair()
        done = {r.key for r in run.records() if r.label != "error"}
        jobs = [(c, a) for c, a in jobs if (a, c.id) not in done]
    else:
        manifest = new_manifest(config, cases)
        manifest["truth"] = {
            "suites": {s.name: len(s.cases) for s in suites},
            "paper_offset": PAPER_OFFSET,
            "left_out": dict(report.left_out),
        }
        run.create(manifest, cases)

    def labelled(record: EpisodeRecord) -> EpisodeRecord:
        return record.model_copy(update={"truth": truth[(record.agent, record.case)]})

    execute_jobs(run, config, jobs, workers, on_record, prepare=labelled)
    report.recorded = [r for r in run.records() if r.truth is not None]
    report.wrong = [
        f"case {r.case}, {r.truth.trajectory}: recorded {r.label}, true {r.truth.label}"
        for r in report.recorded
        if r.truth is not None and r.label != r.truth.label
    ]
    report.seconds = round(time.perf_counter() - started, 2)
    return report


def _why_left_out(result: ProbeResult) -> str:
    if result.status == "unverifiable":
        return "the rules cannot decide its label (a predicate left to an LLM judge)"
    return "the rules label it otherwise (see ghostei cases probe)"


def stats(run: RunDir) -> dict[str, Any]:
    """A labelled set's counts: episodes by true label x vector, by suite and by source, and
    how many the rule judge's recorded label agrees with. RunDirError for a folder that is no
    labelled set."""
    records = [r for r in run.records() if r.truth is not None]
    if not records:
        raise RunDirError(f"{run.path} holds no labelled episodes (build one: ghostei truth build)")
    vector = {c.id: c.vector for c in run.cases()}
    table = {v: dict.fromkeys(SETS_LABELS, 0) for v in VECTORS}
    by_suite: Counter[str] = Counter()
    by_source: Counter[str] = Counter()
    agree = 0
    for r in records:
        assert r.truth is not None
        table[vector[r.case]][r.truth.label] += 1
        by_suite[r.truth.suite] += 1
        by_source[r.truth.source] += 1
        agree += r.label == r.truth.label
    totals = {label: sum(row[label] for row in table.values()) for label in SETS_LABELS}
    n = len(records)
    return {
        "episodes": n,
        "cases": len({r.case for r in records}),
        "by_label": totals,
        "share": {label: round(totals[label] / n, 4) for label in SETS_LABELS},
        "by_vector": table,
        "by_suite": dict(by_suite),
        "by_source": dict(by_source),
        "rule_judge_agrees": agree,
    }


def folder_size(path: Path) -> int:
    """The bytes of every file under ``path``."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
