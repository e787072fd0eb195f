"""``ghostei truth``: the labelled set of trajectories, a run folder whose every episode carries
its true label and where it came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ghostei.cases import builtin_cases
from ghostei.rundir import RunDir
from ghostei.truth import PAPER_OFFSET

from .helpers import assert_user_error, cli, ok

CASES = {c.id: c for c in builtin_cases()}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("truth") / "set"
    result = cli("truth", "build", "--out", str(out), "--cases", "9,13", "--cases", "paper:5")
    assert result.exit_code == 0, result.output
    assert "labelled set in" in result.stdout
    return out


def test_every_episode_carries_its_true_label_and_its_source(built: Path) -> None:
    run = RunDir(built)
    records = run.records()
    assert records and all(r.truth is not None for r in records)
    for r in records:
        assert r.truth is not None
        assert r.label == r.truth.label  # the rules confirm every label kept
        assert r.truth.why
        assert r.agent in ("oracle", "gullible") or r.agent == f"probe:{r.truth.trajectory}"
    paper = [r for r in records if r.truth is not None and r.truth.suite == "paper"]
    assert paper and {r.case for r in paper} == {PAPER_OFFSET + 5}
    assert all(r.truth is not None and r.truth.row == 5 for r in paper)
    builtin = {r.case for r in records if r.truth is not None and r.truth.suite == "builtin"}
    assert builtin == {9, 13}
    # With every frame: each step of each trajectory has its frame in the store.
    for r in records[:5]:
        steps = json.loads((built / r.trajectory / "trajectory.json").read_text())["steps"]
        assert steps and all(s["frame"] for s in steps)
        assert all((built / r.trajectory / s["frame"]).resolve().is_file() for s in steps)


def test_stats_count_true_labels_by_vector(built: Path) -> None:
    counts = json.loads(ok("truth", "stats", str(built), "--format", "json"))
    records = RunDir(built).records()
    assert counts["episodes"] == len(records)
    assert sum(counts["by_label"].values()) == len(records)
    table = counts["by_vector"]
    assert sum(table["popup-sms"].values()) == sum(1 for r in records if r.case == 9)
    assert sum(table["deceptive"].values()) == sum(1 for r in records if r.case == 13)
    assert {label for label, n in counts["by_label"].items() if n} == {"FAS", "PAS", "TC", "BF"}
    assert counts["rule_judge_agrees"] == len(records)
    assert counts["by_suite"]["paper"] == sum(1 for r in records if r.case == PAPER_OFFSET + 5)
    text = ok("truth", "stats", str(built))
    assert "popup-sms" in text and "share" in text


def test_report_reads_the_set_like_any_run(built: Path) -> None:
    report = json.loads(ok("report", str(built), "--format", "json"))
    agents = report.get("agents", report)
    assert "oracle" in json.dumps(agents) and "probe:nothing" in json.dumps(agents)


def test_a_build_resumes_where_it_stopped(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "set"
    assert cli("truth", "build", "--out", str(out), "--cases", "9").exit_code == 0
    full = (out / RunDir.RECORDS).read_text().splitlines()
    (out / RunDir.RECORDS).write_text("\n".join(full[:3]) + "\n")
    assert cli("truth", "build", "--out", str(out), "--cases", "9").exit_code == 2  # not again
    resumed = cli("truth", "build", "--out", str(out), "--cases", "9", "--resume")
    assert resumed.exit_code == 0, resumed.output
    again = (out / RunDir.RECORDS).read_text().splitlines()

    def key(line: str) -> tuple[str, int, str, str]:
        record = json.loads(line)
        return record["agent"], record["case"], record["label"], record["truth"]["label"]

    assert sorted(map(key, again)) == sorted(map(key, full))


def test_a_trajectory_the_rules_label_otherwise_is_left_out(tmp_path: Path) -> None:
    case = CASES[9]
    checks = json.loads(case.checks.model_dump_json(by_alias=True))
    # Reading the attacker's message counted as partial: wrong by the definitions.
    checks["partial_attack"] = {"any": [checks["partial_attack"], {"event": "notification_opened"}]}
    data = {**json.loads(case.model_dump_json(by_alias=True)), "id": 901, "checks": checks}
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "901-wrong.json").write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "set"
    result = cli("truth", "build", "--out", str(out), "--cases", str(folder))
    assert result.exit_code == 0, result.output
    assert "left out" in result.stdout and "label it otherwise" in result.stdout
    kept = {r.truth.trajectory for r in RunDir(out).records() if r.truth is not None}
    assert "read-ignore" not in kept and "oracle" in kept


def test_bad_input_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "cases"
    folder.mkdir()
    data = json.loads(CASES[9].model_dump_json(by_alias=True))
    (folder / "009-same-id.json").write_text(json.dumps(data), encoding="utf-8")
    clash = cli(
        "truth", "build", "--out", str(tmp_path / "x"), "--cases", "9", "--cases", str(folder)
    )
    assert_user_error(clash, "case 9", "builtin")
    assert not (tmp_path / "x").exists()
    empty = tmp_path / "run"
    assert cli("run", "--cases", "9", "--agent", "oracle", "--out", str(empty)).exit_code == 0
    assert_user_error(cli("truth", "stats", str(empty)), "no labelled episodes")
