"""The ``report`` and ``compare`` commands: a run's numbers, and runs side by side."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import click
from rich.console import Console, RenderableType

from ..audit import audit
from ..cases import CaseError
from ..cases.paper_companion import CLASSES as PAPER_CLASSES
from ..cases.paper_companion import paper_cases, row_class
from ..defences import agent_labels
from ..judge.store import JUDGES, judged_records, judgement_path, used_judges
from ..metrics import ALL_BREAKDOWNS, BREAKDOWNS
from ..report.compare import (
    CasesDiffer,
    RunEntry,
    compare_csv,
    compare_json,
    compare_markdown,
    compare_tables,
    leaderboard,
    load_run,
    paired_rows,
)
from ..report.paper_figures import (
    PaperRowError,
    build_comparison,
    choose_row,
    comparison_json,
    comparison_markdown,
    comparison_tables,
    load_paper_figures,
)
from ..report.tables import (
    attack_of,
    build_report,
    report_csv,
    report_json,
    report_markdown,
    report_tables,
)
from ..report.tradeoff import (
    AmbiguousRuns,
    build_tradeoff,
    tradeoff_csv,
    tradeoff_html,
    tradeoff_json,
    tradeoff_markdown,
    tradeoff_tables,
)
from ..rundir import RunDir, RunDirError
from .console import err, fail, judge_choice, judge_choice_options, out, warn

REPORT_FORMATS = ("table", "md", "json", "csv", "html")


def _load_run(run_dir: Path) -> tuple[RunDir, dict[str, Any]]:
    """A run folder and its manifest, its records held to both (:mod:`ghostei.audit`): a
    record the run cannot have exits 2 naming its line; one recorded twice or whose files
    are gone is named."""
    rundir = RunDir(run_dir)
    try:
        manifest = rundir.manifest()
        found = audit(rundir)
    except RunDirError as exc:
        fail(str(exc))
    _warn(found.warnings())
    return rundir, manifest


def _warn(messages: list[str]) -> None:
    """Warnings, e.g. a torn last line a report left out."""
    for message in messages:
        warn(message)


def _by(value: str) -> tuple[str, ...]:
    """``--by``: breakdown names separated by commas, or ``none``."""
    if value.strip().lower() == "none":
        return ()
    names = tuple(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))
    unknown = [v for v in names if v not in ALL_BREAKDOWNS]
    if unknown:
        fail(f"--by: unknown breakdown {unknown[0]!r}; choose from {', '.join(ALL_BREAKDOWNS)}")
    return names


def _require_llm_verdicts(rundir: RunDir, judge: str) -> None:
    """Without stored LLM verdicts every episode would be undetermined: say what to run."""
    if judge in ("llm", "paper") and not judgement_path(rundir, judge).exists():
        how = "--protocol paper" if judge == "paper" else "--judge llm"
        fail(
            f"{rundir.path} has no {judge} verdicts yet: run "
            f"`ghostei judge {rundir.path} {how} --model M` first"
        )


def _write_output(path: Path, text: str) -> None:
    """Write a report atomically: a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        fail(f"--output {path}: cannot write: {exc.strerror or exc}")
    err.print(f"wrote {path}", highlight=False, markup=False)


def _emit(renderables: list[RenderableType], output: Path | None) -> None:
    """Rich tables on a terminal; plain text 140 columns wide to a file or a pipe."""
    if output is None and out.is_terminal:
        for item in renderables:
            out.print(item)
        return
    console = Console(file=io.StringIO(), width=140, color_system=None, record=True)
    for item in renderables:
        console.print(item)
    _text(console.export_text(), output)


def _text(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text, nl=False)
    else:
        _write_output(output, text)


JUDGE_OPTION = click.option(
    "--judge",
    type=click.Choice(JUDGES),
    default="rule",
    show_default=True,
    help="Whose labels: the rule judge, the stored (blind) LLM judge, rules with an LLM "
    "filling gaps, or the LLM judge under the paper's protocol.",
)
OUTPUT_OPTION = click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the report to this file (atomically) instead of stdout.",
)


