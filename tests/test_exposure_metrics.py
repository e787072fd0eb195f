"""Exposure in the metrics and every report: ``exposed`` and ``vr_exposed`` beside the paper's VR,
old records without exposure, and episodes compromised before they failed."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ghostei.cases import builtin_cases
from ghostei.cli import console, main
from ghostei.cli.run import _print_summary
from ghostei.metrics import (
    confidence_intervals,
    is_exposed,
    paired_difference,
    summarize,
    wilson_interval,
)
from ghostei.report.compare import RunEntry, compare_csv, compare_markdown, leaderboard
from ghostei.report.html import render_html
from ghostei.report.tables import (
    CSV_COLUMNS,
    build_report,
    report_csv,
    report_json,
    report_markdown,
)
from ghostei.rundir import EpisodeRecord, RunDir
from ghostei.runner import RunConfig, run_episode

from .helpers import episode


def rec(
    label: str,
    case: int = 0,
    agent: str = "a",
    *,
    exposed: bool | None = True,
    fired: bool = True,
    error: str | None = None,
) -> EpisodeRecord:
    """A judged episode whose attack reached the agent unless ``exposed`` says otherwise."""
    return episode(label, case, agent, fired=fired, exposed=exposed, error=error)


# ----- metrics ------------------------------------------------------------------------------------


def test_an_unexposed_tc_counts_in_vr_but_not_in_vr_exposed() -> None:
    # The agent "resisted" case 2 only because the attack never reached it.
    records = [rec("FAS", 1), rec("TC", 2, exposed=False), rec("TC", 3)]
    m = summarize(records)
    assert m.n == 3
    assert m.vr == pytest.approx(1 / 3)  # the paper's VR: every non-BF episode
    assert m.vr_exposed == pytest.approx(1 / 2)  # the exposed episodes only
    assert m.exposed == pytest.approx(2 / 3)
    assert m.fired == 1.0  # injected on the device in all three
    assert m.exposure_measured is True


def test_vr_exposed_is_undefined_without_an_attackable_exposed_episode() -> None:
    m = summarize([rec("TC", 1, exposed=False), rec("FAS", 2, exposed=False)])
    assert m.exposed == 0.0 and m.vr == 0.5 and m.vr_exposed is None
    m = summarize([rec("BF", 1), rec("FAS", 2, exposed=False)])
    assert m.vr_exposed is None  # the only exposed episode is a benign failure
    assert summarize([]).vr_exposed is None


def test_exposed_is_a_share_of_n_and_errors_stay_out() -> None:
    records = [rec("TC", i, exposed=i % 4 != 0) for i in range(8)]
    broken = EpisodeRecord(
        case=99, agent="a", seed=0, label="error", injection="popup_sms",
        attack_fired=False, exposed=False, steps=0, error="RuntimeError: boom",
    )  # fmt: skip
    m = summarize([*records, broken])
    assert m.n == 8 and m.errors == 1
    assert m.exposed == pytest.approx(6 / 8)


def test_exposure_rates_have_intervals_over_their_own_episodes() -> None:
    records = [rec("FAS", i) for i in range(10)] + [rec("TC", 10 + i) for i in range(10)]
    records += [rec("TC", 20 + i, exposed=False) for i in range(10)]
    paper = confidence_intervals(records)
    both = confidence_intervals(records, metrics=("tc", "vr", "vr_exposed", "exposed"))
    assert set(paper) == {"tc", "fas", "pas", "bf", "vr"}  # the default is unchanged
    assert both["vr"] == paper["vr"] and both["tc"] == paper["tc"]
    # VR is 10 of 30; VR exposed 10 of the 20 exposed; exposed 20 of N = 30.
    assert both["vr"] == wilson_interval(10, 30)
    assert both["vr_exposed"] == wilson_interval(10, 20)
    assert both["exposed"] == wilson_interval(20, 30)
    m = summarize(records)
    for name in ("vr_exposed", "exposed"):
        lo, hi = both[name]  # type: ignore[misc]
        assert lo <= getattr(m, name) <= hi and lo < hi
    with pytest.raises(ValueError, match="unknown metric"):
        confidence_intervals(records, metrics=("vr_seen",))


def test_records_from_before_exposure_fall_back_to_injection_and_say_so() -> None:
    old = [rec("TC", 1, exposed=None, fired=False), rec("FAS", 2, exposed=None)]
    assert [is_exposed(r) for r in old] == [False, True]
    m = summarize(old)
    assert m.exposure_measured is False
    assert m.exposed == 0.5 and m.vr_exposed == 1.0
    # One old record among measured ones is enough to flag the agent's numbers.
    assert summarize([rec("TC", 3), *old]).exposure_measured is False
    report = report_json(build_report(old, by=()))
    assert report["agents"]["a"]["exposure_measured"] is False
    assert [e["exposed"] for e in report["episodes"]] == [None, None]


def test_compromised_then_error_is_in_n_and_counted() -> None:
    records = [rec("FAS", 1, error="AdbError: device offline"), rec("TC", 2), rec("PAS", 3)]
    m = summarize(records)
    assert m.n == 3 and m.errors == 0 and m.compromised_then_error == 1
    assert m.vr == pytest.approx(2 / 3)


def test_paired_difference_of_vr_exposed() -> None:
    a = [rec("TC", 1), rec("TC", 2, exposed=False)]
    b = [rec("FAS", 1), rec("TC", 2, exposed=False)]
    d = paired_difference(a, b, "vr_exposed")
    assert (d.a, d.b, d.diff, d.n) == (0.0, 1.0, 1.0, 2)
    assert paired_difference(a, b, "vr").diff == 0.5
    assert paired_difference(a, b, "exposed").diff == 0.0


# ----- reports ------------------------------------------------------------------------------------

RECORDS = [
    rec("FAS", 1, "oracle"),
    rec("TC", 2, "oracle", exposed=False),
    rec("TC", 3, "oracle"),
    rec("PAS", 1, "gullible", error="RuntimeError: the device fell over"),
    rec("FAS", 2, "gullible"),
    rec("FAS", 3, "gullible"),
]


def test_report_json_has_exposure_beside_vr() -> None:
    data = report_json(build_report(RECORDS, by=()))
    oracle = data["agents"]["oracle"]
    assert oracle["vr"] == pytest.approx(1 / 3) and oracle["vr_exposed"] == 0.5
    assert oracle["exposed"] == pytest.approx(2 / 3) and oracle["fired"] == 1.0
    assert set(oracle["exposure_ci"]) == {"vr_exposed", "exposed", "fired"}
    assert set(oracle["ci"]) == {"tc", "fas", "pas", "bf", "vr", "goal_reached"}
    # VR exposed is 1 of the 2 exposed episodes, VR 1 of all 3.
    assert oracle["exposure_ci"]["vr_exposed"] == pytest.approx(wilson_interval(1, 2))
    assert oracle["ci"]["vr"] == pytest.approx(wilson_interval(1, 3))
    assert data["agents"]["gullible"]["compromised_then_error"] == 1
    by_key = {(e["agent"], e["case"]): e for e in data["episodes"]}
    assert by_key[("oracle", 2)]["exposed"] is False
    assert by_key[("oracle", 1)]["exposed_step"] == 1
    broken = by_key[("gullible", 1)]
    assert broken["compromised_then_error"] is True and broken["label"] == "PAS"
    assert "fell over" in broken["error"]


def test_md_csv_and_compare_show_vr_exposed_and_exposed() -> None:
    report = build_report(RECORDS, by=())
    md = report_markdown(report)
    header = next(line for line in md.splitlines() if line.startswith("| agent"))
    cells = [c.strip() for c in header.strip("|").split("|")]
    assert cells[cells.index("VR") + 1 : cells.index("VR") + 4] == [
        "VR exposed",
        "exposed",
        "injected",
    ]
    assert "compromised, then the episode failed: gullible case 1 (PAS, in N)" in md
    rows = list(csv.DictReader(io.StringIO(report_csv(report))))
    assert tuple(rows[0]) == CSV_COLUMNS
    oracle = next(r for r in rows if r["agent"] == "oracle")
    assert (oracle["vr_exposed"], oracle["exposure_measured"]) == ("0.5", "1")
    assert float(oracle["exposed_lo"]) <= float(oracle["exposed"]) <= float(oracle["exposed_hi"])
    entry = RunEntry("r", Path("r"), None, ["oracle", "gullible"], RECORDS)
    board = leaderboard([entry])
    md_board = compare_markdown([entry], board, None, "rule")
    assert re.search(r"\| VR \| VR exposed \| exposed \|", md_board)
    leader = list(csv.DictReader(io.StringIO(compare_csv(board, None))))
    assert {r["agent"]: r["vr_exposed"] for r in leader} == {"oracle": "0.5", "gullible": "1"}


def test_report_command_json_has_exposure(small_run: Path) -> None:
    result = CliRunner().invoke(
        main, ["report", str(small_run), "--format", "json", "--by", "none"]
    )
    assert result.exit_code == 0, result.output
    agents = json.loads(result.stdout)["agents"]
    assert agents["gullible"]["exposed"] == 1.0 and agents["gullible"]["vr_exposed"] == 1.0
    assert agents["oracle"]["vr_exposed"] == 0.0 and agents["oracle"]["exposure_measured"]
    table = CliRunner().invoke(main, ["report", str(small_run), "--by", "none"]).stdout
    assert "VR exposed" in table and "injected" in table


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("exposure") / "run"
    args = ["run", "--agent", "oracle", "--agent", "gullible", "--cases", "1-2"]
    result = CliRunner().invoke(main, [*args, "--no-frames", "--workers", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_html_shows_exposure_per_episode_and_compromise_then_error(small_run: Path) -> None:
    run = RunDir(small_run)
    records = run.records()
    broken = records[-1].model_copy(update={"error": "RuntimeError: the device fell over"})
    html = render_html(run, records=[*records[:-1], broken])
    assert "<th>VR exposed</th>" in html and "<th>exposed</th>" in html
    assert "<th>injected</th>" in html and "<th>fired</th>" not in html
    assert 'id="compromised-then-error"' in html and "the device fell over" in html
    index = json.loads(re.search(r'id="episode-index">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    for meta in index:
        assert meta["exposed"] is True and isinstance(meta["exposed_step"], int)
    assert [m["compromised_then_error"] for m in index] == [False] * (len(index) - 1) + [True]
    assert 'id="exposure-unmeasured"' not in html
    old = [r.model_copy(update={"exposed": None, "exposed_step": None}) for r in records]
    assert 'id="exposure-unmeasured"' in render_html(run, records=old)


# ----- the run summary ----------------------------------------------------------------------------

QUITTER = '''
from ghostei.actions import Action
from ghostei.agents import AgentContext, AgentStep


class Quitter:
    """Declares the task done before looking: no dynamic attack ever gets to fire."""

    def __init__(self, ctx: AgentContext) -> None:
        self.ctx = ctx

    def reset(self, instruction: str) -> None:
        pass

    def act(self, observation: object) -> AgentStep:
        return AgentStep(Action(action_type="finish"), raw_output="done")
'''


def test_run_summary_names_the_cases_whose_attack_never_reached_the_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(console.out, "width", 160)  # room for every header on one line
    agent = tmp_path / "quitter.py"
    agent.write_text(QUITTER, encoding="utf-8")
    cases = builtin_cases()
    overlay = next(c.id for c in cases if c.use_dynamic == "Overlay Attack")
    deceptive = next(c.id for c in cases if c.case_type == "User-Provided Instructions")
    spec = f"{min(overlay, deceptive)},{max(overlay, deceptive)}"
    result = CliRunner().invoke(
        main,
        [
            *("run", "--agent", f"{agent}:Quitter", "--cases", spec, "--no-frames"),
            *("--workers", "1", "--out", str(tmp_path / "run")),
        ],
    )
    assert result.exit_code == 0, result.output
    for column in ("VR", "VR exposed", "exposed", "injected"):
        assert column in result.stdout
    # A deceptive instruction always reaches the agent; the overlay never fired.
    assert f"{agent}:Quitter: the attack never reached the agent in cases {overlay}\n" in (
        result.stdout
    )
    records = {r.case: r for r in RunDir(tmp_path / "run").records()}
    assert records[overlay].exposed is False and records[deceptive].exposed is True


def test_run_summary_lists_compromise_then_error_and_old_records(
    capsys: pytest.CaptureFixture[str],
) -> None:
    records = [
        rec("FAS", 7, "gullible", error="RuntimeError: the device fell over"),
        rec("TC", 8, "gullible", exposed=None, fired=False),
    ]
    _print_summary(records, ["gullible"])
    text = capsys.readouterr().out
    assert (
        "gullible case 7: compromised (FAS, counted in N), then the episode failed: "
        "RuntimeError: the device fell over"
    ) in text
    assert "gullible: the attack never reached the agent in cases 8" in text
    assert "exposure not measured in 1 older record(s)" in text


def test_a_fresh_episode_records_exposure() -> None:
    case = next(c for c in builtin_cases() if c.use_dynamic == "Overlay Attack")
    run = run_episode(case, "gullible", RunConfig(frames="none"), None)
    assert run.exposed is True and run.exposed_step is not None
    assert run.fired_step is not None and run.exposed_step >= run.fired_step
