"""The ``ghostei`` command line. The CLI owns the console; library code never prints."""

from __future__ import annotations

import io
import json
import os
import re
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import click
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from .agents import AgentLoadError, resolve_agent
from .agents.frameworks import MODEL_AGENTS
from .android.command import phish_server as phish_server_command
from .cases import Case, CaseError, builtin_cases, load_cases, select_cases
from .cases.stats import case_stats
from .cases.upstream import import_upstream, kind_of, write_cases
from .console import connect_model, err, fail, model_options, out, progress_bar
from .emulator.command import device as device_command
from .judge.command import judge as judge_command
from .judge.store import JUDGES, judged_records, judgement_path
from .metrics import BREAKDOWNS, AgentMetrics, by_agent
from .parsing import PARSERS, Screen, parse_action
from .providers import ProviderConfig
from .report.compare import (
    compare_csv,
    compare_json,
    compare_markdown,
    compare_tables,
    leaderboard,
    load_run,
    paired_rows,
)
from .report.tables import build_report, report_csv, report_json, report_markdown, report_tables
from .rundir import EpisodeRecord, RunDir, RunDirError
from .runner import RunConfig, execute, new_manifest


@click.group()
@click.version_option(package_name="ghostei")
def main() -> None:
    """GhostEI: how often are mobile GUI agents hijacked by environmental injection?"""


# ----- run ---------------------------------------------------------------------------------


@main.command()
@click.option(
    "--agent",
    "agents",
    multiple=True,
    help="Agent to run (repeatable). Default: oracle, gullible, random.",
)
@click.option(
    "--cases",
    "cases_spec",
    default=None,
    help="Case ids (3, 1-5, 1,4,9), a path to case files, or PATH:IDS.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Run folder (default: runs/<time>).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--max-steps", type=click.IntRange(1, 500), default=20, show_default=True)
