"""``ghostei report`` in every format, and ``ghostei compare``, on small real runs."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from ghostei.judge import Verdict
from ghostei.judge.store import Judgement, append_judgement
from ghostei.metrics import BREAKDOWNS, wilson_interval
from ghostei.report.tables import CSV_COLUMNS
from ghostei.rundir import RunDir

from .helpers import assert_user_error, cli, ok

CASES = range(1, 7)
AGENTS = ("oracle", "gullible")
CI_KEYS = {"tc", "fas", "pas", "bf", "vr", "goal_reached"}  # JSON's "ci"
PAIRED_KEYS = {"tc", "fas", "pas", "bf", "vr"}  # the rates --paired compares
EXPOSURE_CI_KEYS = {"vr_exposed", "exposed", "fired"}
# Wilson's 95 % interval of 6 of 6, and of 0 of 6 (the runs have six cases per agent).
ALL_OF_6 = (0.6097, 1.0)
NONE_OF_6 = (0.0, 0.3903)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "run-a"
    agents = [arg for a in AGENTS for arg in ("--agent", a)]
    ok("run", *agents, "--cases", "1-6", "--no-frames", "--workers", "1", "--out", str(out))
    return out


def _relabel(line: str, agent: str, cases: set[int], label: str, attack: str) -> str:
    record = json.loads(line)
    if record["agent"] == agent and record["case"] in cases:
        record["label"] = label
        record["verdict"].update(label=label, attack=attack, task_completed=False)
    return json.dumps(record)


@pytest.fixture(scope="module")
def run_b(run: Path) -> Path:
    """A copy of the run where oracle fell for cases 1-3 and gullible used a model."""
    out = run.parent / "run-b"
    shutil.copytree(run, out)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["config"]["model"] = {"provider": "openai", "model": "test-model"}
    (out / "manifest.json").write_text(json.dumps(manifest))
    lines = []
    for line in (out / "episodes.jsonl").read_text().splitlines():
        record = json.loads(_relabel(line, "oracle", {1, 2, 3}, "FAS", "full"))
        if record["agent"] == "gullible":
            record["usage"] = {"prompt_tokens": 10, "completion_tokens": 2, "requests": 1}
        lines.append(json.dumps(record))
    (out / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    return out


def run_cases(run: Path) -> dict[int, Any]:
    return {c.id: c for c in RunDir(run).cases()}


# ----- json ---------------------------------------------------------------------------------------


def test_json_has_intervals_judge_errors_breakdowns_and_labels(run: Path) -> None:
    report = json.loads(ok("report", str(run), "--format", "json"))
    assert report["judge"] == "rule"
    assert report["intervals"] == {"method": "wilson", "level": 0.95}
    assert list(report["agents"]) == list(AGENTS)
    for metrics in report["agents"].values():
        assert metrics["judge_errors"] == 0 and metrics["n"] == len(CASES)
        assert set(metrics["ci"]) == CI_KEYS
        assert set(metrics["exposure_ci"]) == EXPOSURE_CI_KEYS
        for key, bounds in [*metrics["ci"].items(), *metrics["exposure_ci"].items()]:
            assert len(bounds) == 2 and bounds[0] <= metrics[key] <= bounds[1], key
            assert bounds[0] < bounds[1], key  # never a point, whatever the data
    # Six of six is no certainty: Wilson's interval, not the bootstrap's [1.0, 1.0].
    assert report["agents"]["gullible"]["ci"]["vr"] == pytest.approx(ALL_OF_6, abs=1e-4)
    assert report["agents"]["oracle"]["ci"]["tc"] == pytest.approx(ALL_OF_6, abs=1e-4)
    assert report["agents"]["oracle"]["ci"]["fas"] == pytest.approx(NONE_OF_6, abs=1e-4)
    assert list(report["breakdowns"]) == list(BREAKDOWNS)
    cases = run_cases(run)
    risks = report["breakdowns"]["risk"]
    for risk, agents in risks.items():
        assert agents["oracle"]["n"] == sum(risk in c.risks for c in cases.values())
        assert set(agents["oracle"]["ci"]) == CI_KEYS
    # Multi-label: the risk groups together count more episodes than there are cases.
    assert sum(a["oracle"]["n"] for a in risks.values()) == sum(
        len(c.risks) for c in cases.values()
    )
    for e in report["episodes"]:
        assert e["judge"] == "rule"
        assert e["label"] == {"oracle": "TC", "gullible": "FAS"}[e["agent"]]
        assert e["attack"] == {"oracle": "none", "gullible": "full"}[e["agent"]]
        assert e["task_completed"] is (e["agent"] == "oracle")
        assert {"rationale", "diagnosis", "first_compliance_step"} <= set(e)


def test_by_selects_the_breakdowns(run: Path) -> None:
    report = json.loads(ok("report", str(run), "--format", "json", "--by", "risk,app"))
    assert list(report["breakdowns"]) == ["risk", "app"]
    assert "System UI" in report["breakdowns"]["app"]
    report = json.loads(ok("report", str(run), "--format", "json", "--by", "none"))
    assert report["breakdowns"] == {}
    assert_user_error(cli("report", str(run), "--by", "risk,weather"), "--by", "weather")


# ----- md, csv, table ----------------------------------------------------------------------------


def md_tables(text: str) -> list[list[list[str]]]:
    """Markdown tables as rows of cells (split on unescaped pipes)."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            current.append([c.strip() for c in cells])
        elif current:
            tables.append(current)
            current = []
    return tables


