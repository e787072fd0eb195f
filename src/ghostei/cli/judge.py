"""``ghostei judge``: LLM verdicts beside a run's rule verdicts, and agreement between judges."""

from __future__ import annotations

import functools
import json
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..judge.agreement import MATRIX_LABELS, Agreement, Comparison, compare_judges
from ..judge.evaluation import JudgeEvaluation, evaluate, labelled_records, sample_records
from ..judge.llm import JudgeOptions, LLMJudge, Scope, judge_run, pending_episodes, usage_total
from ..judge.paper_protocol import PaperJudge, PromptTemplate, TemplateError
from ..judge.store import (
    JUDGES,
    STORED,
    JudgeChoice,
    JudgeIdentity,
    Judgement,
    identities,
    judged_records,
    judgement_path,
    load_judgements,
    load_stored,
    not_blind,
    stored_judgements,
    used_judges,
)
from ..providers import PriceTable, ProviderConfig
from ..providers.preflight import PromptSize
from ..providers.usage import Usage
from ..rundir import EpisodeRecord, RunDir, RunDirError, TornLine, drop_torn_line, read_jsonl
from ..verdict import LABELS
from .console import (
    connect_model,
    err,
    fail,
    hold_run_dir,
    judge_choice,
    judge_choice_options,
    model_options,
    out,
    progress_bar,
    stacked,
    warn,
)


def _warn_torn(lines: list[TornLine], dropped: Path | None = None) -> None:
    """Warn of each torn last line left out (or, in the file ``dropped``, cut off)."""
    for torn in lines:
        warn(torn.describe("dropped" if torn.path == dropped else "left out"))


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


# The options that say how to judge, shared by ``judge`` and ``judge-eval``.
JUDGING_OPTIONS = stacked(
    [
        click.option(
            "--protocol",
            type=click.Choice(["ghostei", "paper"]),
            default="ghostei",
            show_default=True,
            help="ghostei: our prompt, keyframes and JSON verdict; paper: the paper's protocol "
            "(every stored frame in order at full size, the instruction, the actions and the "
            "case's result criteria; three booleans back), stored as the paper judge.",
        ),
        click.option(
            "--judge-prompt",
            "judge_prompt",
            type=click.Path(path_type=Path),
            default=None,
            help="With --protocol paper: a prompt template file sent as written with its "
            "variables ({instruction}, {actions}, {criteria}, {frame_count}, {step_count}, "
            "{case_id}, {app}) filled (docs/judging.md).",
        ),
        model_options(image_max_side=768, model_help="The judge model (e.g. gpt-4o)."),
        click.option(
            "--max-frames",
            type=click.IntRange(1, 256),
            default=8,
            show_default=True,
            help="Keyframes shown per episode: first, last, attack surfaces, then screen changes.",
        ),
        click.option("--all-frames", is_flag=True, help="Show every frame instead of keyframes."),
        click.option(
            "--text-only",
            is_flag=True,
            help="No images: each keyframe as its screen's element list, and each step's "
            "events (for judge models that take no images).",
        ),
        click.option(
            "--judge-retries",
            type=click.IntRange(0, 10),
            default=2,
            show_default=True,
            help="Ask again this many times after an unusable answer; then the verdict is "
            "judge_error.",
        ),
        click.option(
            "--workers",
            type=click.IntRange(1, 64),
            default=4,
            show_default=True,
            help="Episodes judged at once (threads).",
        ),
    ]
)


def judging_options(command: Callable[..., None]) -> Callable[..., None]:
    """JUDGING_OPTIONS, handed to ``command`` as one JudgeSetup (``setup``) beside
    ``workers``: the two commands that judge read the options one way."""

    @functools.wraps(command)
    def with_setup(**kwargs: Any) -> None:
        setup = JudgeSetup(**{name: kwargs.pop(name) for name in JudgeSetup.__dataclass_fields__})
        command(setup=setup, **kwargs)

    return JUDGING_OPTIONS(with_setup)


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
    "--compare",
    nargs=2,
    default=None,
    metavar="JUDGE JUDGE",
    help="Agreement of two judges (rule, llm, hybrid) on the run instead of judging.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@judging_options
