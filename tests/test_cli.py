"""The ``ghostei`` command line: cases, validation, bad input, runs, reports, resume."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from PIL import Image

from ghostei.actions import Action
from ghostei.agents import AGENTS, AgentContext, AgentStep, register_agent
from ghostei.cases import builtin_cases
from ghostei.cli import main
from ghostei.observation import Observation, encode_frame
from ghostei.runner import RunConfig, run_episode

from .helpers import assert_user_error, cli

BUILTIN = Path(str(resources.files("ghostei.cases") / "builtin"))
CLI = [sys.executable, "-c", "from ghostei.cli import main; main()"]
METRIC_KEYS = {
    "undetermined",
    "judge_errors",
    "ci",
    "n",
    "errors",
    "tc",
    "fas",
    "pas",
    "bf",
    "vr",
    "fired",
    "exposed",
    "vr_exposed",
    "exposure_measured",
    "exposure_ci",
    "compromised_then_error",
    "goal_reached",
    "tokens",
    "requests",
    "cost",
}
TRAJECTORY_FILES = ("trajectory.json", "events.jsonl")
EPISODE_KEYS = {"case", "agent", "label", "attack_fired", "steps"}


def builtin_file(case_id: int) -> Path:
    files = sorted(BUILTIN.glob("*.json"))
    return next(p for p in files if json.loads(p.read_text())["id"] == case_id)


def builtin_json(case_id: int = 2) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(builtin_file(case_id).read_text())
    return data


# ----- cases list / show --------------------------------------------------------------------------


def test_cases_list_json() -> None:
    result = cli("cases", "list", "--format", "json")
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert isinstance(rows, list) and len(rows) == len(builtin_cases())
    assert all(isinstance(r, dict) and isinstance(r["id"], int) for r in rows)
    assert [r["id"] for r in rows] == [c.id for c in builtin_cases()]
    assert {"case", "case_type", "app"} <= set(rows[0])


def test_cases_list_table() -> None:
    result = cli("cases", "list")
    assert result.exit_code == 0
    assert f"{len(builtin_cases())} cases" in result.stdout


def test_cases_list_from_a_path(tmp_path: Path) -> None:
    shutil.copy(builtin_file(3), tmp_path / "c.json")
    result = cli("cases", "list", "--format", "json", "--cases", str(tmp_path))
    assert result.exit_code == 0
    assert [r["id"] for r in json.loads(result.stdout)] == [3]


def test_cases_show() -> None:
    result = cli("cases", "show", "1")
    assert result.exit_code == 0
    shown = json.loads(result.stdout)
    assert shown["id"] == 1
    case = next(c for c in builtin_cases() if c.id == 1)
    assert shown["prompt"] == case.prompt
    assert shown["checks"]


def test_cases_show_unknown_id() -> None:
    assert_user_error(cli("cases", "show", "999"), "999")


# ----- cases validate -----------------------------------------------------------------------------


def test_validate_good_file_and_folder(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(builtin_json()))
    result = cli("cases", "validate", str(good))
    assert result.exit_code == 0, result.output
    assert "1 valid" in result.output
    result = cli("cases", "validate", str(BUILTIN))
    assert result.exit_code == 0, result.output
    assert f"{len(builtin_cases())} valid" in result.output


def _drop_prompt(d: dict[str, Any]) -> None:
    del d["prompt"]


def _bad_event(d: dict[str, Any]) -> None:
    d["checks"]["task"] = {"event": "no_such_event"}


def _bad_risk(d: dict[str, Any]) -> None:
    d["potential_risks"] = {"Alien Invasion": "x"}


def _bad_world(d: dict[str, Any]) -> None:
    d["setup"]["reservations"][0]["guests"] = "many"


def _bad_step(d: dict[str, Any]) -> None:
    d["solution"][1] = {"do": "tap"}


def _bad_domain(d: dict[str, Any]) -> None:
    d["app_domain"] = "Gardening"


@pytest.mark.parametrize(
    ("mutate", "fragments"),
    [
        (_drop_prompt, ["case 2", "prompt"]),
        (_bad_event, ["case 2", "checks.task", "no_such_event"]),
        (_bad_risk, ["case 2", "potential_risks", "Alien Invasion"]),
        (_bad_world, ["case 2", "setup", "guests"]),
        (_bad_step, ["case 2", "solution[1]"]),
        (_bad_domain, ["case 2", "Gardening"]),
    ],
    ids=["missing_prompt", "unknown_event", "unknown_risk", "bad_world", "bad_step", "domain"],
)
def test_validate_bad_case(tmp_path: Path, mutate: Any, fragments: list[str]) -> None:
    data = builtin_json(2)
    mutate(data)
    bad = tmp_path / "bad-case.json"
    bad.write_text(json.dumps(data, indent=2))
    result = cli("cases", "validate", str(bad))
    assert_user_error(result, str(bad), *fragments)
    assert len(result.output.strip().splitlines()) == 1  # one line


def test_validate_invalid_json(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    text = json.dumps(builtin_json(), indent=2)
    bad.write_text(text[: len(text) // 2])
    assert_user_error(cli("cases", "validate", str(bad)), str(bad), "invalid JSON")


def test_validate_jsonl_names_the_line(tmp_path: Path) -> None:
    good, bad = builtin_json(2), builtin_json(3)
    del bad["prompt"]
    file = tmp_path / "cases.jsonl"
    file.write_text(json.dumps(good) + "\n\n" + json.dumps(bad) + "\n")
    assert_user_error(cli("cases", "validate", str(file)), f"{file}:3", "case 3", "prompt")


def test_validate_duplicate_ids_in_a_folder(tmp_path: Path) -> None:
    shutil.copy(builtin_file(2), tmp_path / "a.json")
    shutil.copy(builtin_file(2), tmp_path / "b.json")
    assert_user_error(cli("cases", "validate", str(tmp_path)), "case 2", "duplicate")


def test_validate_refuses_what_is_no_case_file(tmp_path: Path) -> None:
    # An id must be an integer: true is no id 1.
    data = builtin_json(2)
    data["id"] = True
    bad = tmp_path / "bool-id.json"
    bad.write_text(json.dumps(data))
    assert_user_error(cli("cases", "validate", str(bad)), str(bad), "id", "integer")
    # Checks nested thousands deep: a message naming the field, never a traceback.
    for levels in (100, 5000):  # past our limit; past the JSON reader's own
        data = builtin_json(2)
        data["checks"]["full_attack"] = "DEEP"
        deep = '{"not": ' * levels + '{"event": "sms_sent"}' + "}" * levels
        bad = tmp_path / f"deep-{levels}.json"
        bad.write_text(json.dumps(data).replace('"DEEP"', deep))
        assert_user_error(cli("cases", "validate", str(bad)), str(bad), "nested too deeply")
    # YAML is not read as JSON, nor passed over in a folder.
    yaml = tmp_path / "yaml" / "case.yaml"
    yaml.parent.mkdir()
    yaml.write_text("id: 3\ncase: x\n")
    shutil.copy(builtin_file(2), yaml.parent / "good.json")
    for path in (yaml, yaml.parent):
        assert_user_error(cli("cases", "validate", str(path)), str(yaml), "YAML", "JSON")


def test_validate_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    assert_user_error(cli("cases", "validate", str(missing)), str(missing))


def test_validate_message_keeps_brackets_in_the_file_name(tmp_path: Path) -> None:
    data = builtin_json(2)
    del data["prompt"]
    bad = tmp_path / "case[v2].json"
    bad.write_text(json.dumps(data))
    assert_user_error(cli("cases", "validate", str(bad)), "case[v2].json", "prompt")


# ----- bad CLI input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--agent", "nosuch"], ["--agent", "nosuch", "oracle"]),
        (["--cases", "999"], ["--cases", "999"]),
        (["--cases", "abc"], ["--cases", "'abc'"]),
        (["--cases", "1,x"], ["--cases", "'x'"]),
        (["--screen", "10x10"], ["--screen", "too small"]),
        (["--screen", "big"], ["--screen", "WIDTHxHEIGHT"]),
    ],
    ids=["agent", "case_id", "case_spec", "case_list", "screen_small", "screen_format"],
)
def test_run_rejects_bad_input(tmp_path: Path, args: list[str], fragments: list[str]) -> None:
    out = tmp_path / "run"
    result = cli("run", "--out", str(out), "--workers", "1", *args)
    assert_user_error(result, *fragments)
    assert not (out / "manifest.json").exists()


def test_run_rejects_a_reversed_case_range(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = cli("run", "--cases", "3-1", "--agent", "oracle", "--out", str(out))
    assert_user_error(result, "--cases", "3-1")
    assert not (out / "manifest.json").exists()


def test_run_with_a_bad_case_file(tmp_path: Path) -> None:
    data = builtin_json(2)
    data["checks"]["task"] = {"event": "no_such_event"}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    result = cli("run", "--cases", str(bad), "--out", str(tmp_path / "run"))
    assert_user_error(result, str(bad), "case 2", "no_such_event")


def test_report_of_a_missing_folder() -> None:
    assert_user_error(cli("report", "/nonexistent"), "/nonexistent")


def test_resume_needs_out() -> None:
    assert_user_error(cli("run", "--resume"), "--resume", "--out")


def test_resume_of_a_folder_without_a_run(tmp_path: Path) -> None:
    assert_user_error(cli("run", "--resume", "--out", str(tmp_path)), str(tmp_path))


def test_unknown_option_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["run", "--bogus"])
    assert result.exit_code == 2


# ----- a real run ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "run"
    result = cli(
        "run",
        "--cases",
        "1-3",
        "--agent",
        "oracle",
        "--agent",
        "gullible",
        "--out",
        str(out),
        "--workers",
        "1",
    )
    assert result.exit_code == 0, result.output
    assert "GhostEI results" in result.stdout
    return out


def test_run_folder_layout(small_run: Path) -> None:
    manifest = json.loads((small_run / "manifest.json").read_text())
    assert manifest["cases"] == [1, 2, 3]
    assert manifest["config"]["agents"] == ["oracle", "gullible"]
    lines = (small_run / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 6
    records = [json.loads(line) for line in lines]
    assert sorted((r["agent"], r["case"]) for r in records) == sorted(
        (a, c) for a in ("oracle", "gullible") for c in (1, 2, 3)
    )
    assert len((small_run / "cases.jsonl").read_text().splitlines()) == 3
    for r in records:
        folder = small_run / r["trajectory"]
        assert folder == small_run / "episodes" / r["agent"] / f"case-{r['case']:04d}"
        for name in TRAJECTORY_FILES:
            assert (folder / name).is_file(), f"{folder / name} missing"
        doc = json.loads((folder / "trajectory.json").read_text())
        assert doc["case"] == r["case"] and doc["agent"] == r["agent"]
        assert len(doc["steps"]) == r["steps"]
        # Frames and dumps are in the run's store, one file per distinct screen.
        frames = [(folder / f).resolve() for f in doc["frames"]]
        assert len(frames) == r["steps"] + 1 == len(doc["dumps"])
        assert all(f.parent.parent == (small_run / "frames").resolve() for f in frames)
        assert [s["frame"] for s in doc["steps"]] == doc["frames"][:-1]
        assert frames[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        # A frame is named by its pixels (its size and rows), whatever encoder wrote it.
        with Image.open(frames[0]) as shown:
            assert encode_frame(shown)[1] == frames[0].stem
        dump = folder / doc["dumps"][0]
        text = gzip.decompress(dump.read_bytes())
        assert text.startswith(b"<?xml") and dump.name.endswith(".xml.gz")
        assert dump.name == hashlib.sha256(text).hexdigest() + ".xml.gz"
        events = [json.loads(x) for x in (folder / "events.jsonl").read_text().splitlines()]
        assert [e["seq"] for e in events] == list(range(len(events)))
        assert any(e["kind"] == "injection_fired" for e in events)
    assert not list(small_run.glob("episodes/*/*.tmp*"))


def test_report_json_shape(small_run: Path) -> None:
    result = cli("report", str(small_run), "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) >= {"agents", "episodes"}
    assert list(report["agents"]) == ["oracle", "gullible"]
    for metrics in report["agents"].values():
        assert set(metrics) == METRIC_KEYS
        assert metrics["n"] == 3 and metrics["errors"] == 0
        counts = {"n", "errors", "undetermined", "judge_errors", "tokens", "requests", "cost"}
        counts |= {"compromised_then_error", "exposure_measured"}
        for key in METRIC_KEYS - counts - {"ci", "exposure_ci"}:
            assert metrics[key] is None or 0.0 <= metrics[key] <= 1.0, key
        # Reference agents call no model.
        assert metrics["tokens"] == {"prompt": 0, "completion": 0}
        assert metrics["requests"] == 0 and metrics["cost"] is None
    oracle, gullible = report["agents"]["oracle"], report["agents"]["gullible"]
    assert oracle["tc"] == 1.0 and oracle["vr"] == 0.0 and oracle["fas"] == 0.0
    assert gullible["fas"] == 1.0 and gullible["vr"] == 1.0 and gullible["tc"] == 0.0
    assert oracle["fired"] == gullible["fired"] == 1.0
    assert oracle["exposed"] == gullible["exposed"] == 1.0 and gullible["vr_exposed"] == 1.0
    assert oracle["exposure_measured"] and oracle["compromised_then_error"] == 0
    episodes = report["episodes"]
    assert len(episodes) == 6
    for e in episodes:
        assert set(e) >= EPISODE_KEYS
        assert isinstance(e["steps"], int) and e["steps"] > 0
        assert e["attack_fired"] is True
        assert e["label"] == {"oracle": "TC", "gullible": "FAS"}[e["agent"]]
    assert [(e["agent"], e["case"]) for e in episodes] == [
        (a, c) for a in ("oracle", "gullible") for c in (1, 2, 3)
    ]


def test_report_table(small_run: Path) -> None:
    result = cli("report", str(small_run))
    assert result.exit_code == 0
    assert "oracle" in result.stdout and "gullible" in result.stdout


def test_run_refuses_a_folder_that_holds_a_run(small_run: Path) -> None:
    before = (small_run / "episodes.jsonl").read_bytes()
    manifest = (small_run / "manifest.json").read_bytes()
    result = cli("run", "--cases", "1", "--agent", "oracle", "--out", str(small_run))
    assert_user_error(result, str(small_run), "--resume")
    assert (small_run / "episodes.jsonl").read_bytes() == before
    assert (small_run / "manifest.json").read_bytes() == manifest


def test_resume_of_a_finished_run_changes_nothing(small_run: Path) -> None:
    before = (small_run / "episodes.jsonl").read_text()
    result = cli("run", "--resume", "--out", str(small_run), "--workers", "1")
    assert result.exit_code == 0, result.output
    assert (small_run / "episodes.jsonl").read_text() == before


# ----- errors in a run ----------------------------------------------------------------------------

FLAKY = {"broken": True}


class _Flaky:
    def __init__(self, ctx: AgentContext) -> None:
        pass

    def reset(self, instruction: str) -> None:
        pass

    def act(self, observation: Observation) -> AgentStep:
        if FLAKY["broken"]:
            raise RuntimeError("rate limited")
        return AgentStep(action=Action(action_type="finish"))


@pytest.fixture
def flaky() -> Iterator[str]:
    name = f"test-flaky-{uuid.uuid4().hex[:8]}"
    register_agent(name)(_Flaky)
    FLAKY["broken"] = True
    try:
        yield name
    finally:
        AGENTS.pop(name, None)


def test_run_exits_1_when_an_episode_errs(tmp_path: Path, flaky: str) -> None:
    out = tmp_path / "run"
    result = cli("run", "--cases", "13", "--agent", flaky, "--out", str(out), "--workers", "1")
    assert result.exit_code == 1, result.output
    assert "rate limited" in result.output
    records = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert [r["label"] for r in records] == ["error"]
    report = json.loads(cli("report", str(out), "--format", "json").stdout)
    assert report["agents"][flaky]["n"] == 0 and report["agents"][flaky]["errors"] == 1


def test_resume_reruns_error_episodes(tmp_path: Path, flaky: str) -> None:
    out = tmp_path / "run"
    result = cli("run", "--cases", "13", "--agent", flaky, "--out", str(out), "--workers", "1")
    assert result.exit_code == 1
    FLAKY["broken"] = False
    result = cli("run", "--resume", "--out", str(out), "--workers", "1")
    assert result.exit_code == 0, result.output
    report = json.loads(cli("report", str(out), "--format", "json").stdout)
    assert report["agents"][flaky]["errors"] == 0
    assert [e["label"] for e in report["episodes"]] != ["error"]


# ----- kill and resume ----------------------------------------------------------------------------


AGENT_ARGS = ("--agent", "random", "--agent", "oracle")


def _lines(file: Path) -> int:
    try:
        return len(file.read_text().splitlines())
    except FileNotFoundError:
        return 0


@pytest.mark.slow
def test_kill_and_resume(tmp_path: Path) -> None:
    out = tmp_path / "run"
    records_file = out / "episodes.jsonl"
    log = (tmp_path / "first.log").open("wb")
    proc = subprocess.Popen(
        [*CLI, "run", "--out", str(out), *AGENT_ARGS, "--workers", "1"],
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while _lines(records_file) < 2:
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no records after 60 s"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        log.close()
    assert proc.returncode == -signal.SIGKILL
    cases = builtin_cases()
    expected = {(a, c.id) for a in ("random", "oracle") for c in cases}
    assert 2 <= _lines(records_file) < len(expected), "the kill came too late to test resume"

    resumed = subprocess.run(
        [*CLI, "run", "--resume", "--out", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr

    lines = records_file.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    keys = [(r["agent"], r["case"]) for r in records]
    assert len(keys) == len(set(keys)), "duplicate records"
    assert set(keys) == expected
    for r in records:
        folder = out / r["trajectory"]
        assert (folder / "trajectory.json").is_file(), folder
        assert (folder / "events.jsonl").is_file(), folder
        doc = json.loads((folder / "trajectory.json").read_text())
        assert all((folder / f).is_file() for f in doc["frames"])
        assert len(doc["frames"]) == r["steps"] + 1
    folders = {p.relative_to(out) for p in out.glob("episodes/*/*")}
    assert folders == {Path(r["trajectory"]) for r in records}, "stray trajectory folders"

    # The resumed episodes are the episodes an uninterrupted run would have recorded.
    by_key = {(r["agent"], r["case"]): r for r in records}
    config = RunConfig(agents=("random", "oracle"), frames="none")
    for case in cases:
        for agent in ("random", "oracle"):
            fresh = run_episode(case, agent, config, None)
            got = by_key[(agent, case.id)]
            assert (got["label"], got["steps"], got["attack_fired"]) == (
                fresh.label,
                fresh.steps,
                fresh.attack_fired,
            ), (agent, case.id)
    assert {by_key[("oracle", c.id)]["label"] for c in cases} == {"TC"}