def test_markdown_parses(run: Path) -> None:
    text = ok("report", str(run), "--format", "md")
    assert text.startswith("# GhostEI report")
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings == ["Summary"] + [
        f"By {t}" for t in ("case type", "attack vector", "risk domain", "app domain", "app")
    ] + ["Failure stages from the agent's words, compromised episodes (FAS, PAS)"]
    tables = md_tables(text)
    assert len(tables) == 1 + len(BREAKDOWNS) + 1
    stages = {row[0]: dict(zip(tables[-1][0], row, strict=True)) for row in tables[-1][2:]}
    # gullible's outputs are bare actions: it complied without ever noting an attack.
    compromised = [k for k, v in stages["gullible"].items() if k != "agent" and v != "0"]
    assert compromised and set(compromised) <= {"perception failure", "recognition failure"}
    assert all(v == "0" for k, v in stages["oracle"].items() if k != "agent")
    for table in tables:
        header, align, *rows = table
        assert all(set(cell) <= set("-:") for cell in align)
        assert rows and all(len(row) == len(header) for row in [align, *rows])
    summary = {row[0]: dict(zip(tables[0][0], row, strict=True)) for row in tables[0][2:]}
    assert summary["oracle"]["TC"] == "100.0% [60.9, 100.0]"  # 60.97 rounded outward
    assert summary["gullible"]["VR"] == "100.0% [60.9, 100.0]"
    assert summary["gullible"]["TC"] == "0.0% [0.0, 39.1]"  # 39.03 rounded outward
    assert summary["oracle"]["goal reached"] == "100.0% [60.9, 100.0]"
    assert "Wilson" in text and "bootstrap" not in text
    # The breakdowns' cells carry their intervals too.
    for row in tables[1][2:]:
        assert re.fullmatch(r"\d+\.\d% \[\d+\.\d, \d+\.\d\]", row[3]), row
    assert summary["gullible"]["judge errors"] == "0"


def test_csv_parses(run: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(ok("report", str(run), "--format", "csv"))))
    assert tuple(rows[0]) == CSV_COLUMNS
    summary = [r for r in rows if r["group_by"] == "all"]
    assert [(r["group"], r["agent"]) for r in summary] == [("all", a) for a in AGENTS]
    oracle = summary[0]
    assert (oracle["n"], oracle["tc"], oracle["tc_hi"]) == ("6", "1", "1")
    assert float(oracle["tc_lo"]) == pytest.approx(ALL_OF_6[0], abs=1e-4)
    assert float(oracle["fas_hi"]) == pytest.approx(NONE_OF_6[1], abs=1e-4)
    for rate in ("fired", "goal_reached"):
        assert float(oracle[f"{rate}_lo"]) < float(oracle[rate]) <= float(oracle[f"{rate}_hi"])
    assert {r["group_by"] for r in rows} == {"all", *BREAKDOWNS}
    for r in rows:
        assert r["attack"] == "standard"  # the run's condition, the last column
        for key in CSV_COLUMNS[3:-1]:
            assert r[key] == "" or 0 <= float(r[key]) <= max(1, int(float(r[key])))
    risk_rows = [r for r in rows if r["group_by"] == "risk" and r["agent"] == "gullible"]
    assert {r["group"] for r in risk_rows} == {x for c in run_cases(run).values() for x in c.risks}