@click.option(
    "--force",
    is_flag=True,
    help="Judge again episodes this same judge (model, protocol, template, frames) has "
    "judged; its new verdicts replace its earlier ones. Another judge's verdicts are kept.",
)
@judge_choice_options
def judge(
    run_dir: Path,
    judge_name: str,
    compare: tuple[str, str] | None,
    fmt: str,
    setup: JudgeSetup,
    workers: int,
    force: bool,
    judge_model: str | None,
    judge_template: str | None,
    judge_text_only: bool | None,
) -> None:
    """Label a finished run with an LLM judge (no agent is re-run), or compare two judges.

    Verdicts go to RUN_DIR/judgements/llm.jsonl (hybrid.jsonl, paper.jsonl) beside the rule
    verdicts, each naming its judge (model, protocol, template, text-only, frames); a second
    call of the same judge judges only what is left (episodes without its verdict, or whose
    verdict is judge_error). A judge of another model or template stores its verdicts beside
    the earlier ones: reports then ask which (--judge-model, --judge-template). Exit 1 if any
    episode ends with judge_error. With --compare, the --judge-* options choose the stored
    judge to compare.
    """
    run = RunDir(run_dir)
    try:  # every record read once up front: a corrupt one is a user error, never a traceback
        manifest = run.manifest()
        run.cases()
        run.records()
        for stored_judge in STORED:
            stored_judgements(run, stored_judge)
    except RunDirError as exc:
        fail(str(exc))
    if compare is not None:
        _warn_torn(run.torn_lines())
        _compare(run, compare, fmt, judge_choice(judge_model, judge_template, judge_text_only))
        return
    if (judge_model, judge_template, judge_text_only) != (None, None, None):
        fail(
            "--judge-model, --judge-template and --judge-text-only choose stored verdicts "
            "for --compare; to judge, name the judge model with --model"
        )
    hold_run_dir(run)  # the judgements are written beside the run's records: one writer
    llm_judge = make_judge(run, manifest, judge_name, setup)
    identity = llm_judge.identity
    scope: Scope = "undetermined" if judge_name == "hybrid" else "all"
    todo = pending_episodes(run, identity, force=force, scope=scope)
    done = judge_records(run, llm_judge, todo, workers)
    _summary(run, "paper" if setup.protocol == "paper" else judge_name, identity, done, out)
    stored = load_judgements(run, llm_judge.name, identity)
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


@dataclass(frozen=True)
class JudgeSetup:
    """What the judging options ask for (``ghostei judge``, ``ghostei judge-eval``), but the
    judge's name, which each command reads its own way."""

    protocol: str
    judge_prompt: Path | None
    model: str | None
    base_url: str | None
    provider: str
    api_key_env: str | None
    max_frames: int
    image_max_side: int
    all_frames: bool
    text_only: bool
    judge_retries: int
    max_retries: int
    timeout: float
    max_tokens: int
    skip_endpoint_check: bool


