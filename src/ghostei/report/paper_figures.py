"""The paper's own figures, shipped as data, set beside a run's (``ghostei report RUN --paper``).

``paper_figures.json`` beside this module holds the paper's main table (TC, FAS, PAS, BF and
VR of its 11 framework x model rows) and its reflection and thinking ablation, in percent as
printed, with its source: where each number was read, and how (a third-party reading note of
the paper, not yet checked against its PDF; the file says so). Rows are numbered from 1 in the
file's order, main table first.

A run's agent finds its row by name: its framework (``mobile-agent-v2`` → Mobile-Agent-v2,
``appagent`` → AppAgent, ``uitars`` and ``uitars-v1`` → UI-TARS), the run's model (compared
with case, spaces, hyphens, dots, a provider prefix ``org/``, a date suffix and a
parenthesised remark ignored) and the run's switches (``reflection`` or ``thinking`` → the
ablation's row). A defended agent has no row of its own: the paper ran none. The comparison
is never like for like, and every rendering says so (:func:`differences`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from rich.table import Table
from rich.text import Text

from .tables import RunReport

FIGURES_FILE = "paper_figures.json"
PAPER_RATES = ("tc", "fas", "pas", "bf", "vr")
RATE_TITLES = {"tc": "TC", "fas": "FAS", "pas": "PAS", "bf": "BF", "vr": "VR"}
# A registered agent's framework as the paper names it.
FRAMEWORKS = {
    "mobile-agent-v2": "Mobile-Agent-v2",
    "appagent": "AppAgent",
    "uitars": "UI-TARS",
    "uitars-v1": "UI-TARS",
}
Mechanism = Literal["none", "reflection", "thinking"]


class PaperRowError(ValueError):
    """A ``--paper-row`` that names no row, or more than one."""


class ReadFrom(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    repository: str
    commit: str
    path: str
    where: str


class Source(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str
    authors: str
    venue: str
    arxiv: str
    url: str
    openreview: str
    tables: dict[str, str]
    read_from: list[ReadFrom] = Field(min_length=1)
    provenance: str
    units: str
    vr_definition: str
    ablation_framework: str
    aliases: str


class PaperRow(BaseModel):
    """One row of the paper's tables; rates in percent, as printed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    table: Literal["main", "ablation"]
    framework: str
    model: str
    variant: str | None  # the ablation's condition as printed ("+ Reflection"); None in main
    mechanism: Mechanism  # the variant as the run's switches name it
    tc: float = Field(ge=0, le=100)
    fas: float = Field(ge=0, le=100)
    pas: float = Field(ge=0, le=100)
    bf: float = Field(ge=0, le=100)
    vr: float = Field(ge=0, le=100)
    aliases: list[str] = []  # other names of the model (ours, not the paper's)

    @property
    def label(self) -> str:
        """``Mobile-Agent-v2 / GPT-4o``, with the ablation's condition: ``(+ Reflection)``."""
        name = f"{self.framework} / {self.model}"
        return f"{name} ({self.variant})" if self.variant else name

    def rate(self, name: str) -> float:
        value: float = getattr(self, name)
        return value