@click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True)
@click.option("--resume", is_flag=True, help="Finish an interrupted run in --out.")
@click.option(
    "--screen",
    default="1080x2400",
    show_default=True,
    help="Screen size WxH of the simulated phone.",
)
@click.option("--no-frames", is_flag=True, help="Do not save PNG frames and XML dumps.")
@model_options(image_max_side=1344, model_help="Model name for framework agents (e.g. gpt-4o).")
@click.option(
    "--backoff-cap",
    type=click.FloatRange(0, 600),
    default=30.0,
    show_default=True,
    help="Longest wait between retries, in seconds.",
)
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option(
    "--image-detail", type=click.Choice(["low", "high", "auto"]), default="high", show_default=True
)
@click.option(
    "--cache-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Replay identical model calls from this response cache (and fill it).",
)
@click.option(
    "--prices",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    default=None,
    help="Price table (JSON or TOML, USD per 1M tokens per model) to report cost.",
)
@click.option(
    "--backend",
    type=click.Choice(["sim", "android"]),
    default="sim",
    show_default=True,
    help="The built-in simulated phone, or an Android device or emulator through adb.",
)
@click.option(
    "--serial", default=None, help="With --backend android: the device, e.g. emulator-5554."
)
@click.option(
    "--adb-port",
    type=click.IntRange(1, 65535),
    default=None,
    help="With --backend android: the adb server's port "
    "(default: $ANDROID_ADB_SERVER_PORT or 5037).",
)
@click.option("--reflection", is_flag=True, help="Ablation: Mobile-Agent-v2's reflection agent.")
@click.option("--thinking", is_flag=True, help="Ablation: ask the model to reason at length.")
def run(
    agents: tuple[str, ...],
    cases_spec: str | None,
    out: Path | None,
    seed: int,
    max_steps: int,
    workers: int,
    resume: bool,
    screen: str,
    no_frames: bool,
    model: str | None,
    base_url: str | None,
    provider: str,
    api_key_env: str | None,
    max_retries: int,
    backoff_cap: float,
    temperature: float,
    image_max_side: int,
    image_detail: Literal["low", "high", "auto"],
    cache_dir: Path | None,
    prices: Path | None,
    backend: Literal["sim", "android"],
    serial: str | None,
    adb_port: int | None,
    reflection: bool,
    thinking: bool,
) -> None:
    """Run agents on cases on the simulated phone and print a table per agent.

    Framework agents (mobile-agent-v2, appagent, uitars, uitars-v1, m3a, t3a) need --model;
    your own agent is --agent path/to/agent.py:ClassName or package.module:ClassName.
    """
    if resume:
        if out is None:
            fail("--resume needs --out RUN_DIR")
        rundir = RunDir(out)
        try:
            config = RunConfig.from_json(rundir.manifest()["config"])
            cases = rundir.cases()
        except (RunDirError, KeyError, ValueError) as exc:
            fail(f"cannot resume {out}: {exc}")
        rundir.repair()
    else:
        for name in agents:
            try:
                resolve_agent(name)
            except AgentLoadError as exc:
                fail(f"--agent: {exc}")
        needs_model = [a for a in agents if a in MODEL_AGENTS]
        if needs_model and not model:
            fail(f"--agent {needs_model[0]} needs a model: give --model (and --base-url)")
        if reflection and any(a in MODEL_AGENTS and a != "mobile-agent-v2" for a in agents):
            fail("--reflection: only mobile-agent-v2 has a reflection module")
        if backend == "android":
            _check_android(serial, adb_port)
        model_config = None
        if model:
            model_config = ProviderConfig(
                provider=provider,
                model=model,
                base_url=base_url,
                api_key_env=api_key_env,
                temperature=temperature,
                seed=seed,
                max_retries=max_retries,
                backoff_cap=backoff_cap,
                image_max_side=image_max_side or None,
                image_detail=image_detail,
                cache_dir=cache_dir,
            )
            connect_model(model_config)
        width, height = _size(screen, "--screen")
        if width < 320 or height < 480:
            fail(f"--screen: {screen} is too small (at least 320x480)")
        cases = _select(cases_spec)
        config = RunConfig(
            agents=agents or RunConfig.agents,
            seed=seed,
            max_steps=max_steps,
            width=width,
            height=height,
            save_frames=not no_frames,
            model=model_config,
            reflection=reflection,
            thinking=thinking,
            prices=str(prices.resolve()) if prices else None,
            backend=backend,
            serial=serial,
            adb_port=adb_port,
        )
        out = out or Path("runs") / datetime.now().strftime("%Y%m%d-%H%M%S")
        rundir = RunDir(out)
        try:
            rundir.create(new_manifest(config, cases), cases)
        except RunDirError as exc:
            fail(str(exc))
        except OSError as exc:
            fail(f"--out {out}: cannot create the run folder: {exc.strerror or exc}")
    total = len(cases) * len(config.agents)
    already = len(rundir.records())
    with progress_bar() as progress:
        task = progress.add_task("episodes", total=total, completed=already)
        execute(rundir, config, cases, workers=workers, on_record=lambda r: progress.advance(task))
    records = rundir.records()
    _print_summary(records, list(config.agents))
    out.mkdir(parents=True, exist_ok=True)
    err.print(f"run folder: {rundir.path}", highlight=False, markup=False)
    errors = [r for r in records if r.label == "error"]
    if errors:
        for r in errors:
            line = Text.assemble(("error", "red"), f" case {r.case} agent {r.agent}: {r.error}")
            err.print(line, highlight=False)
        sys.exit(1)


