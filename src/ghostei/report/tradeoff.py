"""Defences side by side: clean utility, utility under attack and VR per agent label.

``ghostei compare`` shows this view when its runs differ in attack condition (or with
``--tradeoff``). A row is an agent label (an agent with its defences, ``gullible+overlay-gate``)
found in any of the runs; its columns are the numbers a defence is judged by (DESIGN.md,
"Clean utility"), each from the run of its condition:

- *clean utility*: TC in the run without attacks (condition ``none``);
- *utility under attack*: the benign goal met in the ``standard`` run, attacked or not
  (``goal_reached``, DESIGN.md), and FAS, PAS and VR there;
- *attack success*: (FAS + PAS) / N. VR leaves the benign failures out of its population, so
  an episode a defence leaves stuck (BF) does not lower it; attack success counts it as an
  attack that did not succeed;
- for each adaptive variant run: VR and attack success under the variant.

Every rate has its 95 % Wilson interval over its own episodes (``metrics.wilson_interval``, as
in every report; VR's over N - BF). Two runs of one condition that both hold an agent label
are ambiguous: the view is refused, naming them. A cell no run provides is "—".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.text import Text

from .. import __version__
from ..attacks import NO_ATTACK, STANDARD
from ..defences import base_agent
from ..metrics import COMPROMISED, Interval, wilson_interval
from ..rundir import EpisodeRecord
from ..verdict import LABELS
from .compare import RunEntry
from .fitted import FittedColumn, FittedTable
from .tables import (
    INTERVAL_METHOD,
    INTERVALS_ARE,
    Scored,
    ci_cell,
    csv_text,
    interval,
    md_table,
    number,
    pct,
    rate,
    with_ci,
)

if TYPE_CHECKING:  # matplotlib is imported only when a page is drawn
    from .plots import TradeoffPoint

SUCCESS = "attack_success"  # the metric name of (FAS + PAS) / N
GOAL = "goal_reached"  # utility under attack: the benign goal met, attacked or not
NO_DEFENCE = "no defence"  # how a bare agent's point is labelled in the plot


class AmbiguousRuns(ValueError):
    """Several runs of one attack condition hold the same agent label."""


# ----- attack success -------------------------------------------------------------------------


def attack_success(records: Sequence[EpisodeRecord]) -> tuple[float | None, Interval | None]:
    """(FAS + PAS) / N over the scored episodes, with its Wilson interval; None when nothing
    is scored."""
    scored = [r for r in records if r.label in LABELS]
    if not scored:
        return None, None
    compromised = sum(r.label in COMPROMISED for r in scored)
    return compromised / len(scored), wilson_interval(compromised, len(scored))


# ----- the view -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One agent label's numbers in the run of one condition."""

    run: str
    scored: Scored
    # Rates the run's own metrics do not have: attack success.
    extra: dict[str, tuple[float | None, Interval | None]]

    @property
    def n(self) -> int:
        return self.scored.metrics.n

    def value(self, metric: str) -> float | None:
        if metric in self.extra:
            return self.extra[metric][0]
        return rate(self.scored.metrics, metric)

    def ci(self, metric: str) -> Interval | None:
        return self.extra[metric][1] if metric in self.extra else self.scored.ci.get(metric)


@dataclass(frozen=True)
class Column:
    """A column of the view: a metric of the run of one condition."""

    key: str  # its JSON name
    title: str
    condition: str
    metric: str


@dataclass(frozen=True)
class Row:
    agent: str  # the agent label: the agent and its defences
    cells: dict[str, Cell | None]  # condition -> the label's numbers in that run

    @property
    def base(self) -> str:
        return base_agent(self.agent)

    @property
    def defences(self) -> list[str]:
        return self.agent.split("+")[1:]

    def value(self, column: Column) -> float | None:
        cell = self.cells.get(column.condition)
        return cell.value(column.metric) if cell else None

    def ci(self, column: Column) -> Interval | None:
        cell = self.cells.get(column.condition)
        return cell.ci(column.metric) if cell else None


@dataclass(frozen=True)
class Tradeoff:
    judge: str
    runs: list[RunEntry]
    variants: list[str]  # the adaptive variants among the runs' conditions, in order met
    columns: list[Column]
    rows: list[Row]

    @property
    def conditions(self) -> list[str]:
        return [NO_ATTACK, STANDARD, *self.variants]


