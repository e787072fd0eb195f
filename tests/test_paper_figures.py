"""The paper's published figures: the shipped data, finding a row, ``report --paper``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ghostei.report.paper_figures import (
    PAPER_RATES,
    PaperRowError,
    build_comparison,
    choose_row,
    comparison_markdown,
    find_row,
    load_paper_figures,
    normalise,
)
from ghostei.report.tables import build_report
from ghostei.rundir import RunDir

from .helpers import assert_user_error, cli

N_CASES = 110


def test_figures_load_with_their_source() -> None:
    figures = load_paper_figures()
    main = [r for r in figures.rows if r.table == "main"]
    ablation = [r for r in figures.rows if r.table == "ablation"]
    assert len(main) == 11 and len(ablation) == 8
    assert {r.framework for r in main} == {"Mobile-Agent-v2", "AppAgent", "UI-TARS"}
    assert figures.source.arxiv == "2510.20333"
    assert figures.source.read_from and all(len(r.commit) == 40 for r in figures.source.read_from)
    for row in figures.rows:
        for rate in PAPER_RATES:
            assert 0 <= row.rate(rate) <= 100, (row.label, rate)


def test_every_vr_is_its_shares_as_counts_of_110() -> None:
    """VR = (FAS + PAS) / (N - BF): the transcription agrees with itself, to the printed cut."""
    for row in load_paper_figures().rows:
        fas, pas, bf = (round(row.rate(r) * N_CASES / 100) for r in ("fas", "pas", "bf"))
        vr = 100 * (fas + pas) / (N_CASES - bf)
        assert abs(vr - row.vr) < 0.02, row.label


def test_the_ablation_base_rows_repeat_the_main_table() -> None:
    figures = load_paper_figures()
    main = {
        normalise(r.model): r
        for r in figures.rows
        if r.table == "main" and r.framework == "Mobile-Agent-v2"
    }
    for row in figures.rows:
        if row.table == "ablation" and row.mechanism == "none":
            twin = main.get(normalise(row.model)) or main[normalise(row.aliases[0])]
            assert [row.rate(r) for r in PAPER_RATES] == [twin.rate(r) for r in PAPER_RATES]


@pytest.mark.parametrize(
    ("agent", "model", "mechanism", "number"),
    [
        ("mobile-agent-v2", "gpt-4o", "none", 1),
        ("mobile-agent-v2", "openai/gpt-4o-2024-08-06", "none", 1),
        ("Mobile-Agent-v2", "GPT 5", "none", 3),
        ("mobile-agent-v2", "gemini-2.5-pro", "none", 4),
        ("mobile-agent-v2", "claude-3-7-sonnet-20250219", "none", 5),
        ("appagent", "Qwen/Qwen2.5-VL-72B-Instruct", "none", 9),
        ("uitars-v1", "bytedance-research/UI-TARS-7B-SFT", "none", 10),
        ("uitars", "ByteDance-Seed/UI-TARS-1.5-7B", "none", 11),
        ("mobile-agent-v2", "gpt-4o", "reflection", 13),
        ("mobile-agent-v2", "gpt-5-chat-latest", "reflection", 15),
        ("mobile-agent-v2", "claude-3.7-sonnet", "thinking", 19),
    ],
)
def test_find_row_by_name(agent: str, model: str, mechanism: str, number: int) -> None:
    found = find_row(load_paper_figures(), agent, model, mechanism)  # type: ignore[arg-type]
    assert found is not None and found[0] == number


def test_no_row_for_what_the_paper_did_not_run() -> None:
    figures = load_paper_figures()
    assert find_row(figures, "m3a", "gpt-4o") is None
    assert find_row(figures, "appagent", "gpt-5") is None
    assert find_row(figures, "appagent", "gpt-4o", "reflection") is None
    assert find_row(figures, "mobile-agent-v2", "gpt-5-chat") is None  # only the ablation's name


def test_choose_row_by_number_or_label() -> None:
    figures = load_paper_figures()
    assert choose_row(figures, "8")[1].label == "AppAgent / GPT-4o"
    assert choose_row(figures, "appagent / gpt-4o")[0] == 8
    assert choose_row(figures, "Mobile-Agent-v2 / GPT-4o (+ Reflection)")[0] == 13
    assert choose_row(figures, "Mobile-Agent-v2 / Claude-Sonnet-4")[0] == 6
    for bad in ("0", "20", "gpt-4o", ""):
        with pytest.raises(PaperRowError):
            choose_row(figures, bad)


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("paper") / "run"
    result = cli("run", "--agent", "oracle", "--cases", "1-3", "--out", str(out), "--workers", "1")
    assert result.exit_code == 0, result.output
    return out


def test_report_paper_shows_the_run_beside_the_chosen_row(oracle_run: Path) -> None:
    result = cli("report", str(oracle_run), "--paper", "--paper-row", "1")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "this run (N=3)" in text and "100.0" in text
    assert "paper row 1: Mobile-Agent-v2 / GPT-4o" in text and "54.87" in text
    for difference in ("phone:", "judge:", "case set:", "110 cases", "2510.20333"):
        assert difference in text


def test_report_paper_without_a_match_lists_the_rows(oracle_run: Path) -> None:
    result = cli("report", str(oracle_run), "--paper")
    assert result.exit_code == 0, result.output
    assert "none of the paper's frameworks" in result.stdout
    assert "--paper-row" in result.stdout and "UI-TARS / UI-TARS-1.5-7B" in result.stdout
    assert "Not a like-for-like comparison" in result.stdout


def test_report_paper_json(oracle_run: Path) -> None:
    result = cli("report", str(oracle_run), "--paper-row", "AppAgent / GPT-4o", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    oracle = data["agents"]["oracle"]
    assert oracle["rates_percent"]["tc"] == 100.0
    assert oracle["paper_row"]["number"] == 8 and oracle["paper_row"]["vr"] == 50.0
    assert len(data["differences"]) == 3 and data["source"]["arxiv"] == "2510.20333"


@pytest.mark.parametrize("bad", ["0", "99", "no such model"])
def test_a_bad_paper_row_exits_2(oracle_run: Path, bad: str) -> None:
    result = cli("report", str(oracle_run), "--paper", "--paper-row", bad)
    assert_user_error(result, "--paper-row")


def test_report_paper_refuses_csv(oracle_run: Path) -> None:
    assert_user_error(cli("report", str(oracle_run), "--paper", "--format", "csv"), "--paper")


def test_an_agent_finds_its_row_from_the_manifest(oracle_run: Path) -> None:
    """A framework agent's records, its run's model and switch: the row its name finds."""
    records = [
        r.model_copy(update={"agent": name})
        for r in RunDir(oracle_run).records()
        for name in ("mobile-agent-v2", "mobile-agent-v2+spotlight")
    ]
    report = build_report(records, None, judge="rule", agent_order=[], by=())
    config = {"model": {"model": "openai/gpt-4o"}, "reflection": True, "backend": "sim"}
    view = build_comparison(report, config, 3)
    plain, defended = view.agents
    assert plain.row is not None and plain.row[0] == 13 and "found by name" in plain.why
    assert defended.row is None and "defence" in defended.why
    text = comparison_markdown(view)
    assert "paper row 13: Mobile-Agent-v2 / GPT-4o (+ Reflection)" in text
    assert "simulated phone" in text and "rule judge" in text and "3 case(s)" in text