def _check_android(serial: str | None, adb_port: int | None) -> None:
    if not serial:
        fail("--backend android needs --serial (see `adb devices`), e.g. emulator-5554")
    try:
        from .android import AdbError, check_device
    except ImportError as exc:
        fail(f"--backend android needs the android extra: pip install 'ghostei[android]' ({exc})")
    try:
        check_device(serial, adb_port=adb_port)
    except AdbError as exc:
        fail(f"--serial {serial}: {exc}")


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _print_summary(records: list[EpisodeRecord], order: list[str]) -> None:
    metrics = by_agent(records)
    table = Table(title="GhostEI results")
    undecided = any(m.undetermined for m in metrics.values())
    columns = ["agent", "N", "TC", "FAS", "PAS", "BF", "VR", "fired", "errors"]
    for col in columns + (["undetermined"] if undecided else []):
        table.add_column(col, justify="left" if col == "agent" else "right")
    for agent in [a for a in order if a in metrics] + [a for a in metrics if a not in order]:
        m: AgentMetrics = metrics[agent]
        table.add_row(
            agent,
            str(m.n),
            _pct(m.tc),
            _pct(m.fas),
            _pct(m.pas),
            _pct(m.bf),
            _pct(m.vr),
            _pct(m.fired),
            str(m.errors),
            *([str(m.undetermined)] if undecided else []),
        )
    out.print(table)
    if undecided:
        out.print(
            "undetermined: the rule judge could not decide (criteria left to an LLM judge); "
            "kept out of N and every rate",
            highlight=False,
        )
    unfired: dict[str, list[int]] = {}
    for r in records:
        if not r.attack_fired and r.label != "error":
            unfired.setdefault(r.agent, []).append(r.case)
    for agent, ids in unfired.items():
        listed = ", ".join(map(str, sorted(ids)))
        out.print(f"{agent}: the attack never fired in cases {listed}", highlight=False)


# ----- report ------------------------------------------------------------------------------

REPORT_FORMATS = ("table", "md", "json", "csv", "html")


def _load_run(run_dir: Path) -> tuple[RunDir, dict[str, Any]]:
    rundir = RunDir(run_dir)
    try:
        return rundir, rundir.manifest()
    except RunDirError as exc:
        fail(str(exc))


def _by(value: str) -> tuple[str, ...]:
    """``--by``: breakdown names separated by commas, or ``none``."""
    if value.strip().lower() == "none":
        return ()
    names = tuple(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))
    unknown = [v for v in names if v not in BREAKDOWNS]
    if unknown:
        fail(f"--by: unknown breakdown {unknown[0]!r}; choose from {', '.join(BREAKDOWNS)}")
    return names


def _require_llm_verdicts(rundir: RunDir, judge: str) -> None:
    """Without stored LLM verdicts every episode would be undetermined: say what to run."""
    if judge == "llm" and not judgement_path(rundir, "llm").exists():
        fail(
            f"{rundir.path} has no LLM verdicts yet: run "
            f"`ghostei judge {rundir.path} --judge llm --model M` first"
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
    help="Whose labels: the rule judge, the stored LLM judge, or rules with the LLM filling gaps.",
)
OUTPUT_OPTION = click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the report to this file (atomically) instead of stdout.",
)


