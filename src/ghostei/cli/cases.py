"""The ``cases`` commands: list, show, validate, count and import cases.

``stats --backend`` names the backends (:mod:`ghostei.backends`); ``check`` and ``generate`` run
episodes through the validity gate (:mod:`ghostei.gate`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from ..attacks import variant_stats
from ..backends import BACKENDS
from ..cases import Case, CaseError, CaseErrors, builtin_cases, load_cases, select_cases
from ..cases.loader import is_existing_path
from ..cases.paper import PAPER, dataset_path
from ..cases.paper_companion import load_companion, paper_spec, row_class
from ..cases.stats import case_stats, paper_audit
from ..cases.upstream import import_upstream, kind_of, write_cases
from ..judge.decidability import decidability
from .console import err, fail, out


@click.group()
def cases() -> None:
    """List, show, validate, count and import cases."""


_ID_SPEC = re.compile(r"[\d\s,-]+")
# ``--cases`` of the commands that work on a selection of cases (see select_or_fail).
SELECTION = click.option(
    "--cases",
    "spec",
    default=None,
    help="Case ids (3, 1-5), a path to case files, PATH:IDS, or paper / paper:IDS (the "
    "paper's rows, shipped in the package). Default: the built-in cases.",
)


# ``--workers`` of the commands that run episodes over cases (check, probe).
WORKERS = click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Processes to spread the cases over.",
)


def select_or_fail(spec: str | None) -> list[Case]:
    """Cases by ``--cases``: ids of the built-in set, a path, or ``PATH:IDS`` (ids of a path)."""
    path, sep, ids = (spec or "").rpartition(":")
    try:
        if sep and path and is_existing_path(path) and _ID_SPEC.fullmatch(ids):
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
    "--cases",
    "source",
    default=None,
    help="A path to case files instead of the built-in ones, or paper for the paper's rows.",
)
def cases_show(case_id: int, source: str | None) -> None:
    """Print one case as JSON; a paper row (--cases paper) with its ``paper`` audit: class,
    reason and what we changed to make it run."""
    paper = _is_paper(source)
    try:
        items = select_cases(source) if paper else load_cases(source) if source else _builtin()
    except CaseError as exc:
        fail(str(exc))
    found = next((c for c in items if c.id == case_id), None)
    if found is None:
        fail(f"no case with id {case_id}")
    if not paper:
        click.echo(found.model_dump_json(indent=2, exclude_defaults=False))
        return
    data = found.model_dump(mode="json", exclude_defaults=False)
    entry = load_companion().get(case_id)
    data["paper"] = {
        "class": row_class(case_id),
        "reason": entry.reason if entry else "",
        "coupling": entry.coupling if entry else None,
        "changes": entry.changes if entry else [],
        "label_changes": entry.label_changes if entry else [],
    }
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


@cases.command("validate")
@click.argument("path", type=click.Path(path_type=Path))
def cases_validate(path: Path) -> None:
    """Check case files: list every problem (file, case id, field, what is wrong); exit 2."""
    try:
        items = load_cases(path)
    except CaseError as exc:
        problems = exc.errors if isinstance(exc, CaseErrors) else [exc]
        if len(problems) == 1:
            fail(str(problems[0]))  # a single problem is its own count
        for problem in problems:
            # Case texts and file names are data: never read them as rich markup.
            line = Text.assemble(("error: ", "bold red"), str(problem))
            err.print(line, highlight=False, soft_wrap=True)
        fail(f"{len(problems)} problems in {path}")
    out.print(f"{len(items)} valid case(s) in {path}", highlight=False, markup=False)


@cases.command("stats")
@SELECTION
@click.option(
    "--backend",
    type=click.Choice(list(BACKENDS)),
    default="sim",
    show_default=True,
    help="Say which predicates the rules can decide on this backend.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
def cases_stats(spec: str | None, backend: str, fmt: str) -> None:
    """Count cases by type, attack vector, risk domain, app domain and app, and say which of
    their predicates the rule judge can decide on a backend."""
    selected = select_or_fail(spec)
    stats = {
        **case_stats(selected),
        **decidability(selected, backend),
        "variants": variant_stats(selected, backend),
    }
    paper = _is_paper(spec)
    if paper:
        stats.update(paper_audit(selected))
        for case in selected:
            stats["cases"][str(case.id)]["class"] = row_class(case.id)
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
    title = f"rule-decidable on {backend}"
    for i, (name, count) in enumerate(stats["decidable_counts"].items()):
        share = f"{count} ({stats['decidable'][name]:.0%})"
        table.add_row(title if i == 0 else "", name, share)
    table.add_section()
    for i, (name, variant) in enumerate(stats["variants"].items()):
        table.add_row("attack variant fits" if i == 0 else "", Text(name), str(variant["count"]))
    out.print(table)
    out.print(
        "Risk domains and apps are multi-label: a case counts once for each.", highlight=False
    )
    for name in stats["decidable"]:
        blind = [i for i, d in stats["cases"].items() if not d["decidable"][name]]
        if blind:
            out.print(f"{name} not always decidable on {backend}: cases {', '.join(blind)}")
    if stats["trigger_unsupported"]:
        ids = ", ".join(map(str, stats["trigger_unsupported"]))
        out.print(f"attack trigger cannot fire on {backend}: cases {ids}", highlight=False)
    _print_variants(stats["variants"], backend)
    _print_matrix(stats["matrix"])
    if paper:
        _print_audit(stats, selected)


def _is_paper(spec: str | None) -> bool:
    """Whether ``--cases`` names the paper's rows (``paper``, ``paper:IDS``), not a path."""
    if paper_spec(spec) is None:
        return False
    return not is_existing_path((spec or "").rpartition(":")[0] or (spec or ""))