def columns_for(variants: Sequence[str]) -> list[Column]:
    """The view's columns: clean utility, the standard run's, then two per variant."""
    columns = [
        Column("clean_utility", "clean utility", NO_ATTACK, "tc"),
        Column("utility_under_attack", "utility under attack", STANDARD, GOAL),
        Column("fas", "FAS", STANDARD, "fas"),
        Column("pas", "PAS", STANDARD, "pas"),
        Column("vr", "VR", STANDARD, "vr"),
        Column(SUCCESS, "attack success", STANDARD, SUCCESS),
    ]
    for v in variants:
        columns.append(Column(f"vr_{v}", f"VR {v}", v, "vr"))
        columns.append(Column(f"{SUCCESS}_{v}", f"attack success {v}", v, SUCCESS))
    return columns


def _labels(entry: RunEntry) -> list[str]:
    """The agent labels with records in a run, in its order."""
    seen = dict.fromkeys(r.agent for r in entry.records)
    return [a for a in entry.agents if a in seen] + [a for a in seen if a not in entry.agents]


def build_tradeoff(runs: Sequence[RunEntry], judge: str = "rule") -> Tradeoff:
    """The trade-off view of ``runs``; AmbiguousRuns when two runs of one condition hold the
    same agent label (every such clash is named)."""
    variants = list(dict.fromkeys(e.attack for e in runs if e.attack not in (NO_ATTACK, STANDARD)))
    holders: dict[tuple[str, str], list[RunEntry]] = {}  # (label, condition) -> runs
    order: list[str] = []
    for entry in runs:
        for label in _labels(entry):
            holders.setdefault((label, entry.attack), []).append(entry)
            if label not in order:
                order.append(label)
    clashes = [
        f"{label} is in {len(entries)} runs of condition {attack!r}: "
        + ", ".join(e.name for e in entries)
        for (label, attack), entries in holders.items()
        if len(entries) > 1
    ]
    if clashes:
        raise AmbiguousRuns(
            "ambiguous trade-off: " + "; ".join(clashes) + " (compare one run per condition "
            "for each agent and defences)"
        )
    # Each agent's labels together, agents in the order first met.
    bases = list(dict.fromkeys(base_agent(a) for a in order))
    order.sort(key=lambda a: bases.index(base_agent(a)))
    conditions = [NO_ATTACK, STANDARD, *variants]
    rows = []
    for label in order:
        cells: dict[str, Cell | None] = {}
        for condition in conditions:
            found = holders.get((label, condition))
            if not found:
                cells[condition] = None
                continue
            records = [r for r in found[0].records if r.agent == label]
            extra = {SUCCESS: attack_success(records)}
            cells[condition] = Cell(found[0].name, Scored.of(records), extra)
        rows.append(Row(label, cells))
    return Tradeoff(judge, list(runs), variants, columns_for(variants), rows)


# ----- rendering ------------------------------------------------------------------------------

_CONDITION_NAMES = {NO_ATTACK: "clean", STANDARD: "standard"}


def _prefix(condition: str) -> str:
    """How a condition's run and N are named in JSON and CSV: clean, standard or the variant."""
    return _CONDITION_NAMES.get(condition, condition)


def _ci_json(ci: Interval | None) -> list[float] | None:
    return list(ci) if ci else None


def tradeoff_json(t: Tradeoff) -> dict[str, Any]:
    """The view as JSON: rates as fractions, ``<column>_ci`` their bounds; a variant's
    columns under ``variants``."""
    rows = []
    for row in t.rows:
        data: dict[str, Any] = {
            "agent": row.agent,
            "base_agent": row.base,
            "defences": row.defences,
        }
        variants: dict[str, dict[str, Any]] = {v: {} for v in t.variants}
        for condition in t.conditions:
            cell = row.cells.get(condition)
            where = variants.get(condition, data)
            key = "" if where is not data else f"{_prefix(condition)}_"
            where[f"{key}run"] = cell.run if cell else None
            where[f"{key}n"] = cell.n if cell else None
        for column in t.columns:
            if column.condition in variants:
                where, key = variants[column.condition], column.metric
            else:
                where, key = data, column.key
            where[key] = row.value(column)
            where[f"{key}_ci"] = _ci_json(row.ci(column))
        rows.append({**data, "variants": variants})
    return {
        "judge": t.judge,
        "view": "tradeoff",
        "runs": [
            {"name": e.name, "path": str(e.path), "model": e.model, "attack": e.attack}
            for e in t.runs
        ],
        "variants": t.variants,
        "intervals": INTERVAL_METHOD,
        "rows": rows,
    }