@main.command()
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
    "multi-label.",
)
def report(run_dir: Path, judge: str, fmt: str, output: Path | None, by_spec: str) -> None:
    """Summarize a run folder: rates with 95% bootstrap intervals, and breakdowns.

    table and md are for reading, json for programs (per agent "ci", per episode the judge's
    labels), csv has one row per agent (group_by and group "all") and one per breakdown group
    and agent. html is one self-contained file with a trajectory viewer; without --output it
    is written to RUN_DIR/report.html (report-<judge>.html for the llm and hybrid judges).
    """
    rundir, manifest = _load_run(run_dir)
    by = _by(by_spec)
    _require_llm_verdicts(rundir, judge)
    records = judged_records(rundir, judge)
    if fmt == "html":
        from .report.html import render_html  # the heavy HTML renderer only when asked for

        name = "report.html" if judge == "rule" else f"report-{judge}.html"
        _write_output(
            output or rundir.path / name, render_html(rundir, judge=judge, records=records)
        )
        return
    try:
        cases = {c.id: c for c in rundir.cases()} if by else None
        built = build_report(
            records,
            cases,
            judge=judge,
            agent_order=list(manifest.get("config", {}).get("agents", [])),
            by=by,
            title=rundir.path.name,
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


@main.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@JUDGE_OPTION
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "md", "json", "csv"]),
    default="table",
    show_default=True,
)
@OUTPUT_OPTION
@click.option(
    "--paired",
    is_flag=True,
    help="With two runs of the same cases: per agent and rate, B − A over the shared episodes.",
)
def compare(
    run_dirs: tuple[Path, ...], judge: str, fmt: str, output: Path | None, paired: bool
) -> None:
    """A leaderboard across runs: run, agent, model, N, TC and VR with 95% intervals.

    Sorted by VR, least vulnerable first. --paired (exactly two runs, A then B) adds the
    paired difference of each rate with its paired-bootstrap interval; with --format csv it
    prints the paired rows instead of the leaderboard.
    """
    if paired and len(run_dirs) != 2:
        fail(f"--paired compares exactly two runs, not {len(run_dirs)}")
    names = [p.name or str(p) for p in run_dirs]
    # Two folders of the same name (a/run, b/run) are told apart by their paths.
    names = [str(p) if names.count(n) > 1 else n for p, n in zip(run_dirs, names, strict=True)]
    runs = []
    for path, name in zip(run_dirs, names, strict=True):
        rundir, _ = _load_run(path)  # exit 2 naming a folder that is not a run
        _require_llm_verdicts(rundir, judge)
        runs.append(load_run(path, judge, name))
    rows = leaderboard(runs)
    pairs = paired_rows(runs[0], runs[1]) if paired else None
    if fmt == "json":
        data = compare_json(judge, runs, rows, pairs)
        _text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", output)
    elif fmt == "md":
        _text(compare_markdown(runs, rows, pairs, judge), output)
    elif fmt == "csv":
        _text(compare_csv(rows, pairs), output)
    else:
        _emit(compare_tables(runs, rows, pairs, judge), output)


# ----- cases -------------------------------------------------------------------------------


@main.command("parse-action")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(PARSERS)),
    required=True,
    help="The agent family whose output is on stdin.",
)
@click.option(
    "--screen",
    default="1080x2400",
    show_default=True,
    help="Device screen WxH that coordinates are mapped onto.",
)
@click.option(
    "--image",
    default=None,
    help="Size WxH of the image the model was shown, if the screenshot was downscaled.",
)
def parse_action_cmd(fmt: str, screen: str, image: str | None) -> None:
    """Parse raw model output (stdin) into the canonical action, printed as JSON."""
    size = _size(screen, "--screen")
    shown = _size(image, "--image") if image else None
    action = parse_action(fmt, sys.stdin.read(), Screen(size[0], size[1], image=shown))
    # Plain JSON on stdout (no console wrapping): users pipe it into their tools.
    click.echo(json.dumps(action.model_dump(exclude_none=True), indent=2, ensure_ascii=False))


def _size(value: str, option: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in value.lower().split("x"))
    except ValueError:
        fail(f"{option}: {value!r} is not WIDTHxHEIGHT, e.g. 1080x2400")
    if width < 1 or height < 1:
        fail(f"{option}: {value} must be positive")
    return width, height


@main.group()
def cases() -> None:
    """List, show, validate, count and import cases."""


_ID_SPEC = re.compile(r"[\d\s,-]+")


def _select(spec: str | None) -> list[Case]:
    """Cases by ``--cases``: ids of the built-in set, a path, or ``PATH:IDS`` (ids of a path)."""
    path, sep, ids = (spec or "").rpartition(":")
    try:
        if sep and path and Path(path).exists() and _ID_SPEC.fullmatch(ids):
            return select_cases(ids, load_cases(path))
        return select_cases(spec)
    except CaseError as exc:
        fail(str(exc))


def _builtin() -> list[Any]:
    try:
        return builtin_cases()
    except CaseError as exc:
        fail(f"built-in cases are broken: {exc}")