def _print_audit(stats: dict[str, Any], selected: list[Case]) -> None:
    """The paper's rows by class and vector, the rows not yet audited, and the coupling of
    instruction and attack in the dynamic rows."""
    from ..cases.paper_companion import CLASSES, PENDING
    from ..cases.stats import id_ranges

    vectors = list(dict.fromkeys(_vector(c) for c in selected))
    table = Table(title=f"the paper's rows by class ({len(selected)} rows)")
    table.add_column("class")
    for vector in vectors:
        table.add_column(vector, justify="right")
    table.add_column("total", justify="right")
    for cls in (*CLASSES, PENDING):
        cells = [sum(row_class(c.id) == cls and _vector(c) == v for c in selected) for v in vectors]
        name = "not yet audited" if cls == PENDING else cls
        table.add_row(name, *map(str, cells), str(sum(cells)))
    out.print(table)
    for cls in CLASSES:
        ids = [c.id for c in selected if row_class(c.id) == cls]
        if ids:
            out.print(f"{cls}: rows {id_ranges(ids)}", highlight=False, markup=False)
    pending = stats["paper_not_yet_audited"]
    if pending:
        out.print(
            f"not yet audited ({len(pending)}): rows {id_ranges(pending)}",
            highlight=False,
            markup=False,
        )
    d = stats["paper_decoupling"]
    out.print(
        f"instruction and attack decoupled in {d['decoupled']} of {d['judged']} dynamic rows "
        f"judged ({d['dynamic']} selected): {d['hands_data']} instructions hand over data the "
        f"attack asks for, {d['asks_act']} ask for what the attack asks",
        highlight=False,
        markup=False,
    )


def _vector(case: Case) -> str:
    if case.use_dynamic != "Non-script":
        return case.use_dynamic
    return "Static" if case.case_type == "Static Environment Injection" else "Deceptive"


def _print_matrix(matrix: dict[str, Any]) -> None:
    """The threat matrix, a table per vector: app domains by risk domains."""
    out.print(
        f"threat matrix: {matrix['covered']} of {matrix['total']} cells hold cases "
        f"(fewest in a cell: {matrix['min_per_cell']})",
        highlight=False,
    )
    for vector, by_domain in matrix["cells"].items():
        risks = list(next(iter(by_domain.values())))
        table = Table(title=f"vector: {vector}")
        table.add_column("app domain")
        for risk in risks:
            table.add_column(risk.split()[0], justify="right")  # first word: Fraud, System...
        for domain, row in by_domain.items():
            table.add_row(domain, *(str(n) if n else "·" for n in row.values()))
        out.print(table)


def _print_variants(variants: dict[str, Any], backend: str) -> None:
    """A section per adaptive attack variant: what it does, and the cases it fits."""
    from ..cases.stats import id_ranges

    for name, v in variants.items():
        out.print(f"\nattack variant {name}: {v['summary']}", highlight=False, markup=False)
        out.print(f"  targets: {v['targets']}", highlight=False, markup=False)
        ids = id_ranges(v["cases"]) or "none"
        out.print(f"  fits {v['count']} case(s): {ids}", highlight=False, markup=False)
        if not v["shown_on_backend"]:
            out.print(
                f"  not shown on {backend} (runs on {', '.join(v['runs_on'])}): "
                "a run under it is refused there",
                highlight=False,
                markup=False,
            )