def tradeoff_csv(t: Tradeoff) -> str:
    """One row per agent label: each condition's run and N, then its columns with bounds."""
    header = ["agent", "base_agent", "defences"]
    for condition in t.conditions:
        header += [f"{_prefix(condition)}_run", f"{_prefix(condition)}_n"]
        for column in t.columns:
            if column.condition == condition:
                header += [column.key, f"{column.key}_lo", f"{column.key}_hi"]
    body = []
    for row in t.rows:
        cells = [row.agent, row.base, "+".join(row.defences)]
        for condition in t.conditions:
            cell = row.cells.get(condition)
            cells += [cell.run if cell else "", str(cell.n) if cell else ""]
            for column in t.columns:
                if column.condition == condition:
                    ci = row.ci(column)
                    cells += [number(row.value(column))]
                    cells += [number(ci[0]), number(ci[1])] if ci else ["", ""]
        body.append(cells)
    return csv_text(header, body)


def explanation(t: Tradeoff) -> str:
    return (
        f"Judge: {t.judge}. Per agent and defences: clean utility is TC in the run without "
        "attacks; utility under attack (the benign goal met, attacked or not), FAS, PAS and "
        "VR come from the standard run; attack "
        "success = (FAS + PAS) / N, which unlike VR = (FAS + PAS) / (N − BF) does not drop the "
        "episodes a defence leaves stuck (BF); a variant's columns come from its run. Brackets "
        f"are {INTERVALS_ARE}; — where no run gives the number or it is undefined."
    )


def run_lines(t: Tradeoff) -> list[str]:
    """Each run compared: its name, condition and cases."""
    out = []
    for e in t.runs:
        cases = f", {e.cases} cases" if e.cases is not None else ""
        out.append(f"{e.name}: attack {e.attack}{cases}")
    return out


def tradeoff_markdown(t: Tradeoff) -> str:
    header = ["agent", *(c.title for c in t.columns)]
    body = [[row.agent, *(with_ci(row.value(c), row.ci(c)) for c in t.columns)] for row in t.rows]
    parts = [
        "# GhostEI defences side by side",
        explanation(t),
        md_table(header, body),
        "Runs:\n" + "\n".join(f"- {line}" for line in run_lines(t)),
    ]
    return "\n\n".join(parts) + "\n"


# Narrow headers for a terminal.
_TERMINAL = {"clean utility": "clean util.", "utility under attack": "util. attacked"}


def tradeoff_tables(t: Tradeoff) -> list[RenderableType]:
    title = f"GhostEI defences side by side (judge: {t.judge})"
    titles = [_TERMINAL.get(c.title, c.title) for c in t.columns]
    table = FittedTable(
        title, [FittedColumn("agent", name=True), *(FittedColumn(x) for x in titles)]
    )
    last = None
    for row in t.rows:
        if last is not None and row.base != last:
            table.add_section()
        last = row.base
        table.add_row(row.agent, *(ci_cell(row.value(c), row.ci(c)) for c in t.columns))
    note = explanation(t).replace("Brackets are", "The dim lines are the")
    return [table, Text(note, style="dim"), *(Text(line) for line in run_lines(t))]


# ----- HTML -----------------------------------------------------------------------------------


def tradeoff_points(t: Tradeoff) -> list[TradeoffPoint]:
    """The plot's points: x clean utility, y VR under the standard attack, and per variant
    its VR; coloured by agent, labelled by defences."""
    from . import plots

    bases = list(dict.fromkeys(row.base for row in t.rows))
    clean, vr = t.columns[0], next(c for c in t.columns if c.key == "vr")
    by_variant = {c.condition: c for c in t.columns if c.metric == "vr" and c.condition != STANDARD}
    return [
        plots.TradeoffPoint(
            label=row.agent,
            group=bases.index(row.base),
            text="+".join(row.defences) or NO_DEFENCE,
            x=row.value(clean),
            x_ci=row.ci(clean),
            y=row.value(vr),
            y_ci=row.ci(vr),
            variants={v: (row.value(by_variant[v]), row.ci(by_variant[v])) for v in t.variants},
        )
        for row in t.rows
    ]


def tradeoff_html(t: Tradeoff) -> str:
    """A standalone page: the view's table and the plot of clean utility against VR. The same
    runs give the same bytes: nothing on it depends on the time or the machine's state."""
    from markupsafe import Markup

    from . import plots
    from .html import asset, environment

    bases = list(dict.fromkeys(row.base for row in t.rows))
    rows = [
        {
            "agent": row.agent,
            "colour": plots.agent_colour(bases.index(row.base)),
            "cells": [(pct(row.value(c)), interval(row.ci(c))) for c in t.columns],
        }
        for row in t.rows
    ]
    svg = plots.tradeoff_svg(tradeoff_points(t), t.variants, bases) if t.rows else ""
    template = environment().get_template("compare.html.j2")
    return template.render(
        judge=t.judge,
        runs=run_lines(t),
        columns=[c.title for c in t.columns],
        rows=rows,
        variants=t.variants,
        explanation=explanation(t),
        plot=Markup(svg),
        version=__version__,
        css=Markup(asset("report.css")),
    )