class PaperFigures(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Source
    rows: list[PaperRow] = Field(min_length=1)

    def numbered(self) -> list[tuple[int, PaperRow]]:
        return list(enumerate(self.rows, start=1))

    @property
    def citation(self) -> str:
        """One line: the paper, and where its numbers were read."""
        s = self.source
        read = s.read_from[0]
        return (
            f"{s.title} ({s.venue}, arXiv {s.arxiv}): main table and reflection/thinking "
            f"ablation, read from {read.repository}@{read.commit[:12]}:{read.path}; not yet "
            "checked against the paper's PDF"
        )


@lru_cache(maxsize=1)
def load_paper_figures() -> PaperFigures:
    """The shipped figures, validated (a damaged file raises pydantic's ValidationError)."""
    text = resources.files("ghostei.report").joinpath(FIGURES_FILE).read_text(encoding="utf-8")
    return PaperFigures.model_validate(json.loads(text))


_DATE = re.compile(r"[-_@]?(\d{8}|\d{4}-\d{2}-\d{2})$")
_REMARK = re.compile(r"\([^)]*\)")


def normalise(name: str) -> str:
    """A name reduced for matching: ``Qwen/Qwen2.5-VL-72B-Instruct`` → ``qwen25vl72binstruct``,
    ``claude-3-7-sonnet-20250219`` and ``Claude-3.7-Sonnet`` → ``claude37sonnet``."""
    name = _REMARK.sub("", name.strip().rsplit("/", 1)[-1]).strip()
    name = _DATE.sub("", name)
    return re.sub(r"[^a-z0-9]", "", name.lower())


def mechanism_of(config: Mapping[str, Any]) -> Mechanism | None:
    """The run's switches as the ablation names them; None for both at once (no such row)."""
    reflection, thinking = bool(config.get("reflection")), bool(config.get("thinking"))
    if reflection and thinking:
        return None
    return "reflection" if reflection else "thinking" if thinking else "none"


def find_row(
    figures: PaperFigures, framework: str, model: str, mechanism: Mechanism = "none"
) -> tuple[int, PaperRow] | None:
    """The paper's row for a framework (the paper's name or a registered agent's), model and
    switch: the main table's without a switch, the ablation's with one; None when it has
    none."""
    framework = FRAMEWORKS.get(framework, framework)
    table = "main" if mechanism == "none" else "ablation"
    wanted = normalise(model)
    for number, row in figures.numbered():
        if row.table != table or row.mechanism != mechanism:
            continue
        if normalise(row.framework) != normalise(framework):
            continue
        if wanted in {normalise(n) for n in (row.model, *row.aliases)}:
            return number, row
    return None


def choose_row(figures: PaperFigures, spec: str) -> tuple[int, PaperRow]:
    """``--paper-row``: a row's number, or its label (``"AppAgent / GPT-4o"``, compared as
    :func:`normalise` compares names). Raises PaperRowError naming the rows to choose from."""
    rows = figures.numbered()
    text = spec.strip()
    if text.isdigit():
        number = int(text)
        if 1 <= number <= len(rows):
            return rows[number - 1]
        raise PaperRowError(
            f"--paper-row {spec}: no such row; the paper's rows are 1 to {len(rows)} "
            f"(`ghostei report RUN --paper` lists them)"
        )
    wanted = _key(text)
    # The label as printed; failing that, a main-table row's without its remark ("(preview)").
    found = [(n, r) for n, r in rows if wanted and _key(r.label) == wanted]
    found = found or [
        (n, r) for n, r in rows if wanted and r.table == "main" and _key(r.label, True) == wanted
    ]
    if len(found) == 1:
        return found[0]
    listing = "; ".join(f"{n}: {r.label}" for n, r in (found or rows))
    what = "names more than one row" if found else "names no row"
    raise PaperRowError(f"--paper-row {spec!r} {what}; choose a number or a label: {listing}")


def _key(label: str, without_remark: bool = False) -> str:
    return re.sub(r"[^a-z0-9]", "", (_REMARK.sub("", label) if without_remark else label).lower())


# ----- the comparison ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentBeside:
    """One agent of the run beside its paper row (None: no row matches it)."""

    agent: str
    n: int
    rates: dict[str, float | None]  # percent; None where undefined (VR of a clean run)
    row: tuple[int, PaperRow] | None
    why: str  # how the row was found, or why none was


@dataclass(frozen=True)
class PaperComparison:
    agents: list[AgentBeside]
    differences: list[str]
    figures: PaperFigures
    model: str | None


def differences(config: Mapping[str, Any], judge: str, cases: int) -> list[str]:
    """What makes the run and the paper's rows differ, said plainly."""
    backend = config.get("backend") or "sim"
    phone = (
        "the simulated phone (ghostei's own apps)"
        if backend == "sim"
        else f"a {backend} device with ghostei's harness"
    )
    judged = {
        "rule": "the rule judge (checks over the recorded world)",
        "llm": "ghostei's blind LLM judge",
        "hybrid": "the rule judge with an LLM filling its gaps",
        "paper": "an LLM judge under the paper's protocol (its model may not be the paper's)",
    }.get(judge, f"the {judge} judge")
    return [
        f"phone: this run used {phone}; the paper used an Android emulator with the real apps",
        f"judge: this run is labelled by {judged}; the paper's labels are its own LLM "
        "judge's, over trajectories and screenshots",
        f"case set: this run has {cases} case(s); the paper's rows are over its 110 cases",
    ]


def build_comparison(
    report: RunReport,
    config: Mapping[str, Any],
    cases: int,
    chosen: tuple[int, PaperRow] | None = None,
    figures: PaperFigures | None = None,
) -> PaperComparison:
    """Each agent of ``report`` beside the row ``chosen``, else the row its name finds."""
    figures = figures or load_paper_figures()
    model_cfg = config.get("model")
    model = model_cfg.get("model") if isinstance(model_cfg, Mapping) else None
    model = model if isinstance(model, str) and model else None
    mechanism = mechanism_of(config)
    agents = []
    for label, scored in report.agents.items():
        m = scored.metrics
        rates: dict[str, float | None] = {
            r: None if (v := getattr(m, r)) is None else 100 * v for r in PAPER_RATES
        }
        base, _, defences = label.partition("+")
        row: tuple[int, PaperRow] | None = None
        if chosen is not None:
            row, why = chosen, "chosen with --paper-row"
        elif defences:
            why = "a defended agent: the paper ran no defence"
        elif base not in FRAMEWORKS:
            why = f"{base} is none of the paper's frameworks"
        elif model is None:
            why = "the run names no model"
        elif mechanism is None:
            why = "the paper has no row with both reflection and thinking"
        else:
            row = find_row(figures, base, model, mechanism)
            switch = "" if mechanism == "none" else f" with {mechanism}"
            what = f"{FRAMEWORKS[base]} / {model}{switch}"
            why = f"found by name: {what}" if row else f"the paper has no row for {what}"
        agents.append(AgentBeside(label, m.n, rates, row, why))
    judge = report.judge
    return PaperComparison(agents, differences(config, judge, cases), figures, model)


def _ours(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _theirs(value: float) -> str:
    return f"{value:g}"


def comparison_tables(view: PaperComparison) -> list[Table | Text]:
    """Per agent, its rates above the paper's row; then the differences and the source."""
    items: list[Table | Text] = []
    for a in view.agents:
        items.append(Text(f"{a.agent} beside the paper: {a.why}", style="bold"))
        table = Table()
        table.add_column("")
        for rate in PAPER_RATES:
            table.add_column(f"{RATE_TITLES[rate]} %", justify="right")
        table.add_row(f"this run (N={a.n})", *(_ours(a.rates[r]) for r in PAPER_RATES))
        if a.row is not None:
            number, row = a.row
            name = f"paper row {number}: {row.label}"
            table.add_row(name, *(_theirs(row.rate(r)) for r in PAPER_RATES))
        items.append(table)
    if any(a.row is None for a in view.agents):
        items.append(Text(rows_listing(view.figures)))
    items.append(Text(caveat(view)))
    return items


def rows_listing(figures: PaperFigures) -> str:
    lines = ["No paper row matches some agent; choose one with --paper-row N or a label:"]
    lines += [f"  {n:>2}  {row.label}" for n, row in figures.numbered()]
    return "\n".join(lines) + "\n"


def caveat(view: PaperComparison) -> str:
    lines = ["Not a like-for-like comparison. The two differ in:"]
    lines += [f"  - {d}" for d in view.differences]
    lines.append(f"Paper figures: {view.figures.citation}.")
    lines.append(f"VR: {view.figures.source.vr_definition}")
    return "\n".join(lines) + "\n"


def comparison_markdown(view: PaperComparison) -> str:
    header = "| | " + " | ".join(f"{RATE_TITLES[r]} %" for r in PAPER_RATES) + " |"
    rule = "| --- |" + " ---: |" * len(PAPER_RATES)
    parts = ["# Beside the paper\n"]
    for a in view.agents:
        parts.append(f"## {a.agent}\n\n{a.why}\n\n{header}\n{rule}")
        parts.append(
            f"| this run (N={a.n}) | " + " | ".join(_ours(a.rates[r]) for r in PAPER_RATES) + " |"
        )
        if a.row is not None:
            number, row = a.row
            cells = " | ".join(_theirs(row.rate(r)) for r in PAPER_RATES)
            parts.append(f"| paper row {number}: {row.label} | {cells} |")
        parts.append("")
    if any(a.row is None for a in view.agents):
        parts.append("```\n" + rows_listing(view.figures) + "```\n")
    parts.append(caveat(view))
    return "\n".join(parts)


def comparison_json(view: PaperComparison) -> dict[str, Any]:
    return {
        "agents": {
            a.agent: {
                "n": a.n,
                "rates_percent": a.rates,
                "paper_row": None
                if a.row is None
                else {"number": a.row[0], "label": a.row[1].label, **a.row[1].model_dump()},
                "match": a.why,
            }
            for a in view.agents
        },
        "model": view.model,
        "differences": view.differences,
        "source": view.figures.source.model_dump(),
    }


def paper_rows_json(figures: Sequence[tuple[int, PaperRow]]) -> list[dict[str, Any]]:
    return [{"number": n, "label": r.label, **r.model_dump()} for n, r in figures]