def _paper_rows(run_dir: Path, rundir: Any, records: list[Any], rows: str) -> list[Any]:
    """The records of the run's paper rows classed ``rows``; exit 2 when the run is not one
    over the paper's rows (a case whose prompt is not its row's) or holds no such row."""
    try:
        run_cases = rundir.cases()
        paper = {c.id: c for c in paper_cases()}
    except (RunDirError, CaseError) as exc:
        fail(f"{run_dir}: {exc}")
    for case in run_cases:
        row = paper.get(case.id)
        if row is None or row.prompt != case.prompt:
            fail(
                f"--rows {rows}: {run_dir} is not a run over the paper's rows (its case "
                f"{case.id} is not the paper's row {case.id}); run it with --cases paper"
            )
    kept = [r for r in records if row_class(r.case) == rows]
    if not kept:
        fail(f"--rows {rows}: {run_dir} holds no episode of a row classed {rows}")
    return kept


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@JUDGE_OPTION
@click.option(
    "--format", "fmt", type=click.Choice(REPORT_FORMATS), default="table", show_default=True
)
@OUTPUT_OPTION
@click.option(
    "--by",
    "by_spec",
    default=",".join(BREAKDOWNS),
    show_default=True,
    help="Breakdowns (table, md, json, csv), comma-separated, or 'none'; risk and app are "
    "multi-label. Also 'cell': app domain / risk / vector, for a generated suite.",
)
@click.option(
    "--rows",
    type=click.Choice(["all", *PAPER_CLASSES]),
    default="all",
    show_default=True,
    help="On a run over the paper's rows (--cases paper): only the rows of this class, e.g. "
    "checkable, the rows whose task, attack and exposure the rules decide.",
)
@click.option(
    "--paper",
    is_flag=True,
    help="Each agent's TC, FAS, PAS, BF and VR beside the paper's published row for its "
    "framework and model (table, md or json), with what makes the two differ.",
)
@click.option(
    "--paper-row",
    default=None,
    metavar="N|LABEL",
    help="With --paper (implies it): set every agent beside this row of the paper's, by "
    "number or label, instead of the row its name finds.",
)
@judge_choice_options
def report(
    run_dir: Path,
    judge: str,
    fmt: str,
    output: Path | None,
    by_spec: str,
    rows: str,
    paper: bool,
    paper_row: str | None,
    judge_model: str | None,
    judge_template: str | None,
    judge_text_only: bool | None,
) -> None:
    """Summarize a run folder: rates with 95% Wilson intervals, and breakdowns.

    table and md are for reading, json for programs (per agent "ci", per episode the judge's
    labels), csv has one row per agent (group_by and group "all") and one per breakdown group
    and agent. html is one self-contained file with a trajectory viewer; without --output it
    is written to RUN_DIR/report.html (report-<judge>.html for the llm and hybrid judges).
    Every format says the run's attack condition (standard, none: a clean run, or an adaptive
    variant); in a clean run TC is clean utility. --rows restricts a run over the paper's rows
    to one class of its audit (ghostei cases stats --cases paper). Under an LLM judge the
    report names the judge model, protocol, template and frames; a run holding verdicts of
    several such judges is reported once one is chosen (--judge-model, --judge-template).
    --paper sets each agent beside the paper's own figures (docs/paper.md, "The paper's
    figures").
    """
    paper = paper or paper_row is not None
    chosen = None
    if paper:
        if fmt in ("csv", "html"):
            fail(f"--paper prints a table, md or json, not {fmt}")
        if paper_row is not None:
            try:
                chosen = choose_row(load_paper_figures(), paper_row)
            except PaperRowError as exc:
                fail(str(exc))
    rundir, manifest = _load_run(run_dir)
    by = _by(by_spec)
    _require_llm_verdicts(rundir, judge)
    choice = judge_choice(judge_model, judge_template, judge_text_only)
    try:
        records = judged_records(rundir, judge, choice)
        judged_by = [i.describe() for i in used_judges(rundir, judge, choice)]
    except RunDirError as exc:  # a corrupt record, or several judges and none chosen
        fail(str(exc))
    title = rundir.path.name
    if rows != "all":
        records = _paper_rows(run_dir, rundir, records, rows)
        title = f"{title} (the paper's {rows} rows)"
    _warn([torn.describe() for torn in rundir.torn_lines()])
    if paper:
        _paper(records, manifest, judge, title, chosen, fmt, output)
        return
    if fmt == "html":
        from ..report.html import render_html  # the heavy HTML renderer only when asked for

        name = "report.html" if judge == "rule" else f"report-{judge}.html"
        try:
            html = render_html(rundir, judge=judge, records=records)
        except RunDirError as exc:
            fail(str(exc))
        _write_output(output or rundir.path / name, html)
        return
    try:
        cases = {c.id: c for c in rundir.cases()} if by else None
        built = build_report(
            records,
            cases,
            judge=judge,
            agent_order=agent_labels(manifest.get("config", {})),
            by=by,
            title=title,
            attack=attack_of(manifest.get("config", {})),
            judged_by=judged_by,
        )
    except (RunDirError, ValueError) as exc:
        fail(f"{run_dir}: {exc}")
    if fmt == "json":
        _text(json.dumps(report_json(built), indent=2, ensure_ascii=False) + "\n", output)
    elif fmt == "md":
        _text(report_markdown(built), output)
    elif fmt == "csv":
        _text(report_csv(built), output)
    else:
        _emit(report_tables(built), output)