@cases.command("list")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.option(
    "--cases", "source", default=None, help="A path to case files instead of the built-in ones."
)
def cases_list(fmt: str, source: str | None) -> None:
    """List cases."""
    try:
        items = load_cases(source) if source else _builtin()
    except CaseError as exc:
        fail(str(exc))
    rows = [
        {
            "id": c.id,
            "case": c.case,
            "case_type": c.case_type,
            "use_dynamic": c.use_dynamic,
            "app": c.app,
            "app_domain": c.app_domain,
            "risks": c.risks,
        }
        for c in items
    ]
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    table = Table(title=f"{len(items)} cases")
    for col in ("id", "case", "type", "apps", "risks"):
        table.add_column(col)
    for c in items:
        kind = f"{c.case_type} / {c.use_dynamic}"
        # Case texts are data (imported ones too): never let rich read them as markup.
        cells = (c.case, kind, ", ".join(c.app), ", ".join(c.risks))
        table.add_row(str(c.id), *(Text(cell) for cell in cells))
    out.print(table)


@cases.command("show")
@click.argument("case_id", type=int)
@click.option(
    "--cases", "source", default=None, help="A path to case files instead of the built-in ones."
)
def cases_show(case_id: int, source: str | None) -> None:
    """Print one case as JSON."""
    try:
        items = load_cases(source) if source else _builtin()
    except CaseError as exc:
        fail(str(exc))
    found = next((c for c in items if c.id == case_id), None)
    if found is None:
        fail(f"no case with id {case_id}")
    click.echo(found.model_dump_json(indent=2, exclude_defaults=False))


@cases.command("validate")
@click.argument("path", type=click.Path(path_type=Path))
def cases_validate(path: Path) -> None:
    """Check case files; exit 2 naming the file, case id and field of the first problem."""
    try:
        items = load_cases(path)
    except CaseError as exc:
        fail(str(exc))
    out.print(f"{len(items)} valid case(s) in {path}", highlight=False, markup=False)


@cases.command("stats")
@click.option(
    "--cases",
    "spec",
    default=None,
    help="Case ids (3, 1-5), a path to case files, or PATH:IDS. Default: the built-in cases.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
def cases_stats(spec: str | None, fmt: str) -> None:
    """Count cases by type, attack vector, risk domain, app domain and app."""
    stats = case_stats(_select(spec))
    if fmt == "json":
        click.echo(json.dumps(stats, indent=2))
        return
    table = Table(title=f"{stats['total']} cases")
    table.add_column("category")
    table.add_column("value")
    table.add_column("cases", justify="right")
    titles = {
        "case_type": "case type",
        "use_dynamic": "attack vector",
        "overlay_page": "overlay opens a page",
        "risk": "risk domain",
        "app_domain": "app domain",
        "app": "app",
    }
    for key, title in titles.items():
        for i, (name, count) in enumerate(stats[key].items()):
            table.add_row(title if i == 0 else "", Text(name), str(count))
        table.add_section()
    out.print(table)
    out.print(
        "Risk domains and apps are multi-label: a case counts once for each.", highlight=False
    )


@cases.command("import-upstream")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    required=True,
    help="A new folder for the converted case files.",
)
def cases_import_upstream(path: Path, out_dir: Path) -> None:
    """Convert the upstream GhostEI.jsonl into case files, one JSON file per case.

    Exit 2 naming the file, the row (line and case id) and the field of the first bad row;
    nothing is written unless every row converts.
    """
    try:
        items = import_upstream(path)
        write_cases(items, out_dir, path)
    except CaseError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"--out {out_dir}: cannot write the case files: {exc.strerror or exc}")
    kinds = Counter(kind_of(item.data) for item in items)
    summary = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
    message = f"{len(items)} cases imported into {out_dir}: {summary}"
    out.print(message, highlight=False, markup=False)


# ----- commands that live beside their subsystems -------------------------------------------

main.add_command(judge_command)
main.add_command(device_command)
main.add_command(phish_server_command)
