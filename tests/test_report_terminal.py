"""Reports on a terminal: at 80 columns no figure, interval or agent name is cut ("100…",
"orac…"); the columns that do not fit continue in a table below, under the same keys."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from ghostei.cli import console
from ghostei.cli.run import _print_summary
from ghostei.metrics import RATES
from ghostei.report.compare import RunEntry, compare_tables, leaderboard
from ghostei.report.fitted import FittedColumn, FittedTable
from ghostei.report.tables import (
    Scored,
    bounds_pct,
    build_report,
    pct,
    rate,
    report_tables,
    summary_table,
)
from ghostei.report.tradeoff import build_tradeoff, tradeoff_tables
from ghostei.rundir import EpisodeRecord

from .helpers import episode

LONG_NAMES = ("gullible+overlay-gate+spotlight", "oracle+overlay-gate+provenance", "random")


def records(agents: tuple[str, ...] = LONG_NAMES, n: int = 110) -> list[EpisodeRecord]:
    """Per agent, n episodes of mixed labels (and a few unexposed), so figures differ."""
    labels = ("FAS", "TC", "PAS", "BF", "FAS", "FAS", "TC")
    out = []
    for k, agent in enumerate(agents):
        for i in range(n):
            label = labels[(i * (k + 1)) % len(labels)] if k else "FAS"
            out.append(episode(label, i + 1, agent, exposed=i % 9 != 0))
    return out


def rendered(*items: object, width: int = 80) -> str:
    screen = Console(file=io.StringIO(), width=width, color_system=None, record=True)
    for item in items:
        screen.print(item)
    return screen.export_text()


def figures(s: Scored, names: tuple[str, ...] = RATES) -> list[str]:
    """What a terminal must show of an agent's rates: each value and its interval, whole."""
    shown = []
    for name in names:
        shown.append(pct(rate(s.metrics, name)))
        ci = s.ci[name]
        if ci is not None:
            shown.append("{}–{}".format(*bounds_pct(ci, decimals=0)))
    return shown


def assert_whole(text: str, width: int, names: list[str], shown: dict[str, list[str]]) -> None:
    assert "…" not in text
    assert all(len(line) <= width for line in text.splitlines()), text
    for name in names:
        assert name in text, name  # on one line, never folded or cut
    for agent, values in shown.items():
        lines = [line for line in text.splitlines() if agent in line]
        assert lines, agent
        # Each figure appears in a table row of its agent, or in the dim line just below.
        rows = text.splitlines()
        near = "\n".join(
            rows[i] + "\n" + rows[i + 1]
            for i, line in enumerate(rows[:-1])
            if line.lstrip().startswith(agent)
        )
        for value in values:
            assert value in near, (agent, value, text)


def test_the_summary_fits_80_columns_with_long_agent_names() -> None:
    report = build_report(records(), by=())
    text = rendered(summary_table(report))
    shown = {a: figures(s) for a, s in report.agents.items()}
    assert_whole(text, 80, list(LONG_NAMES), shown)
    assert "(continued)" in text  # the rates that did not fit, below
    assert "96–100" in text  # gullible's FAS 110 of 110: Wilson's interval, rounded outward
    # Wide enough, it is one table.
    assert "(continued)" not in rendered(summary_table(report), width=200)


@pytest.mark.parametrize("width", [60, 80, 100, 120])
def test_no_width_cuts_a_figure(width: int) -> None:
    report = build_report(records(("oracle", "gullible", "random"), n=7), by=())
    text = rendered(summary_table(report), width=width)
    shown = {a: figures(s) for a, s in report.agents.items()}
    assert_whole(text, width, ["oracle", "gullible", "random"], shown)


def test_the_run_summary_fits_80_columns(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Printed after `ghostei run`: before, it cut "100…" and "orac…" at 80 columns.
    monkeypatch.setattr(console.out, "width", 80)
    rs = records()
    _print_summary(rs, list(LONG_NAMES))
    text = capsys.readouterr().out
    report = build_report(rs, by=())
    assert_whole(text.split("Dim, under")[0], 80, list(LONG_NAMES), {
        a: figures(s) for a, s in report.agents.items()
    })  # fmt: skip
    assert "GhostEI results" in text and "Wilson" in text


def test_breakdowns_leaderboard_and_tradeoff_fit_80_columns() -> None:
    from ghostei.cases import builtin_cases

    cases = {c.id: c for c in builtin_cases()}
    rs = records(n=12)
    report = build_report(rs, cases, by=("risk",))
    text = rendered(*report_tables(report))
    assert "…" not in text and all(len(line) <= 80 for line in text.splitlines())
    assert (
        "by risk domain" in text
        and "by risk domain (multi-label: a case counts in each) (continued)" in text
    )
    entry = RunEntry("run-with-a-long-name", Path("r"), "some-model-7b", list(LONG_NAMES), rs)
    board = rendered(*compare_tables([entry], leaderboard([entry]), None, "rule"))
    assert "…" not in board and all(len(line) <= 80 for line in board.splitlines())
    for name in LONG_NAMES:
        assert name in board
    view = rendered(*tradeoff_tables(build_tradeoff([entry])))
    assert "…" not in view and all(len(line) <= 80 for line in view.splitlines())
    for name in LONG_NAMES:
        assert name in view


def test_a_name_longer_than_the_terminal_folds_whole() -> None:
    name = "gullible+" + "+".join(["overlay-gate"] * 8)  # 112 characters
    table = FittedTable("t", [FittedColumn("agent", name=True), FittedColumn("N")])
    table.add_row(name, "110")
    text = rendered(table)
    assert "…" not in text and "110" in text
    lines = text.splitlines()
    body = lines[next(i for i, line in enumerate(lines) if "─" in line) + 1 :]  # the rows
    assert "".join(line.replace("110", "").strip() for line in body) == name