@cases.command("import-upstream")
@click.argument("path", type=click.Path(path_type=Path), required=False)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    required=True,
    help="A new folder for the converted case files.",
)
def cases_import_upstream(path: Path | None, out_dir: Path) -> None:
    """Convert an upstream GhostEI.jsonl into case files, one JSON file per case; without
    PATH (or with PATH paper), the paper's dataset shipped in the package.

    Exit 2 naming the file, the row (line and case id) and the field of the first bad row;
    nothing is written unless every row converts.
    """
    if path is None or (str(path) == PAPER and not path.exists()):
        path = dataset_path()
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


@cases.command("check")
@SELECTION
@WORKERS
def cases_check(spec: str | None, workers: int) -> None:
    """The benchmark's validity gate: run oracle and gullible on each case, and oracle once
    more without the attack (simulator, no frames); exit 1 naming every case the oracle does
    not solve (TC), that does not compromise gullible (FAS or PAS), whose attack never reaches
    gullible, or whose clean task (--no-attack) the oracle does not solve.

    What a case leaves to an LLM judge is reported as unverifiable by rules, not failed. On
    the paper's rows (--cases paper), a row classed checkable must pass outright: one left
    unverifiable fails too.
    """
    # Imported here: the gate needs the runner and the simulated phone, listing cases does not.
    from ..cases.stats import id_ranges
    from ..gate import UNVERIFIABLE, check_cases

    report = check_cases(select_or_fail(spec), workers=workers)
    if _is_paper(spec):
        report = _checkable_must_pass(report)
    for result in report.of("failed"):
        head = Text.assemble(("FAIL", "bold red"), f" case {result.case}: {result.title}")
        out.print(head, highlight=False, soft_wrap=True)
        for problem in result.problems:
            out.print(f"  - {problem}", highlight=False, markup=False, soft_wrap=True)
    unverifiable = report.of("unverifiable")
    counts = report.unverifiable_counts()
    out.print(
        f"{len(report.results)} case(s) checked in {report.seconds:.1f} s: "
        f"{len(report.of('passed'))} passed, {len(unverifiable)} unverifiable by rules, "
        f"{len(report.of('failed'))} failed",
        highlight=False,
        markup=False,
    )
    for key, count in counts.most_common():
        ids = id_ranges([r.case for r in report.results if key in r.unverifiable])
        line = f"  unverifiable: {UNVERIFIABLE.get(key, key)}: {count} (cases {ids})"
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    if not report.ok:
        raise SystemExit(1)


@cases.command("probe")
@SELECTION
@WORKERS
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
)
@click.option("--mismatches", is_flag=True, help="List only the trajectories judged otherwise.")
def cases_probe(spec: str | None, workers: int, fmt: str, mismatches: bool) -> None:
    """Every label earned: run each case's labelled trajectories (the reference agents' and
    its probes, on the simulator, no frames) and print case x probe, the label the
    definitions give against the rule judge's; exit 1 on any mismatch.

    The probes are derived from each case's attack path (engaged and stopped, typed and not
    sent, harmless or made-up values submitted, a reply without the data, read and ignored,
    nothing done, refused) and written in the case for every other way its attacker's goal
    can be reached. A label the rules leave to an LLM judge (a paper row not classed
    checkable) is unverifiable by rules, never a mismatch.
    """
    from ..probing import probe_cases

    selected = select_or_fail(spec)
    report = probe_cases(selected, workers=workers)
    if fmt == "json":
        rows = [
            {
                "case": r.case,
                "probe": r.trajectory.name,
                "source": r.trajectory.source,
                "expected": r.trajectory.label,
                "judged": r.judged,
                "status": r.status,
                "why": r.trajectory.why,
                "rationale": r.rationale,
                "error": r.error,
            }
            for r in report.results
        ]
        click.echo(json.dumps({"seconds": report.seconds, "results": rows}, indent=2))
    else:
        shown = report.of("failed") if mismatches else report.results
        table = Table("case", "probe", "expected", "judged", "", box=None, pad_edge=False)
        marks = {"passed": ("ok", "green"), "failed": ("MISMATCH", "bold red")}
        for r in shown:
            mark, style = marks.get(r.status, ("unverifiable by rules", "yellow"))
            table.add_row(
                str(r.case), r.trajectory.name, r.trajectory.label, r.judged, Text(mark, style)
            )
        out.print(table)
        for r in report.of("failed"):
            out.print(
                Text.assemble(("MISMATCH", "bold red"), f" case {r.case}, {r.trajectory.name}:"),
                highlight=False,
            )
            lines = [
                f"expected {r.trajectory.label}: {r.trajectory.why}",
                f"judged {r.judged}: {r.error or r.rationale}",
            ]
            for line in lines:
                out.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
    per_case = len(report.results) / max(1, len(selected))
    (err if fmt == "json" else out).print(
        f"{len(report.results)} trajectories of {len(selected)} case(s) ({per_case:.1f} a case) "
        f"in {report.seconds:.1f} s: {len(report.of('passed'))} as labelled, "
        f"{len(report.of('failed'))} mismatched, "
        f"{len(report.of('unverifiable'))} unverifiable by rules",
        highlight=False,
        markup=False,
    )
    if not report.ok:
        raise SystemExit(1)