def test_table(run: Path) -> None:
    text = ok("report", str(run))
    for fragment in (*AGENTS, "GhostEI results", "by risk domain", "by app (multi-label"):
        assert fragment in text


def test_output_writes_a_file_atomically(run: Path, tmp_path: Path) -> None:
    for fmt in ("json", "md", "csv", "table"):
        target = tmp_path / f"report.{fmt}"
        result = cli("report", str(run), "--format", fmt, "--output", str(target))
        assert result.exit_code == 0, result.output
        assert result.stdout == ""
        assert "oracle" in target.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"report.{fmt}" for fmt in ("csv", "json", "md", "table")
    ]
    missing = tmp_path / "no" / "such" / "dir" / "r.json"
    assert_user_error(cli("report", str(run), "--format", "json", "--output", str(missing)))


HTML = importlib.util.find_spec("ghostei.report.html") is not None


@pytest.mark.skipif(not HTML, reason="ghostei.report.html (the HTML helper's module) is absent")
def test_html_goes_to_the_output_or_the_run_folder(run: Path, tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    ok("report", str(run), "--format", "html", "--output", str(target))
    assert "<html" in target.read_text().lower()
    ok("report", str(run), "--format", "html")
    assert (run / "report.html").read_text() == target.read_text()


# ----- judges -------------------------------------------------------------------------------------


def test_the_llm_judge_needs_its_verdicts(run: Path) -> None:
    assert_user_error(cli("report", str(run), "--judge", "llm"), str(run), "ghostei judge")


def test_report_by_the_llm_judge(run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "judged"
    shutil.copytree(run, copy)
    rundir = RunDir(copy)
    for r in rundir.records():
        if r.case == 1:
            verdict = Verdict(judge="llm", label="judge_error", attack=None, task_completed=None)
            verdict.error = "unparseable answer twice"
        else:
            verdict = r.verdict.model_copy(update={"judge": "llm", "rationale": "seen"})  # type: ignore[union-attr]
        append_judgement(rundir, "llm", Judgement(agent=r.agent, case=r.case, verdict=verdict))
    report = json.loads(ok("report", str(copy), "--format", "json", "--judge", "llm"))
    assert report["judge"] == "llm"
    for metrics in report["agents"].values():
        assert metrics["judge_errors"] == 1 and metrics["n"] == len(CASES) - 1
    first = next(e for e in report["episodes"] if e["case"] == 1)
    assert (first["label"], first["judge"]) == ("judge_error", "llm")
    assert first["error"] == "unparseable answer twice"
    other = next(e for e in report["episodes"] if e["case"] == 2)
    assert other["judge"] == "llm" and other["rationale"] == "seen"
    text = ok("report", str(copy), "--judge", "llm", "--by", "none")
    assert "judge errors" in text and "never counted as safe" in text
    # What the judge errors could change: each agent's rates were its error all FAS, all TC.
    flat = " ".join(text.split())
    for agent, metrics in report["agents"].items():
        bounds = report["judge_errors_as"][agent]
        assert bounds["FAS"]["n"] == bounds["TC"]["n"] == metrics["n"] + 1
        assert bounds["FAS"]["fas"] >= metrics["fas"] * metrics["n"] / (metrics["n"] + 1)
        assert bounds["FAS"]["fas"] > bounds["TC"]["fas"]
        assert f"{agent}, its 1 counted as FAS: TC" in flat


def test_report_of_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    assert_user_error(cli("report", str(tmp_path), "--format", "md"), str(tmp_path))


# ----- compare ------------------------------------------------------------------------------------


def test_compare_leaderboard(run: Path, run_b: Path) -> None:
    data = json.loads(ok("compare", str(run), str(run_b), "--format", "json"))
    assert data["judge"] == "rule"
    assert [r["name"] for r in data["runs"]] == ["run-a", "run-b"]
    assert data["runs"][1]["model"] == "test-model" and data["runs"][0]["model"] is None
    board = [(r["run"], r["agent"], r["vr"]) for r in data["leaderboard"]]
    assert board == [
        ("run-a", "oracle", 0.0),
        ("run-b", "oracle", 0.5),
        ("run-a", "gullible", 1.0),
        ("run-b", "gullible", 1.0),
    ]
    models = {(r["run"], r["agent"]): r["model"] for r in data["leaderboard"]}
    assert models[("run-b", "gullible")] == "test-model"  # it made model requests
    assert models[("run-b", "oracle")] is None  # a reference agent calls no model
    for row in data["leaderboard"]:
        assert set(row["ci"]) == CI_KEYS and row["n"] == len(CASES)
    rows = {(r["run"], r["agent"]): r for r in data["leaderboard"]}
    assert rows[("run-b", "oracle")]["ci"]["vr"] == pytest.approx(wilson_interval(3, 6))
    assert data["intervals"]["method"] == "wilson"
    assert "paired" not in data


def test_compare_paired(run: Path, run_b: Path) -> None:
    data = json.loads(ok("compare", str(run), str(run_b), "--format", "json", "--paired"))
    paired = data["paired"]
    assert (paired["a"], paired["b"]) == ("run-a", "run-b")
    assert paired["intervals"]["method"] == "paired percentile bootstrap"
    rows = {(r["agent"], r["metric"]): r for r in paired["rows"]}
    assert set(rows) == {(a, m) for a in AGENTS for m in PAIRED_KEYS}
    vr = rows[("oracle", "vr")]
    assert (vr["a"], vr["b"], vr["diff"], vr["n"]) == (0.0, 0.5, 0.5, len(CASES))
    assert vr["ci"][0] <= 0.5 <= vr["ci"][1]
    assert rows[("gullible", "vr")]["diff"] == 0.0 and rows[("gullible", "vr")]["ci"] == [0, 0]
    table = ok("compare", str(run), str(run_b), "--paired")
    assert "leaderboard" in table and "+50.0 pp" in table
    md = ok("compare", str(run), str(run_b), "--paired", "--format", "md")
    header, _, *body = md_tables(md)[1]
    assert header[:2] == ["agent", "metric"] and len(body) == 2 * len(PAIRED_KEYS)
    assert "paired percentile bootstrap" in md
    rows_csv = list(
        csv.DictReader(
            io.StringIO(ok("compare", str(run), str(run_b), "--paired", "--format", "csv"))
        )
    )
    assert {(r["agent"], r["metric"], r["diff"]) for r in rows_csv} >= {("oracle", "vr", "0.5")}


def test_compare_formats(run: Path, run_b: Path) -> None:
    md = ok("compare", str(run), str(run_b), "--format", "md")
    (board,) = md_tables(md)
    header = ["run", "agent", "model", "N", "TC", "VR", "VR exposed", "exposed"]
    assert board[0] == header and len(board) == 2 + 4
    assert board[2][:3] == ["run-a", "oracle", "—"]
    rows = list(csv.DictReader(io.StringIO(ok("compare", str(run), str(run_b), "--format", "csv"))))
    assert [(r["run"], r["agent"]) for r in rows][:2] == [("run-a", "oracle"), ("run-b", "oracle")]
    assert rows[1]["vr"] == "0.5" and rows[1]["model"] == ""
    text = ok("compare", str(run), str(run_b))
    assert "test-model" in text and "run-b" in text


def test_compare_errors(run: Path, run_b: Path, tmp_path: Path) -> None:
    assert_user_error(cli("compare", str(run), str(tmp_path)), str(tmp_path))
    assert_user_error(cli("compare", str(run), "--paired"), "--paired", "two")
    assert_user_error(cli("compare", str(run), str(run_b), str(run), "--paired"), "--paired")
    assert_user_error(cli("compare", str(run), "--judge", "llm"), "ghostei judge")
