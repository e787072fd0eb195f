"""Run folders that refuse bad records: a record of an agent or a case the run does not have
exits 2 naming its line (report, compare, html, resume); an episode recorded twice keeps its
last record and is named; a record whose trajectory or frames are gone is named by a report and
run again by a resume."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ghostei.rundir import RunDir

from .helpers import assert_user_error, cli


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("audit") / "run"
    args = ["run", "--cases", "1-3", "--agent", "oracle", "--agent", "gullible", "--out", str(out)]
    result = cli(*args, "--screen", "360x640")
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def run(finished: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(finished, copy)
    return copy


def _lines(run: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run / RunDir.RECORDS).read_text().splitlines()]


def _append(run: Path, record: dict[str, object]) -> int:
    with open(run / RunDir.RECORDS, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    return len(_lines(run))


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [("agent", "intruder", "agent 'intruder'"), ("case", 77, "case 77")],
    ids=["unknown-agent", "unknown-case"],
)
def test_a_record_the_run_cannot_have_is_refused_naming_its_line(
    run: Path, field: str, value: object, says: str
) -> None:
    stranger = {**_lines(run)[0], field: value}
    line = _append(run, stranger)
    where = f"{run / RunDir.RECORDS}:{line}"
    for args in (
        ("report", str(run)),
        ("report", str(run), "--format", "html", "--output", str(run / "r.html")),
        ("report", str(run), "--format", "json"),
        ("compare", str(run), str(run)),
        ("run", "--resume", "--out", str(run)),
    ):
        assert_user_error(cli(*args), where, says)


def test_an_episode_recorded_twice_keeps_its_last_record_and_is_named(run: Path) -> None:
    first = next(r for r in _lines(run) if r["agent"] == "oracle")
    assert first["label"] == "TC"
    _append(run, {**first, "label": "FAS", "verdict": {**first["verdict"], "label": "FAS"}})  # type: ignore[dict-item]
    result = cli("report", str(run), "--format", "json")
    assert result.exit_code == 0, result.output
    assert "recorded 2 times" in result.stderr and "the last is kept" in result.stderr
    oracle = json.loads(result.stdout)["agents"]["oracle"]
    assert oracle["fas"] == pytest.approx(1 / 3)  # the last record counts, once


def test_a_lost_trajectory_or_frame_is_named_and_run_again(run: Path) -> None:
    records = {(r["agent"], r["case"]): r for r in _lines(run)}
    gone = records[("oracle", 1)]
    shutil.rmtree(run / str(gone["trajectory"]))
    frames = json.loads(
        (run / str(records[("gullible", 2)]["trajectory"]) / "trajectory.json").read_text()
    )["frames"]
    frame = run / str(records[("gullible", 2)]["trajectory"]) / frames[-1]
    frame.resolve().unlink()
    report = cli("report", str(run))
    assert report.exit_code == 0
    assert "case 1, agent oracle: its trajectory" in report.stderr
    # Frames are stored once per run: every episode that showed that screen has lost it.
    assert (
        "case 2, agent gullible: " in report.stderr and "of its frames are missing" in report.stderr
    )
    resumed = cli("run", "--resume", "--out", str(run))
    assert resumed.exit_code == 0, resumed.output
    assert "run again" in resumed.stderr
    after = {(r["agent"], r["case"]): r for r in _lines(run)}
    assert len(after) == 6 and len(_lines(run)) == 6
    assert after[("oracle", 1)]["attempts"] == 2 and after[("gullible", 2)]["attempts"] == 2
    assert after[("gullible", 1)]["attempts"] == 1  # what was whole stays as it was
    assert (run / str(after[("oracle", 1)]["trajectory"]) / "trajectory.json").is_file()
    assert frame.resolve().is_file()
    clean = cli("report", str(run))
    assert "missing" not in clean.stderr
