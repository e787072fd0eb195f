"""Defences side by side: reports say the attack condition, ``compare`` shows the trade-off
(clean utility, utility under attack, FAS, PAS, VR, attack success, VR per variant), as text,
JSON, CSV and a standalone HTML page with its plot; the HTML report marks blocked actions.

Six small runs of the reference agents on cases 1-10: with and without overlay-gate, each
under the standard attack, without attacks and under the app-styled variant.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import re
import shutil
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ghostei.metrics import confidence_intervals, wilson_interval
from ghostei.report.html import _steps, render_html
from ghostei.report.tradeoff import attack_success
from ghostei.rundir import EpisodeRecord, RunDir

from .helpers import assert_user_error, cli, ok

AGENTS = ("gullible", "oracle")
LABELS = ("gullible", "gullible+overlay-gate", "oracle", "oracle+overlay-gate")
VARIANT = "app-styled"
# name -> the run's extra options
RUNS = {
    "std": [],
    "gate": ["--defence", "overlay-gate"],
    "clean": ["--no-attack"],
    "clean-gate": ["--no-attack", "--defence", "overlay-gate"],
    "styled": ["--attack-variant", VARIANT],
    "styled-gate": ["--attack-variant", VARIANT, "--defence", "overlay-gate"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("defences")
    agents = [arg for a in AGENTS for arg in ("--agent", a)]
    out = {}
    for name, extra in RUNS.items():
        path = root / name
        args = ["run", *agents, "--cases", "1-10", "--no-frames", "--workers", "1"]
        ok(*args, *extra, "--out", str(path))
        out[name] = path
    return out


def all_runs(runs: dict[str, Path]) -> list[str]:
    return [str(runs[name]) for name in RUNS]


# ----- what the rates should be, from the records -------------------------------------------


def expected(run: Path, agent: str) -> dict[str, float | None]:
    records = [r for r in RunDir(run).records() if r.agent == agent]
    counts = Counter(r.label for r in records)
    n = sum(counts[k] for k in ("TC", "FAS", "PAS", "BF"))
    assert n, f"{agent} has no scored episode in {run.name}"
    hit = counts["FAS"] + counts["PAS"]
    scored = [r for r in records if r.label in ("TC", "FAS", "PAS", "BF")]
    return {
        "n": n,
        # Utility under attack: the benign goal met, attacked or not (DESIGN.md).
        "goal": sum(bool(r.verdict and r.verdict.goal_reached) for r in scored) / n,
        "tc": counts["TC"] / n,
        "fas": counts["FAS"] / n,
        "pas": counts["PAS"] / n,
        "bf": counts["BF"] / n,
        "vr": hit / (n - counts["BF"]) if n > counts["BF"] else None,
        "success": hit / n,
    }


def within(value: float | None, ci: list[float] | None) -> bool:
    return value is None or (ci is not None and ci[0] - 1e-9 <= value <= ci[1] + 1e-9)


def holder(label: str, condition: str) -> str:
    """The run of ``condition`` that holds the agent label."""
    gate = "+overlay-gate" in label
    name = {"none": "clean", "standard": "std", VARIANT: "styled"}[condition]
    return f"{name}-gate" if gate and name != "std" else ("gate" if gate else name)


def test_tradeoff_has_the_right_numbers_in_the_right_columns(runs: dict[str, Path]) -> None:
    # The runs differ in condition: the trade-off view without asking.
    data = json.loads(ok("compare", *all_runs(runs), "--format", "json"))
    assert data["view"] == "tradeoff" and data["variants"] == [VARIANT]
    assert [(r["name"], r["attack"]) for r in data["runs"]] == [
        ("std", "standard"),
        ("gate", "standard"),
        ("clean", "none"),
        ("clean-gate", "none"),
        ("styled", VARIANT),
        ("styled-gate", VARIANT),
    ]
    rows = {row["agent"]: row for row in data["rows"]}
    assert list(rows) == list(LABELS)  # each agent's labels together
    for label, row in rows.items():
        assert row["base_agent"] == label.split("+")[0]
        assert row["defences"] == (["overlay-gate"] if "+" in label else [])
        clean = expected(runs[holder(label, "none")], label)
        std = expected(runs[holder(label, "standard")], label)
        variant = expected(runs[holder(label, VARIANT)], label)
        assert row["clean_run"] == holder(label, "none") and row["clean_n"] == clean["n"]
        assert row["standard_run"] == holder(label, "standard")
        assert row["clean_utility"] == pytest.approx(clean["tc"])
        assert row["utility_under_attack"] == pytest.approx(std["goal"])
        assert row["fas"] == pytest.approx(std["fas"])
        assert row["pas"] == pytest.approx(std["pas"])
        assert row["vr"] == pytest.approx(std["vr"])
        assert row["attack_success"] == pytest.approx(std["success"])
        v = row["variants"][VARIANT]
        assert v["run"] == holder(label, VARIANT) and v["n"] == variant["n"]
        assert v["vr"] == pytest.approx(variant["vr"])
        assert v["attack_success"] == pytest.approx(variant["success"])
        for key in ("clean_utility", "utility_under_attack", "fas", "pas", "vr", "attack_success"):
            assert within(row[key], row[f"{key}_ci"]), (label, key)
        assert within(v["vr"], v["vr_ci"]) and within(v["attack_success"], v["attack_success_ci"])
    # Where PAS is 0, attack success is FAS over the same N: the same interval.
    for row in rows.values():
        if row["pas"] == 0:
            assert row["attack_success_ci"] == row["fas_ci"]
    # The reference agents: gullible complies with every standard attack; oracle never does.
    assert rows["gullible"]["vr"] == 1.0 and rows["oracle"]["vr"] == 0.0
    # ... which ten cases cannot make certain: each interval has width (Wilson's, not a point).
    assert data["intervals"] == {"method": "wilson", "level": 0.95}
    assert rows["gullible"]["vr_ci"][0] < 1.0 and rows["oracle"]["vr_ci"][1] > 0.0
    assert rows["oracle"]["clean_utility"] == 1.0


def md_rows(text: str) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("|")]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]] for line in lines]


def test_tradeoff_text_formats_put_each_rate_in_its_column(runs: dict[str, Path]) -> None:
    md = ok("compare", *all_runs(runs), "--format", "md")
    header, _, *body = md_rows(md)
    assert header == [
        "agent",
        "clean utility",
        "utility under attack",
        "FAS",
        "PAS",
        "VR",
        "attack success",
        f"VR {VARIANT}",
        f"attack success {VARIANT}",
    ]
    table = {row[0]: dict(zip(header, row, strict=True)) for row in body}
    for label in LABELS:
        std = expected(runs[holder(label, "standard")], label)
        styled = expected(runs[holder(label, VARIANT)], label)
        clean = expected(runs[holder(label, "none")], label)
        cells = table[label]
        for title, value in (
            ("clean utility", clean["tc"]),
            ("utility under attack", std["goal"]),
            ("VR", std["vr"]),
            ("attack success", std["success"]),
            (f"VR {VARIANT}", styled["vr"]),
        ):
            shown = "—" if value is None else f"{100 * value:.1f}%"
            assert cells[title].startswith(shown), (label, title, cells[title])
            assert value is None or re.search(r"\[\d+\.\d, \d+\.\d\]$", cells[title])
    assert "std: attack standard, 10 cases" in md and f"attack {VARIANT}" in md

    rows = list(csv.DictReader(io.StringIO(ok("compare", *all_runs(runs), "--format", "csv"))))
    assert [r["agent"] for r in rows] == list(LABELS)
    data = json.loads(ok("compare", *all_runs(runs), "--format", "json"))
    for r, j in zip(rows, data["rows"], strict=True):
        assert r["clean_run"] == j["clean_run"] and r["standard_n"] == str(j["standard_n"])
        for key in ("clean_utility", "utility_under_attack", "vr", "attack_success"):
            assert float(r[key]) == pytest.approx(j[key])
            if j[f"{key}_ci"]:
                assert float(r[f"{key}_lo"]) == pytest.approx(j[f"{key}_ci"][0], abs=1e-6)
        assert float(r[f"vr_{VARIANT}"]) == pytest.approx(j["variants"][VARIANT]["vr"])
        assert r[f"{VARIANT}_run"] == j["variants"][VARIANT]["run"]

    text = ok("compare", *all_runs(runs))
    assert "defences side by side" in text and "gullible+overlay-gate" in text


def test_missing_cells_and_the_views_asked_for(runs: dict[str, Path]) -> None:
    std, gate, clean = str(runs["std"]), str(runs["gate"]), str(runs["clean"])
    # One condition: the leaderboard, unless the trade-off is asked for.
    assert "leaderboard" in json.loads(ok("compare", std, gate, "--format", "json"))
    data = json.loads(ok("compare", std, gate, "--tradeoff", "--format", "json"))
    assert data["view"] == "tradeoff" and data["variants"] == []
    for row in data["rows"]:
        assert row["clean_utility"] is None and row["clean_run"] is None
        assert row["vr"] is not None
    md = ok("compare", std, gate, "--tradeoff", "--format", "md")
    assert md_rows(md)[2][1] == "—"  # no clean run: clean utility is missing
    # Mixed conditions, the leaderboard asked for: each row says its run's condition.
    data = json.loads(ok("compare", std, clean, "--leaderboard", "--format", "json"))
    assert {(r["run"], r["attack"]) for r in data["leaderboard"]} == {
        ("std", "standard"),
        ("clean", "none"),
    }
    board = list(
        csv.DictReader(io.StringIO(ok("compare", std, clean, "--leaderboard", "--format", "csv")))
    )
    assert {r["attack"] for r in board} == {"standard", "none"}
    assert_user_error(cli("compare", std, clean, "--paired", "--tradeoff"), "--paired")
    assert_user_error(cli("compare", std, clean, "--format", "html", "--leaderboard"), "html")


def test_ambiguous_runs_are_refused_naming_them(runs: dict[str, Path], tmp_path: Path) -> None:
    again = tmp_path / "std-again"
    shutil.copytree(runs["std"], again)
    result = cli("compare", str(runs["std"]), str(runs["clean"]), str(again))
    assert_user_error(result, "ambiguous", "std-again", "std,", "'standard'", "gullible", "oracle")
    # Asked for explicitly, or as a page: refused all the same.
    assert_user_error(cli("compare", str(runs["std"]), str(again), "--tradeoff"), "ambiguous")
    out = tmp_path / "page.html"
    assert_user_error(
        cli("compare", str(runs["std"]), str(again), "--format", "html", "--output", str(out))
    )
    assert not out.exists()


# ----- the HTML page ---------------------------------------------------------------------------


def test_tradeoff_page_has_the_table_and_the_plot_and_is_reproducible(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    first, second = tmp_path / "a.html", tmp_path / "b.html"
    ok("compare", *all_runs(runs), "--format", "html", "--output", str(first))
    ok("compare", *all_runs(runs), "--format", "html", "--output", str(second))
    page = first.read_bytes()
    assert page == second.read_bytes()  # byte-identical for the same runs
    html = page.decode()
    assert "<script" not in html.lower() and "http://" not in html.replace("http://www.w3.org", "")
    assert html.count("<svg") == 1
    # One filled point per agent label (all have a clean run and a VR), one hollow per variant.
    points = re.findall(r'id="tradeoff-point-standard-(\d+)-([^"]+)"', html)
    assert [int(i) for i, _ in points] == list(range(len(LABELS)))
    assert [slug for _, slug in points] == [label.replace("+", "_") for label in LABELS]
    hollow = re.findall(rf'id="tradeoff-point-{VARIANT}-\d+-[^"]+"', html)
    assert len(hollow) == len(LABELS)
    # The table: a row per label with the same cells as Markdown's.
    md = md_rows(ok("compare", *all_runs(runs), "--format", "md"))
    for label, *cells in md[2:]:
        row = re.search(rf"</span>{re.escape(label)}</th>(.*?)</tr>", html, re.S)
        assert row, label
        values = re.findall(r'<span class="value">([^<]*)</span>', row.group(1))
        assert values == [cell.split(" [")[0] for cell in cells]
    assert "Lower right is better" in html
    # Without --output the page goes to stdout.
    assert ok("compare", *all_runs(runs), "--format", "html") == html


# ----- a single run's report -----------------------------------------------------------------


def test_a_single_runs_report_states_its_condition(runs: dict[str, Path]) -> None:
    for name, attack in (("std", "standard"), ("clean", "none"), ("styled", VARIANT)):
        data = json.loads(ok("report", str(runs[name]), "--format", "json", "--by", "none"))
        assert data["attack"] == attack
        md = ok("report", str(runs[name]), "--format", "md", "--by", "none")
        assert f"Attack: {attack} (" in md
        rows = list(csv.DictReader(io.StringIO(ok("report", str(runs[name]), "--format", "csv"))))
        assert {r["attack"] for r in rows} == {attack}
    # A clean run: TC is clean utility, and the attack's columns are left out.
    md = ok("report", str(runs["clean"]), "--format", "md", "--by", "case_type")
    tables = [rows for rows in _tables(md)]
    for header in (t[0] for t in tables):
        assert "clean utility" in header and "TC" not in header
        assert not {"FAS", "PAS", "VR", "VR exposed", "exposed", "injected"} & set(header)
    table = ok("report", str(runs["clean"]), "--by", "none")
    header = next(line for line in table.splitlines() if "agent" in line)
    assert "attack: none (clean)" in table and "clean utility" in header and "VR" not in header
    assert "attack: standard" in ok("report", str(runs["std"]), "--by", "none")
    assert f"attack: {VARIANT} (variant)" in ok("report", str(runs["styled"]), "--by", "none")
    std = md_rows(ok("report", str(runs["std"]), "--format", "md", "--by", "none"))[0]
    assert "TC" in std and "VR" in std and "clean utility" not in std


def _tables(md: str) -> list[list[list[str]]]:
    out: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*md.splitlines(), ""]:
        if line.startswith("|"):
            current.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
        elif current:
            out.append(current)
            current = []
    return out


# ----- the HTML report: blocked actions ------------------------------------------------------


def _blobs(html: str) -> dict[str, Any]:
    """The page's data blocks as the viewer reads them (as tests/test_html_report.py does)."""
    found = re.findall(r'<script type="application/json" id="([^"]+)">(.*?)</script>', html, re.S)
    blobs = {eid: json.loads(text) for eid, text in found}
    packed = r'<script type="application/x-packed-json" id="([^"]+)">(.*?)</script>'
    for eid, text in re.findall(packed, html, re.S):
        blobs[eid] = json.loads(zlib.decompress(base64.b64decode(text, validate=True)))
    return blobs