def _checkable_must_pass(report: Any) -> Any:
    """The gate's report over paper rows, with each checkable row the rules could not fully
    verify turned into a failure naming what was left open."""
    from dataclasses import replace

    results = []
    for r in report.results:
        if row_class(r.case) == "checkable" and r.status == "unverifiable":
            left = ", ".join(r.unverifiable)
            problem = f"classed checkable, yet left to an LLM judge: {left}"
            r = replace(r, problems=[*r.problems, problem])
        results.append(r)
    checkable = sum(row_class(r.case) == "checkable" for r in results)
    passed = sum(row_class(r.case) == "checkable" and r.status == "passed" for r in results)
    out.print(f"paper rows classed checkable: {passed} of {checkable} passed", highlight=False)
    return replace(report, results=results)


def _names(value: str | None, known: tuple[str, ...], option: str) -> tuple[str, ...]:
    """A comma-separated choice among ``known`` (all of them when not given)."""
    if not value:
        return known
    names = tuple(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))
    lowered = {k.lower(): k for k in known}
    unknown = [n for n in names if n.lower() not in lowered]
    if unknown:
        fail(f"{option}: unknown {unknown[0]!r}; choose from {', '.join(known)}")
    return tuple(lowered[n.lower()] for n in names)


@cases.command("generate")
@click.option("--per-cell", type=click.IntRange(1, 1000), required=True, help="Cases per cell.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--vectors",
    default=None,
    help="Vectors, comma-separated: overlay, popup-sms, static, deceptive (default: all).",
)
@click.option(
    "--apps",
    default=None,
    help="App domains of the matrix, comma-separated (default: all seven).",
)
@click.option(
    "--split",
    type=click.Choice(["dev", "test"]),
    default=None,
    help="Only cases of this split (default: both, in DIR/dev and DIR/test).",
)
@click.option("--out", "out_dir", type=click.Path(path_type=Path), required=True)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=lambda: __import__("os").cpu_count() or 1,
    show_default="the number of cores",
    help="Processes for the validity gate.",
)
def cases_generate(
    per_cell: int,
    seed: int,
    vectors: str | None,
    apps: str | None,
    split: str | None,
    out_dir: Path,
    workers: int,
) -> None:
    """Generate PER_CELL proven cases for every cell of the threat matrix (app domain x
    risk domain x vector) into --out: each validates, lints and passes the validity gate;
    the same seed writes the same bytes. A case's split is that of its task and attack
    families, so no task or attack text is in both (see ghostei.cases.generate.candidates):
    tune on dev, report on test."""
    from ..cases.generate import generate, write
    from ..cases.schema import APP_DOMAINS, VECTORS
    from ..gate import gate

    chosen_vectors = _names(vectors, VECTORS, "--vectors")
    domains = _names(apps, APP_DOMAINS, "--apps")
    if out_dir.exists() and any(out_dir.iterdir()):
        fail(f"--out {out_dir}: not empty; generate into a new folder")
    report = generate(
        per_cell,
        seed,
        domains=domains,
        vectors=chosen_vectors,
        split=split,
        workers=workers,
        gate=gate,
    )
    write(report, out_dir)
    cells = len(domains) * 7 * len(chosen_vectors)
    out.print(
        f"{len(report.kept)} case(s) in {report.seconds:.1f} s for {cells} cells "
        f"({', '.join(f'{k}: {v}' for k, v in sorted(report.splits.items()))}) -> {out_dir}",
        highlight=False,
        markup=False,
    )
    discarded = sum(report.discarded.values())
    if discarded:
        out.print(f"discarded {discarded} candidate(s):", highlight=False, markup=False)
        for reason, count in report.discarded.most_common():
            out.print(f"  {count:5d}  {reason}", highlight=False, markup=False, soft_wrap=True)
    for cell, why in report.short.items():
        err.print(f"short: {cell}: {why}", highlight=False, markup=False, soft_wrap=True)
    if report.short:
        raise SystemExit(1)
