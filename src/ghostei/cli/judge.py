"""``ghostei judge``: LLM verdicts beside a run's rule verdicts, and agreement between judges."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..judge.agreement import Agreement, Comparison, compare_judges
from ..judge.llm import JudgeOptions, LLMJudge, Scope, judge_run, pending_episodes, usage_total
from ..judge.paper_protocol import PaperJudge, PromptTemplate, TemplateError
from ..judge.store import (
    JUDGES,
    STORED,
    Judgement,
    judged_records,
    judgement_path,
    load_judgements,
    not_blind,
)
from ..providers import ProviderConfig
from ..providers.preflight import PromptSize
from ..rundir import EpisodeRecord, RunDir, RunDirError, TornLine, drop_torn_line, read_jsonl
from ..verdict import LABELS
from .console import (
    connect_model,
    err,
    fail,
    hold_run_dir,
    model_options,
    out,
    progress_bar,
    warn,
)


def _warn_torn(lines: list[TornLine], dropped: Path | None = None) -> None:
    """Warn of each torn last line left out (or, in the file ``dropped``, cut off)."""
    for torn in lines:
        warn(torn.describe("dropped" if torn.path == dropped else "left out"))


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


@click.command("judge")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option(
    "--judge",
    "judge_name",
    default="llm",
    show_default=True,
    help="llm: label every episode with a judge model, blind to the rule judge's verdict; "
    "hybrid: only the episodes the rule judge left undetermined, telling the model what the "
    "rules observed (all the hybrid judge needs).",
)
@click.option(
    "--protocol",
    type=click.Choice(["ghostei", "paper"]),
    default="ghostei",
    show_default=True,
    help="ghostei: our prompt, keyframes and JSON verdict; paper: the paper's protocol (every "
    "stored frame in order at full size, the instruction, the actions and the case's result "
    "criteria; three booleans back), stored as the paper judge.",
)
@click.option(
    "--judge-prompt",
    "judge_prompt",
    type=click.Path(path_type=Path),
    default=None,
    help="With --protocol paper: a prompt template file sent as written with its variables "
    "({instruction}, {actions}, {criteria}, {frame_count}, {step_count}, {case_id}, {app}) "
    "filled (docs/judging.md).",
)
@click.option(
    "--compare",
    nargs=2,
    default=None,
    metavar="JUDGE JUDGE",
    help="Agreement of two judges (rule, llm, hybrid) on the run instead of judging.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@model_options(image_max_side=768, model_help="The judge model (e.g. gpt-4o).")
@click.option(
    "--max-frames",
    type=click.IntRange(1, 256),
    default=8,
    show_default=True,
    help="Keyframes shown per episode: first, last, attack surfaces, then screen changes.",
)
@click.option("--all-frames", is_flag=True, help="Show every frame instead of keyframes.")
@click.option(
    "--text-only",
    is_flag=True,
    help="No images: each keyframe as its screen's element list, and each step's events "
    "(for judge models that take no images).",
)
@click.option(
    "--judge-retries",
    type=click.IntRange(0, 10),
    default=2,
    show_default=True,
    help="Ask again this many times after an unusable answer; then the verdict is judge_error.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=4,
    show_default=True,
    help="Episodes judged at once (threads).",
)
@click.option("--force", is_flag=True, help="Judge again episodes that have an LLM verdict.")
def judge(
    run_dir: Path,
    judge_name: str,
    protocol: str,
    judge_prompt: Path | None,
    compare: tuple[str, str] | None,
    fmt: str,
    model: str | None,
    base_url: str | None,
    provider: str,
    api_key_env: str | None,
    max_frames: int,
    image_max_side: int,
    all_frames: bool,
    text_only: bool,
    judge_retries: int,
    max_retries: int,
    timeout: float,
    max_tokens: int,
    skip_endpoint_check: bool,
    workers: int,
    force: bool,
) -> None:
    """Label a finished run with an LLM judge (no agent is re-run), or compare two judges.

    Verdicts go to RUN_DIR/judgements/llm.jsonl (hybrid.jsonl, paper.jsonl) beside the rule
    verdicts; a second call judges only what is left (episodes without a verdict, or whose
    verdict is judge_error). Exit 1 if any episode ends with judge_error.
    """
    run = RunDir(run_dir)
    try:  # every record read once up front: a corrupt one is a user error, never a traceback
        manifest = run.manifest()
        run.cases()
        run.records()
        for stored_judge in STORED:
            load_judgements(run, stored_judge)
    except RunDirError as exc:
        fail(str(exc))
    if compare is not None:
        _warn_torn(run.torn_lines())
        _compare(run, compare, fmt)
        return
    hold_run_dir(run)  # the judgements are written beside the run's records: one writer
    if judge_name not in ("llm", "hybrid"):
        if judge_name == "rule":
            fail("--judge rule: rule verdicts are made by `ghostei run`; use llm or hybrid")
        fail(f"--judge {judge_name}: unknown judge; use llm or hybrid")
    template: PromptTemplate | None = None
    if protocol == "paper":
        if judge_name == "hybrid":
            fail("--protocol paper: the paper's judge is blind to the rules; use --judge llm")
        if text_only:
            fail("--protocol paper sends every frame as an image; --text-only does not apply")
        if judge_prompt is not None:
            try:
                template = PromptTemplate.read(judge_prompt)
            except TemplateError as exc:
                fail(f"--judge-prompt {exc}")
    elif judge_prompt is not None:
        fail("--judge-prompt: a template is sent only with --protocol paper")
    if not model:
        fail(f"--judge {judge_name} needs a judge model: give --model (and --base-url)")
    config = ProviderConfig(
        provider=provider,
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        temperature=0.0,
        max_retries=max_retries,
        timeout=timeout,
        max_tokens=max_tokens,
        # The judge downscales frames itself; the provider must not do it again (the
        # paper's protocol sends the frames as the run stored them).
        image_max_side=None if protocol == "paper" else image_max_side or None,
    )
    # The judge's prompt grows with the episode (its keyframes), so its size is not known.
    needs = {"the LLM judge": PromptSize(None, 0 if text_only else 1)}
    llm, _ = connect_model(config, needs, check=not skip_endpoint_check)
    options = JudgeOptions(
        max_frames=max_frames,
        image_max_side=image_max_side or None,
        all_frames=all_frames,
        retries=judge_retries,
        text_only=text_only,
        informed=judge_name == "hybrid",
    )
    llm_judge = (
        PaperJudge(llm, options, template=template)
        if protocol == "paper"
        else LLMJudge(llm, options)
    )
    kept = (manifest.get("config") or {}).get("frames", "all")
    if protocol == "paper" and kept != "all":
        warn(
            f"the run kept {'only keyframes' if kept == 'keyframes' else 'no frames'} "
            f"(--frames {kept}): the paper's judge sees every frame the run stored, which is "
            "fewer than the paper's judge would have seen"
        )
    # Verdicts are appended to judgements/<judge>.jsonl: a torn last line there must go
    # first, or the next verdict would be glued to it into one corrupt line.
    stored_path = judgement_path(run, llm_judge.name)
    try:
        drop_torn_line(stored_path, Judgement)
    except RunDirError as exc:  # corrupted since it was read above
        fail(str(exc))
    except OSError as exc:
        fail(f"{stored_path}: cannot cut off its torn last line: {exc.strerror or exc}")
    _warn_torn(run.torn_lines(), dropped=stored_path)
    scope: Scope = "undetermined" if judge_name == "hybrid" else "all"
    todo = pending_episodes(run, force=force, scope=scope, store=llm_judge.name)
    with progress_bar() as progress:
        task = progress.add_task("judging", total=len(todo))
        done = judge_run(
            run,
            llm_judge,
            todo,
            workers=workers,
            on_judgement=lambda j: progress.advance(task),
        )
    _summary(run, "paper" if protocol == "paper" else judge_name, done, out)
    stored = load_judgements(run, llm_judge.name)
    failed = [
        (key, v.error)
        for key, v in stored.items()
        if v.label == "judge_error" and key in {r.key for r in run.records() if r.label != "error"}
    ]
    for (agent, case), error in sorted(failed):
        err.print(
            Text.assemble(("judge_error", "red"), f" case {case} agent {agent}: {error}"),
            highlight=False,
        )
    if failed:
        sys.exit(1)


def _summary(run: RunDir, judge_name: str, done: list[Judgement], out: Console) -> None:
    records = judged_records(run, judge_name)
    columns = [*LABELS, "undetermined", "judge_error"]
    table = Table(title=f"{judge_name} judge: labels per agent")
    table.add_column("agent", no_wrap=True)
    for col in [*columns, "judged now", "tokens in/out"]:
        table.add_column(col, justify="right")
    agents: dict[str, list[EpisodeRecord]] = {}
    for r in records:
        agents.setdefault(r.agent, []).append(r)
    for agent, rs in agents.items():
        counts = Counter(r.label for r in rs)
        mine = [j for j in done if j.agent == agent]
        usage = usage_total(mine)
        table.add_row(
            Text(agent),
            *(str(counts.get(c, 0)) for c in columns),
            str(len(mine)),
            f"{usage.get('prompt_tokens', 0)}/{usage.get('completion_tokens', 0)}",
        )
    out.print(table)
    total = usage_total(done)
    errors = sum(r.label == "error" for r in records)
    out.print(
        f"judged {len(done)} episode(s): {total.get('prompt_tokens', 0)} prompt and "
        f"{total.get('completion_tokens', 0)} completion tokens in "
        f"{total.get('requests', 0)} request(s)"
        + (f"; {errors} error episode(s) of the run not judged" if errors else ""),
        highlight=False,
    )


def _compare(run: RunDir, names: tuple[str, str], fmt: str) -> None:
    for name in names:
        if name not in JUDGES:
            fail(f"--compare {name}: unknown judge; known: {', '.join(JUDGES)}")
    first, second = names
    result = compare_judges(
        first,
        judged_records(run, first),
        second,
        judged_records(run, second),
        not_blind=not_blind(run, names),
    )
    modes = _llm_modes(run) if {"llm", "hybrid"} & set(names) else {}
    if fmt == "json":
        click.echo(json.dumps({**result.to_json(), "llm_modes": modes}, indent=2))
        return
    _print_comparison(result, out)
    for name, why in result.not_blind.items():
        out.print(
            f"kappa withheld: the {name} judge is not blind ({why}); kappa is reported only "
            "between blind judges (rule, llm, paper)",
            highlight=False,
            markup=False,
        )
    if modes:
        seen = {"images": "screenshots", "text": "element lists only (--text-only)"}
        said = ", ".join(f"{seen.get(m, m)} in {n}" for m, n in sorted(modes.items()))
        out.print(f"The LLM judge judged from {said} episodes.", highlight=False, markup=False)


def _llm_modes(run: RunDir) -> dict[str, int]:
    """How many stored LLM verdicts were made from screenshots and how many from text."""
    path = judgement_path(run, "llm")
    if not path.exists():
        return {}
    latest = {(j.agent, j.case): j.mode for j in read_jsonl(path, Judgement).records}
    return dict(Counter(latest.values()))


def _print_comparison(result: Comparison, out: Console) -> None:
    overall = result.overall
    out.print(_matrix_table(overall, "confusion matrix (rows: {a}, columns: {b})"))
    labels = Table(title="per label")
    for col in ("label", overall.first, overall.second, "both", "specific agreement"):
        labels.add_column(col, justify="left" if col == "label" else "right")
    for la in overall.per_label:
        labels.add_row(la.label, str(la.first), str(la.second), str(la.both), _pct(la.specific))
    out.print(labels)
    kappas = Table(title="Cohen's kappa (over TC, FAS, PAS, BF)")
    for col in ("agent", "paired", "scored by both", "observed agreement", "kappa"):
        kappas.add_column(col, justify="left" if col == "agent" else "right")
    rows = [("all agents", overall), *result.per_agent.items()]
    for name, ag in rows:
        kappas.add_row(
            Text(name), str(ag.paired), str(ag.scored), _pct(ag.observed), _pct(ag.kappa)
        )
    out.print(kappas)
    notes = []
    if result.errors:
        notes.append(f"{result.errors} error episode(s) left out")
    if result.unpaired:
        notes.append(f"{result.unpaired} episode(s) labelled by one judge only")
    notes.append("kappa — : undefined (no episode, or one label given to every episode)")
    out.print("; ".join(notes), highlight=False)


def _matrix_table(ag: Agreement, title: str) -> Table:
    table = Table(title=title.format(a=ag.first, b=ag.second))
    table.add_column(f"{ag.first} \\ {ag.second}")
    for label in ag.labels:
        table.add_column(label, justify="right")
    for label, row in zip(ag.labels, ag.matrix, strict=True):
        table.add_row(label, *(str(v) for v in row))
    return table