def make_judge(
    run: RunDir, manifest: dict[str, Any], judge_name: str, setup: JudgeSetup
) -> LLMJudge:
    """The LLM judge the options describe, connected to its model (exit 2 on bad options),
    its store ready to append to; warns of what it will not see and of other judges'
    verdicts kept beside its own."""
    protocol, text_only = setup.protocol, setup.text_only
    if judge_name not in ("llm", "hybrid"):
        if judge_name == "rule":
            fail("--judge rule: rule verdicts are made by `ghostei run`; use llm or hybrid")
        fail(f"--judge {judge_name}: unknown judge; use llm or hybrid")
    template: PromptTemplate | None = None
    if protocol == "paper":
        if judge_name == "hybrid":
            fail("--protocol paper: the paper's judge is blind to the rules; use --judge llm")
        _warn_ignored_by_paper(click.get_current_context())
        if text_only:
            fail("--protocol paper sends every frame as an image; --text-only does not apply")
        if setup.judge_prompt is not None:
            try:
                template = PromptTemplate.read(setup.judge_prompt)
            except TemplateError as exc:
                fail(f"--judge-prompt {exc}")
    elif setup.judge_prompt is not None:
        fail("--judge-prompt: a template is sent only with --protocol paper")
    if not setup.model:
        fail(f"--judge {judge_name} needs a judge model: give --model (and --base-url)")
    config = ProviderConfig(
        provider=setup.provider,
        model=setup.model,
        base_url=setup.base_url,
        api_key_env=setup.api_key_env,
        temperature=0.0,
        max_retries=setup.max_retries,
        timeout=setup.timeout,
        max_tokens=setup.max_tokens,
        # The judge downscales frames itself; the provider must not do it again (the
        # paper's protocol sends the frames as the run stored them).
        image_max_side=None if protocol == "paper" else setup.image_max_side or None,
    )
    # The judge's prompt grows with the episode (its keyframes), so its size is not known.
    needs = {"the LLM judge": PromptSize(None, 0 if text_only else 1)}
    llm, _ = connect_model(config, needs, check=not setup.skip_endpoint_check)
    options = JudgeOptions(
        max_frames=setup.max_frames,
        image_max_side=setup.image_max_side or None,
        all_frames=setup.all_frames,
        retries=setup.judge_retries,
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
    others = [i for i in identities(run, llm_judge.name) if i != llm_judge.identity]
    if others:
        warn(
            f"{stored_path} holds verdicts of other judges, kept beside this one's: "
            + "; ".join(i.describe() for i in others)
        )
    return llm_judge


def judge_records(
    run: RunDir, llm_judge: LLMJudge, todo: list[EpisodeRecord], workers: int
) -> list[Judgement]:
    """Judge ``todo`` with a progress bar; the judgements made."""
    with progress_bar() as progress:
        task = progress.add_task("judging", total=len(todo))
        return judge_run(
            run,
            llm_judge,
            todo,
            workers=workers,
            on_judgement=lambda j: progress.advance(task),
        )


def _warn_ignored_by_paper(ctx: click.Context) -> None:
    """The paper's protocol sends every frame at full size: frame options given are ignored."""
    for name, flag in (
        ("max_frames", "--max-frames"),
        ("all_frames", "--all-frames"),
        ("image_max_side", "--image-max-side"),
    ):
        if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE:
            warn(
                f"{flag} does not apply to --protocol paper, which sends every frame the run "
                "stored at its stored size: ignored"
            )


def _summary(
    run: RunDir, judge_name: str, identity: JudgeIdentity, done: list[Judgement], out: Console
) -> None:
    records = judged_records(run, judge_name, identity)
    columns = [*LABELS, "undetermined", "judge_error"]
    table = Table(title=f"{identity.describe()}: labels per agent")
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


def _compare(run: RunDir, names: tuple[str, str], fmt: str, choice: JudgeChoice) -> None:
    for name in names:
        if name not in JUDGES:
            fail(f"--compare {name}: unknown judge; known: {', '.join(JUDGES)}")
    first, second = names
    try:
        result = compare_judges(
            first,
            judged_records(run, first, choice),
            second,
            judged_records(run, second, choice),
            not_blind=not_blind(run, names, choice),
        )
        used = [i for name in names for i in used_judges(run, name, choice)]
    except RunDirError as exc:  # several stored judges and no choice among them
        fail(str(exc))
    modes = _llm_modes(run) if {"llm", "hybrid"} & set(names) else {}
    if fmt == "json":
        judges = [i.model_dump() for i in used]
        click.echo(json.dumps({**result.to_json(), "llm_modes": modes, "judges": judges}, indent=2))
        return
    for identity in used:
        out.print(f"Judge: {identity.describe()}", highlight=False, markup=False)
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
    kappas = Table(title="Cohen's kappa (over TC, FAS, PAS, BF), with 95% bootstrap intervals")
    columns = ("agent", "paired", "scored by both", "observed agreement", "kappa", "left out")
    for col in columns:
        kappas.add_column(col, justify="left" if col in ("agent", "left out") else "right")
    rows = [("all agents", overall), *result.per_agent.items()]
    for name, ag in rows:
        kappas.add_row(
            Text(name),
            str(ag.paired),
            str(ag.scored),
            _with_ci(ag.observed, ag.observed_ci),
            _with_ci(ag.kappa, ag.kappa_ci),
            _left_out(ag),
        )
    out.print(kappas)
    notes = []
    if result.errors:
        notes.append(f"{result.errors} error episode(s) left out")
    if result.unpaired:
        notes.append(f"{result.unpaired} episode(s) labelled by one judge only")
    notes.append("kappa — : undefined (no episode, or one label given to every episode)")
    out.print("; ".join(notes), highlight=False)


def _with_ci(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None or ci is None:
        return _pct(value)
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _left_out(ag: Agreement) -> str:
    """Each judge's paired episodes kept out of kappa, by the label that kept them out."""
    said = []
    for judge, counts in ag.left_out.items():
        if counts:
            why = ", ".join(f"{n} {label}" for label, n in sorted(counts.items()))
            said.append(f"{judge}: {why}")
    return "; ".join(said) or "none"


def _matrix_table(ag: Agreement, title: str) -> Table:
    table = Table(title=title.format(a=ag.first, b=ag.second))
    table.add_column(f"{ag.first} \\ {ag.second}")
    for label in ag.labels:
        table.add_column(label, justify="right")
    for label, row in zip(ag.labels, ag.matrix, strict=True):
        table.add_row(label, *(str(v) for v in row))
    return table


# ----- the judge, measured -----------------------------------------------------------------------


@click.command("judge-eval")
@click.argument("truth_dir", type=click.Path(path_type=Path))
@click.option(
    "--judge",
    "judge_name",
    type=click.Choice(["llm", "hybrid", "paper", "rule"]),
    default="llm",
    show_default=True,
    help="The judge measured: llm (blind), hybrid (rules, an LLM for what they leave "
    "undetermined), paper (the LLM judge under the paper's protocol: --protocol paper), or "
    "rule (the rule judge itself, which the labelled set's build confirmed: a check).",
)
@judging_options
@click.option(
    "--sample",
    type=click.IntRange(1, None),
    default=None,
    help="Judge a seeded sample of this many episodes instead of the whole set.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="The sample's seed.")
@click.option(
    "--prices",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="A price table (JSON or TOML: model -> USD per million prompt and completion tokens) "
    "for the judging's cost.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
def judge_eval(
    truth_dir: Path,
    judge_name: str,
    setup: JudgeSetup,
    workers: int,
    sample: int | None,
    seed: int,
    prices: Path | None,
    fmt: str,
) -> None:
    """Measure a judge against a labelled set (``ghostei truth build``): it judges the set's
    episodes (or a seeded --sample of them) as ``ghostei judge`` would, storing its verdicts
    in TRUTH_DIR/judgements/ (a second call judges only what is left), then prints the
    confusion matrix against the true labels, overall and per attack vector, the precision
    and recall of each label and of compromised (FAS or PAS), Cohen's kappa against the truth
    with its 95% bootstrap interval, the episodes it gave no verdict, and its tokens and cost.
    """
    run = RunDir(truth_dir)
    try:
        manifest = run.manifest()
        vectors = {c.id: c.vector for c in run.cases()}
        truth = labelled_records(run)
        for stored_judge in STORED:
            stored_judgements(run, stored_judge)
    except RunDirError as exc:
        fail(str(exc))
    if not truth:
        fail(f"{truth_dir} is no labelled set (no record has a true label): build one with "
             "`ghostei truth build --out DIR`")  # fmt: skip
    chosen = sample_records(truth, sample, seed)
    table = None
    if prices is not None:
        try:
            table = PriceTable.load(prices)
        except ValueError as exc:
            fail(f"--prices: {exc}")
    if judge_name == "rule":
        evaluation = evaluate("rule", chosen, chosen_as_judged(run, "rule", chosen), vectors)
    else:
        if judge_name == "paper":
            judge_name, setup = "llm", replace(setup, protocol="paper")
        hold_run_dir(run)
        llm_judge = make_judge(run, manifest, judge_name, setup)
        identity = llm_judge.identity
        keys = {r.key for r in chosen}
        todo = [
            r
            for r in pending_episodes(
                run, identity, scope="undetermined" if judge_name == "hybrid" else "all"
            )
            if r.key in keys
        ]
        judge_records(run, llm_judge, todo, workers)
        kind = "paper" if setup.protocol == "paper" else judge_name
        mine = [j for key, j in load_stored(run, llm_judge.name, identity).items() if key in keys]
        usage = usage_total(mine)
        cost = None
        if table is not None:
            cost = table.cost(
                identity.model,
                Usage(
                    prompt_tokens=int(usage.get("prompt_tokens", 0)),
                    completion_tokens=int(usage.get("completion_tokens", 0)),
                ),
            )
        evaluation = evaluate(
            identity.describe(),
            chosen,
            chosen_as_judged(run, kind, chosen, identity),
            vectors,
            usage=usage,
            cost=cost,
        )
    if fmt == "json":
        click.echo(json.dumps(evaluation.to_json(), indent=2))
        return
    _print_evaluation(evaluation, len(truth))


def chosen_as_judged(
    run: RunDir, judge: str, chosen: list[EpisodeRecord], identity: JudgeIdentity | None = None
) -> list[EpisodeRecord]:
    """The chosen records as ``judge`` labels them (``identity``'s stored verdicts)."""
    keys = {r.key for r in chosen}
    try:
        return [r for r in judged_records(run, judge, identity) if r.key in keys]
    except RunDirError as exc:
        fail(str(exc))


def _print_evaluation(ev: JudgeEvaluation, total: int) -> None:
    out.print(f"Judge: {ev.judge}", highlight=False, markup=False)
    sampled = f" (a sample of {ev.episodes} of {total})" if ev.episodes < total else ""
    out.print(f"{ev.episodes} labelled episode(s){sampled}", highlight=False, markup=False)
    out.print(_truth_table(ev.matrix, "truth (rows) against the judge (columns)"))
    for vector, matrix in ev.per_vector.items():
        out.print(_truth_table(matrix, f"{vector}: truth (rows) against the judge (columns)"))
    labels = Table(title="per label (precision over the judge's verdicts, recall over the truth)")
    for col in ("label", "truth", "judged", "both", "precision", "recall"):
        labels.add_column(col, justify="left" if col == "label" else "right")
    for name, pr in [*ev.per_label.items(), ("compromised (FAS or PAS)", ev.compromised)]:
        labels.add_row(
            name, str(pr.truth), str(pr.judged), str(pr.both), _pct(pr.precision), _pct(pr.recall)
        )
    out.print(labels)
    no_verdict = ", ".join(f"{n} {why}" for why, n in sorted(ev.no_verdict.items())) or "none"
    out.print(
        f"kappa against the truth {_with_ci(ev.kappa, ev.kappa_ci)}, agreement "
        f"{_with_ci(ev.observed, ev.observed_ci)} over {ev.scored} episode(s) with a verdict "
        f"(95% bootstrap intervals); no verdict: {no_verdict}",
        highlight=False,
        markup=False,
    )
    if ev.usage:
        cost = "" if ev.cost is None else f", ${ev.cost:.4f}"
        out.print(
            f"judging: {ev.usage.get('prompt_tokens', 0)} prompt and "
            f"{ev.usage.get('completion_tokens', 0)} completion tokens in "
            f"{ev.usage.get('requests', 0)} request(s){cost}",
            highlight=False,
            markup=False,
        )


def _truth_table(matrix: list[list[int]], title: str) -> Table:
    table = Table(title=title)
    table.add_column("truth \\ judge")
    for label in MATRIX_LABELS:
        table.add_column(label, justify="right")
    for label, row in zip(LABELS, matrix, strict=True):
        table.add_row(label, *(str(v) for v in row))
    return table