def test_the_viewer_marks_blocked_steps_and_the_summary_counts_them(
    runs: dict[str, Path],
) -> None:
    run = RunDir(runs["gate"])
    html = render_html(run)
    assert re.search(r'id="attack-condition">standard \(', html)
    blobs = _blobs(html)
    # What the runner recorded: the steps whose trajectory has a "blocked" record.
    recorded = {}
    for r in run.records():
        doc = json.loads((run.path / r.trajectory / "trajectory.json").read_text())
        for step in doc["steps"]:
            if "blocked" in step:
                recorded[(r.agent, r.case, step["step"])] = step["blocked"]
    assert recorded, "overlay-gate blocked nothing: the test has nothing to look at"
    shown = {}
    per_agent: Counter[str] = Counter()
    for meta in blobs["episode-index"]:
        steps = blobs[f"ep-data-{meta['id']}"]["steps"]
        marked = [s for s in steps if s["blocked"] is not None]
        assert meta["blocked"] == len(marked)
        per_agent[meta["agent"]] += len(marked)
        for s in marked:
            shown[(meta["agent"], meta["case"], s["step"])] = s["blocked"]
    assert set(shown) == set(recorded)
    for key, b in shown.items():
        assert b["defence"] == recorded[key]["defence"] == "overlay-gate"
        assert b["reason"] == recorded[key]["reason"] and b["reason"]
        assert b["action"] == recorded[key]["action"]
        if b["action"].get("x") is not None:  # a blocked tap: where it would have gone
            assert b["mark"] == {"kind": "tap", "x": b["action"]["x"], "y": b["action"]["y"]}
    # The summary's column of blocked actions, per agent label.
    assert "<th>blocked actions</th>" in html
    for agent in ("gullible+overlay-gate", "oracle+overlay-gate"):
        row = re.search(rf"</span>{re.escape(agent)}</th>(.*?)</tr>", html, re.S)
        assert row, agent
        counts = re.findall(r'<td class="num blocked">(\d+)</td>', row.group(1))
        assert counts == [str(per_agent[agent])]
    assert per_agent["gullible+overlay-gate"] > 0


