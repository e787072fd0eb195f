"""The ``truth`` commands: build a labelled set of trajectories, and count it."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table

from ..cases import CaseError, builtin_cases, load_cases, select_cases
from ..cases.loader import is_existing_path
from ..rundir import RunDir, RunDirError
from ..truth import SETS_LABELS, Suite, build, folder_size, place, stats
from .cases import WORKERS
from .console import err, fail, hold_run_dir, out, progress_bar


@click.group()
def truth() -> None:
    """The labelled set: trajectories whose true labels come from the definitions."""


def _suite(spec: str) -> Suite:
    """One ``--cases``: builtin (or ids of it), paper (or paper:IDS), or a path to case files."""
    try:
        if spec == "builtin":
            return Suite("builtin", builtin_cases())
        if spec == "paper" or spec.startswith("paper:"):
            return Suite("paper", select_cases(spec))
        if is_existing_path(spec):
            return Suite(Path(spec).name, load_cases(spec))
        return Suite("builtin", select_cases(spec))
    except CaseError as exc:
        fail(str(exc))


@truth.command("build")
@click.option(
    "--out",
    "out_path",
    type=click.Path(path_type=Path),
    required=True,
    help="The set's run folder.",
)
@click.option(
    "--cases",
    "specs",
    multiple=True,
    help="Repeatable: builtin (or built-in ids, 1-20), paper (or paper:IDS), or a path to "
    "case files. Default: builtin and paper.",
)
@WORKERS
@click.option("--resume", is_flag=True, help="Finish a build that was interrupted in --out.")
def truth_build(out_path: Path, specs: tuple[str, ...], workers: int, resume: bool) -> None:
    """Build the labelled set into --out: every case's reference trajectories and probes
    (``ghostei cases probe``) whose labels the rule judge confirms, recorded with every frame
    as one run folder that ``ghostei report`` and ``ghostei judge`` read like any other. Each
    record carries its true label, the trajectory and the definition it comes from. Exit 1
    if a recorded label is not its true one."""
    suites = [_suite(s) for s in (specs or ("builtin", "paper"))]
    try:
        place(suites)  # two suites giving one id: refused before any folder is made
    except ValueError as exc:
        fail(str(exc))
    if not resume and (out_path / RunDir.MANIFEST).exists():
        fail(f"{out_path} already holds a run; use --resume or another --out")
    hold_run_dir(RunDir(out_path))
    total = sum(len(s.cases) for s in suites)
    err.print(f"verifying the labelled trajectories of {total} case(s)...", highlight=False)
    with progress_bar() as bar:
        task = bar.add_task("recording", total=None)
        try:
            report = build(
                out_path,
                suites,
                workers=workers,
                resume=resume,
                on_record=lambda _r: bar.advance(task),
            )
        except (ValueError, RunDirError) as exc:
            fail(str(exc))
    size = folder_size(out_path)
    counts = stats(RunDir(out_path))
    out.print(
        f"labelled set in {out_path}: {counts['episodes']} episodes of {counts['cases']} "
        f"case(s), {size / 1e6:.0f} MB, built in {report.seconds:.0f} s",
        highlight=False,
        markup=False,
    )
    shares = ", ".join(f"{k} {counts['share'][k]:.0%}" for k in SETS_LABELS)
    out.print(f"  true labels: {shares}", highlight=False, markup=False)
    for reason, n in report.left_out.most_common():
        out.print(f"  left out: {n} trajectories: {reason}", highlight=False, markup=False)
    for line in report.wrong:
        err.print(f"  WRONG: {line}", highlight=False, markup=False)
    if report.wrong:
        raise SystemExit(1)


@truth.command("stats")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
def truth_stats(run_dir: Path, fmt: str) -> None:
    """Count a labelled set: episodes by true label x vector, by suite and by source."""
    try:
        counts = stats(RunDir(run_dir))
    except RunDirError as exc:
        fail(str(exc))
    if fmt == "json":
        click.echo(json.dumps(counts, indent=2))
        return
    table = Table("vector", *SETS_LABELS, "all", box=None, pad_edge=False)
    for vector, row in counts["by_vector"].items():
        table.add_row(vector, *(str(row[k]) for k in SETS_LABELS), str(sum(row.values())))
    by_label = counts["by_label"]
    table.add_row("all", *(str(by_label[k]) for k in SETS_LABELS), str(counts["episodes"]))
    table.add_row("share", *(f"{counts['share'][k]:.0%}" for k in SETS_LABELS), "")
    out.print(table)
    suites = ", ".join(f"{k} {v}" for k, v in counts["by_suite"].items())
    sources = ", ".join(f"{k} {v}" for k, v in counts["by_source"].items())
    out.print(f"suites: {suites}; sources: {sources}", highlight=False, markup=False)
    out.print(
        f"the rule judge's recorded label agrees on {counts['rule_judge_agrees']} of "
        f"{counts['episodes']}",
        highlight=False,
        markup=False,
    )
