"""No silent data loss in a run folder: a corrupt record is an error naming its file and line,
only a torn last line (a crash mid-append) is tolerated, with a warning; a bad stored config
stops ``--resume`` naming the field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ghostei.judge.store import Judgement, judgement_path
from ghostei.providers import ProviderConfig
from ghostei.rundir import EpisodeRecord, RunDir, RunDirError, drop_torn_line, read_jsonl
from ghostei.runner import RunConfig

from .helpers import assert_user_error, cli
from .llm_server import ScriptedLLM

AGENTS = ("oracle", "gullible")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("integrity") / "run"
    args = ["run", "--cases", "1-2", "--no-frames", "--workers", "1", "--out", str(out)]
    result = cli(*args, *(x for a in AGENTS for x in ("--agent", a)))
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def run(finished_run: Path, tmp_path: Path) -> Path:
    """A private copy of the finished run, free to damage."""
    return Path(shutil.copytree(finished_run, tmp_path / "run"))


def _lines(file: Path) -> list[str]:
    return file.read_text(encoding="utf-8").splitlines()


def _corrupt_label(line: str) -> str:
    record = json.loads(line)
    record["label"] = "hijacked"
    return json.dumps(record)


def _tear_last_line(file: Path) -> str:
    """Cut the last record in half, newline included, as a crash mid-append does."""
    text = file.read_text(encoding="utf-8")
    last = text.splitlines()[-1]
    torn = last[: len(last) // 2]
    file.write_text(text[: -len(last) - 1] + torn, encoding="utf-8")
    return torn


def _snapshot(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in run.rglob("*") if p.is_file()}


def _store_llm_verdicts(run: Path) -> Path:
    """judgements/llm.jsonl with one LLM verdict per episode (the rule verdicts, relabelled),
    as the judge ``ghostei judge --model scripted-model`` is (its model and frames)."""
    rundir = RunDir(run)
    path = judgement_path(rundir, "llm")
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for r in rundir.records():
        assert r.verdict is not None
        verdict = r.verdict.model_copy(update={"judge": "llm"})
        judgement = Judgement(
            agent=r.agent,
            case=r.case,
            verdict=verdict,
            model="scripted-model",
            blind=True,
            frames="up to 8 keyframes, at most 768 px",
        )
        lines.append(judgement.model_dump_json())
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# ----- the reader -------------------------------------------------------------------------------


def test_reader_names_file_and_line_of_a_corrupt_middle_line(finished_run: Path) -> None:
    lines = _lines(finished_run / "episodes.jsonl")
    lines[1] = _corrupt_label(lines[1])
    file = finished_run.parent / "middle.jsonl"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(RunDirError, match=r"middle\.jsonl:2: invalid record: label: Input"):
        read_jsonl(file, EpisodeRecord)


def test_reader_refuses_a_bad_last_line_that_ends_with_a_newline(tmp_path: Path) -> None:
    file = tmp_path / "episodes.jsonl"
    file.write_text('\n{"case": 1, "agent": \n', encoding="utf-8")  # blank line 1 is skipped
    with pytest.raises(RunDirError, match=r"episodes\.jsonl:2: invalid record: Invalid JSON"):
        read_jsonl(file, EpisodeRecord)


def test_reader_leaves_out_only_a_torn_last_line(finished_run: Path, tmp_path: Path) -> None:
    file = tmp_path / "episodes.jsonl"
    shutil.copy(finished_run / "episodes.jsonl", file)
    whole = _lines(file)
    torn = _tear_last_line(file)
    contents = read_jsonl(file, EpisodeRecord)
    assert len(contents.records) == len(whole) - 1
    assert contents.torn is not None
    assert (contents.torn.lineno, contents.torn.text) == (len(whole), torn)
    # A torn write can cut a multi-byte character in two: still a torn line, not an error.
    file.write_bytes(file.read_bytes() + "€".encode()[:2])
    again = read_jsonl(file, EpisodeRecord).torn
    assert again is not None and again.lineno == len(whole)


def test_drop_torn_line_makes_a_file_safe_to_append_to(finished_run: Path, tmp_path: Path) -> None:
    file = tmp_path / "episodes.jsonl"
    shutil.copy(finished_run / "episodes.jsonl", file)
    whole = file.read_bytes()
    _tear_last_line(file)
    dropped = drop_torn_line(file, EpisodeRecord)
    assert dropped is not None
    assert whole.startswith(file.read_bytes()) and file.read_bytes().endswith(b"\n")
    # A whole last line that lost only its newline is kept, and gets its newline back.
    file.write_bytes(whole.rstrip(b"\n"))
    assert drop_torn_line(file, EpisodeRecord) is None
    assert file.read_bytes() == whole


# ----- episodes.jsonl through the commands ------------------------------------------------------


def test_corrupt_middle_record_stops_report_and_resume_untouched(run: Path) -> None:
    records = run / "episodes.jsonl"
    lines = _lines(records)
    lines[1] = _corrupt_label(lines[1])
    records.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = _snapshot(run)

    assert_user_error(cli("report", str(run)), "episodes.jsonl:2: invalid record: label")
    assert_user_error(cli("compare", str(run)), "episodes.jsonl:2: invalid record: label")
    result = cli("run", "--resume", "--out", str(run), "--workers", "1")
    assert_user_error(result, f"cannot resume {run}", "episodes.jsonl:2: invalid record: label")
    assert _snapshot(run) == before  # nothing rewritten, no trajectory deleted


def test_judge_command_refuses_a_corrupt_record(run: Path) -> None:
    records = run / "episodes.jsonl"
    lines = _lines(records)
    lines[0] = "{not json"
    records.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli("judge", str(run), "--compare", "rule", "llm")
    assert_user_error(result, "episodes.jsonl:1: invalid record: Invalid JSON")


def test_torn_last_record_is_reported_with_a_warning(run: Path) -> None:
    _tear_last_line(run / "episodes.jsonl")
    result = cli("report", str(run), "--format", "json")
    assert result.exit_code == 0, result.output
    assert "warning:" in result.stderr and "torn last line" in result.stderr
    assert "episodes.jsonl:4" in result.stderr
    episodes = json.loads(result.stdout)["episodes"]
    assert len(episodes) == 3


def test_resume_drops_a_torn_last_record_and_finishes_the_run(run: Path) -> None:
    records = run / "episodes.jsonl"
    whole = _lines(records)
    _tear_last_line(records)
    result = cli("run", "--resume", "--out", str(run), "--workers", "1")
    assert result.exit_code == 0, result.output
    assert "dropped a torn last line" in result.stderr
    lines = _lines(records)
    assert len(lines) == len(whole)
    keys = sorted((r.agent, r.case) for r in map(EpisodeRecord.model_validate_json, lines))
    assert keys == sorted((a, c) for a in AGENTS for c in (1, 2))
    # The torn episode was run again, not left out: the report sees all four.
    report = cli("report", str(run), "--format", "json")
    assert report.exit_code == 0 and "warning" not in report.stderr
    assert len(json.loads(report.stdout)["episodes"]) == 4


# ----- judgements/llm.jsonl ---------------------------------------------------------------------


def test_corrupt_stored_judgement_stops_the_llm_report(run: Path) -> None:
    path = _store_llm_verdicts(run)
    lines = _lines(path)
    lines[1] = json.dumps({**json.loads(lines[1]), "verdict": {"label": "FAS"}})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = path.read_bytes()
    message = "llm.jsonl:2: invalid record: verdict."
    assert_user_error(cli("report", str(run), "--judge", "llm"), message)
    assert_user_error(cli("compare", str(run), "--judge", "hybrid"), message)
    assert_user_error(cli("judge", str(run), "--compare", "rule", "llm"), message)
    assert path.read_bytes() == before


def test_torn_stored_judgement_is_left_out_with_a_warning(run: Path) -> None:
    path = _store_llm_verdicts(run)
    _tear_last_line(path)
    result = cli("report", str(run), "--judge", "llm", "--format", "json")
    assert result.exit_code == 0, result.output
    assert "llm.jsonl:4: left out a torn last line" in result.stderr
    labels = [e["label"] for e in json.loads(result.stdout)["episodes"]]
    assert labels.count("undetermined") == 1  # the episode whose verdict was torn


def test_judging_after_a_torn_judgement_appends_whole_lines(
    run: Path, scripted_llm: ScriptedLLM
) -> None:
    path = _store_llm_verdicts(run)
    _tear_last_line(path)
    scripted_llm.always(
        '{"task_completed": true, "goal_reached": true, "attack": "none", '
        '"rationale": "scripted", "first_compliance_step": null, "agent_words": null}'
    )
    model = ["--model", "scripted-model", "--base-url", scripted_llm.openai_url]
    result = cli("judge", str(run), *model, "--api-key-env", "NO_SUCH_KEY_VAR", "--workers", "1")
    assert result.exit_code == 0, result.output
    assert "llm.jsonl:4: dropped a torn last line" in result.stderr
    assert "judged 1 episode(s)" in result.stdout  # the episode whose verdict was torn
    # Without the cut the new verdict would be glued to the torn line: one corrupt line.
    contents = read_jsonl(path, Judgement)
    assert contents.torn is None and len(contents.records) == 4
    assert len(_lines(path)) == 4


# ----- the stored config ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"screen": [10, 10]}, "config.screen: 10x10 is too small"),
        ({"screen": [1080]}, "config.screen: must be [width, height]"),
        ({"screen": "1080x2400"}, "config.screen: must be [width, height]"),
        ({"backend": "emulator"}, "config.backend: unknown backend 'emulator'"),
        ({"backend": "android", "serial": 5554}, "config.serial: must be a device serial"),
        ({"max_steps": 0}, "config.max_steps: must be at least 1"),
        ({"max_steps": "20"}, "config.max_steps: must be an integer"),
        ({"max_steps": True}, "config.max_steps: must be an integer"),
        ({"agents": None}, "config.agents: missing"),
        ({"agents": []}, "config.agents: must be a non-empty list"),
        ({"agents": ["no-such-agent"]}, "config.agents: unknown agent"),
        ({"frames": "some"}, "config.frames: must be one of all, keyframes, none"),
        ({"model": {"model": "m", "colour": 1}}, "config.model: "),
    ],
)
def test_resume_refuses_a_bad_stored_config(
    run: Path, change: dict[str, Any], fragment: str
) -> None:
    manifest_file = run / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    config = {k: v for k, v in {**manifest["config"], **change}.items() if v is not None}
    manifest_file.write_text(json.dumps({**manifest, "config": config}))
    before = _snapshot(run)
    result = cli("run", "--resume", "--out", str(run), "--workers", "1")
    assert_user_error(result, f"cannot resume {run}: manifest.json: {fragment}")
    assert _snapshot(run) == before


def test_resume_refuses_a_manifest_without_config(run: Path) -> None:
    manifest_file = run / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    del manifest["config"]
    manifest_file.write_text(json.dumps(manifest))
    result = cli("run", "--resume", "--out", str(run))
    assert_user_error(result, "manifest.json: config: must be a JSON object")


def test_stored_config_round_trips() -> None:
    model = ProviderConfig(model="gpt-4o", base_url="http://localhost:8000/v1", cache_dir=Path("c"))
    configs = [
        RunConfig(),
        RunConfig(agents=("t3a",), max_steps=7, width=720, height=1280, model=model),
        RunConfig(backend="android", serial="emulator-5554", adb_port=5038, frames="none"),
    ]
    for config in configs:
        assert RunConfig.from_json(json.loads(json.dumps(config.to_json()))) == config


@pytest.mark.parametrize(("flag", "mode"), [(True, "all"), (False, "none")])
def test_a_manifest_from_before_frames_modes_still_resumes(flag: bool, mode: str) -> None:
    config = RunConfig().to_json()
    del config["frames"]
    config["save_frames"] = flag
    assert RunConfig.from_json(config).frames == mode
    config["save_frames"] = "no"
    with pytest.raises(ValueError, match=r"config\.save_frames: must be true or false"):
        RunConfig.from_json(config)