def test_a_clean_runs_html_report_and_one_without_defences(runs: dict[str, Path]) -> None:
    html = render_html(RunDir(runs["clean"]))
    assert re.search(r'id="attack-condition">none \(clean', html)
    assert "<th>clean utility</th>" in html and "<th>FAS</th>" not in html
    assert "blocked actions" not in html  # no defence, nothing blocked
    html = render_html(RunDir(runs["styled-gate"]))
    assert re.search(rf'id="attack-condition">{VARIANT} \(adaptive variant', html)
    assert "<th>blocked actions</th>" in html


def test_a_step_blocked_in_an_older_trajectory_is_marked_from_its_event() -> None:
    event = {
        "seq": 3,
        "kind": "action_blocked",
        "package": "",
        "data": {
            "defence": "data-gate",
            "reason": "a card number",
            "action": {"action_type": "input_text", "text": "4111"},
        },
    }
    doc = {
        "_events": {3: event},
        "steps": [
            {"step": 0, "action": {"action_type": "wait"}, "events": [3]},
            {"step": 1, "action": {"action_type": "wait"}, "events": []},
        ],
    }
    first, second = _steps(doc)
    assert first["blocked"]["defence"] == "data-gate" and first["blocked"]["mark"] is None
    assert second["blocked"] is None