def _paper(
    records: list[Any],
    manifest: dict[str, Any],
    judge: str,
    title: str,
    chosen: Any,
    fmt: str,
    output: Path | None,
) -> None:
    """``report --paper``: each agent beside the paper's row, and how the two differ."""
    config = manifest.get("config", {})
    try:
        built = build_report(
            records,
            None,
            judge=judge,
            agent_order=agent_labels(config),
            by=(),
            title=title,
            attack=attack_of(config),
        )
    except ValueError as exc:
        fail(f"{title}: {exc}")
    view = build_comparison(built, config, len({r.case for r in records}), chosen)
    if fmt == "json":
        _text(json.dumps(comparison_json(view), indent=2, ensure_ascii=False) + "\n", output)
    elif fmt == "md":
        _text(comparison_markdown(view), output)
    else:
        _emit(list(comparison_tables(view)), output)


@click.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@JUDGE_OPTION
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "md", "json", "csv", "html"]),
    default="table",
    show_default=True,
    help="html: the trade-off view as a standalone page with its plot.",
)
@OUTPUT_OPTION
@click.option(
    "--paired",
    is_flag=True,
    help="With two runs of the same cases: per agent and rate, B − A over the shared episodes.",
)
@click.option(
    "--tradeoff/--leaderboard",
    "tradeoff",
    default=None,
    help="Defences side by side (clean utility, utility under attack, VR, per variant VR), "
    "or the leaderboard. Default: the trade-off when the runs differ in attack condition.",
)
@judge_choice_options
def compare(
    run_dirs: tuple[Path, ...],
    judge: str,
    fmt: str,
    output: Path | None,
    paired: bool,
    tradeoff: bool | None,
    judge_model: str | None,
    judge_template: str | None,
    judge_text_only: bool | None,
) -> None:
    """A leaderboard across runs: run, agent, model, N, TC and VR with 95% Wilson intervals;
    or, when the runs differ in attack condition, defences side by side.

    Sorted by VR, least vulnerable first. --paired (exactly two runs, A then B) adds the
    paired difference of each rate with its paired-bootstrap interval; with --format csv it
    prints the paired rows instead of the leaderboard.

    The trade-off view (--tradeoff) has a row per agent and defences found in the runs:
    clean utility (TC in the run without attacks), utility under attack (goal reached), FAS,
    PAS and VR (the standard run), attack success ((FAS + PAS) / N, which keeps the episodes
    a defence left stuck), and VR and attack success under each adaptive variant run. One
    run per condition for each agent and defences: more are refused as ambiguous. --format
    html writes it as a standalone page with the plot of clean utility against VR.
    """
    if paired and len(run_dirs) != 2:
        fail(f"--paired compares exactly two runs, not {len(run_dirs)}")
    if fmt == "html" and (paired or tradeoff is False):
        fail("--format html is the trade-off view: it takes neither --paired nor --leaderboard")
    if paired and tradeoff:
        fail("--paired compares two runs episode by episode: it has no --tradeoff view")
    names = [p.name or str(p) for p in run_dirs]
    # Two folders of the same name (a/run, b/run) are told apart by their paths.
    names = [str(p) if names.count(n) > 1 else n for p, n in zip(run_dirs, names, strict=True)]
    runs = []
    for path, name in zip(run_dirs, names, strict=True):
        rundir, _ = _load_run(path)  # exit 2 naming a folder that is not a run
        _require_llm_verdicts(rundir, judge)
        try:
            entry = load_run(
                path, judge, name, judge_choice(judge_model, judge_template, judge_text_only)
            )
        except RunDirError as exc:  # a corrupt record: never rank a run without it
            fail(str(exc))
        _warn(list(entry.warnings))
        runs.append(entry)
    judged = [f"{e.name}: {'; '.join(e.judged_by)}" for e in runs if e.judged_by]
    if judged and fmt != "json":  # json names each run's judges in its runs
        err.print(f"Judge: {judge}, by run — " + " | ".join(judged), highlight=False, markup=False)
    if tradeoff is None:
        tradeoff = fmt == "html" or (not paired and len({e.attack for e in runs}) > 1)
    if tradeoff:
        _tradeoff(runs, judge, fmt, output)
        return
    rows = leaderboard(runs)
    try:
        pairs = paired_rows(runs[0], runs[1]) if paired else None
    except CasesDiffer as exc:
        fail(str(exc))
    if fmt == "json":
        data = compare_json(judge, runs, rows, pairs)
        _text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", output)
    elif fmt == "md":
        _text(compare_markdown(runs, rows, pairs, judge), output)
    elif fmt == "csv":
        _text(compare_csv(rows, pairs), output)
    else:
        _emit(compare_tables(runs, rows, pairs, judge), output)


def _tradeoff(runs: list[RunEntry], judge: str, fmt: str, output: Path | None) -> None:
    try:
        view = build_tradeoff(runs, judge)
    except AmbiguousRuns as exc:
        fail(str(exc))
    if fmt == "json":
        _text(json.dumps(tradeoff_json(view), indent=2, ensure_ascii=False) + "\n", output)
    elif fmt == "md":
        _text(tradeoff_markdown(view), output)
    elif fmt == "csv":
        _text(tradeoff_csv(view), output)
    elif fmt == "html":
        _text(tradeoff_html(view), output)
    else:
        _emit(tradeoff_tables(view), output)