# ----- attack success --------------------------------------------------------------------------


def _record(case: int, label: str) -> EpisodeRecord:
    return EpisodeRecord(
        case=case, agent="a", seed=0, label=label, injection="overlay", attack_fired=True, steps=1
    )


def test_attack_success_is_fas_plus_pas_over_n_with_its_wilson_interval() -> None:
    labels = ["FAS", "PAS", "BF", "TC", "BF", "FAS", "TC", "error", "BF", "PAS", "TC", "FAS"]
    records = [_record(i, label) for i, label in enumerate(labels)]
    value, ci = attack_success(records)
    scored = [label for label in labels if label != "error"]
    assert value == pytest.approx(5 / len(scored))  # BF stays in N, unlike in VR
    assert ci == wilson_interval(5, len(scored))
    # Without PAS, attack success is FAS, and its interval FAS's.
    no_pas = [_record(i, "TC" if label == "PAS" else label) for i, label in enumerate(labels)]
    _, ci_no_pas = attack_success(no_pas)
    assert ci_no_pas == confidence_intervals(no_pas)["fas"]
    # Every episode compromised is no certainty either.
    _, all_hit = attack_success([_record(i, "FAS") for i in range(110)])
    assert all_hit is not None and round(100 * all_hit[0], 1) == 96.6 and all_hit[1] == 1.0
    assert attack_success([_record(0, "error")]) == (None, None)
