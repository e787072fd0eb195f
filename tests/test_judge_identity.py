"""Verdicts that know their judge: "already judged" means judged by the same judge (model,
protocol, template, text-only, frames); another judge's verdicts are stored beside, never
mixed, and a report over a run holding several asks which, and names the judge it read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ghostei.cli import main
from ghostei.judge.store import (
    JudgeChoice,
    identities,
    judged_records,
    judgement_path,
    load_stored,
)
from ghostei.rundir import RunDir

from .helpers import finished_run, fresh_copy
from .llm_server import ScriptedLLM
from .test_llm_judge import CASES, GOOD_FULL, GOOD_SAFE


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """oracle and gullible on two built-in cases: four finished episodes."""
    return finished_run(tmp_path_factory.mktemp("run") / "run", CASES, ("oracle", "gullible"))


@pytest.fixture
def run(finished: Path, tmp_path: Path) -> RunDir:
    """A fresh copy of the finished run (judging writes into the folder)."""
    return fresh_copy(finished, tmp_path)


def ghostei(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def judge_with(run: RunDir, llm: ScriptedLLM, model: str, *extra: str) -> Result:
    return ghostei(
        "judge", str(run.path), "--model", model, "--base-url", llm.openai_url,
        "--api-key-env", "NO_SUCH_KEY_VAR", "--workers", "1", *extra,
    )  # fmt: skip


def test_another_model_judges_every_episode_and_stores_beside(
    run: RunDir, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.always(GOOD_SAFE)
    first = judge_with(run, scripted_llm, "m")
    assert first.exit_code == 0, first.output
    assert "judged 4 episode(s)" in first.output
    assert "llm judge m (protocol ghostei; up to 8 keyframes, at most 768 px)" in first.output
    # The same judge again: nothing left to do.
    again = judge_with(run, scripted_llm, "m")
    assert "judged 0 episode(s)" in again.output and len(scripted_llm.requests) == 4
    # Another model judges all four, and the first model's verdicts stay.
    scripted_llm.always(GOOD_FULL)
    second = judge_with(run, scripted_llm, "m2")
    assert second.exit_code == 0, second.output
    assert "judged 4 episode(s)" in second.output
    assert "holds verdicts of other judges, kept beside" in second.output
    assert [i.model for i in identities(run, "llm")] == ["m", "m2"]
    by_m = load_stored(run, "llm", JudgeChoice(model="m"))
    by_m2 = load_stored(run, "llm", JudgeChoice(model="m2"))
    assert {j.verdict.label for j in by_m.values()} == {"TC"}
    assert {j.verdict.label for j in by_m2.values()} == {"FAS"}
    assert all(j.frames == "up to 8 keyframes, at most 768 px" for j in by_m.values())
    assert all(j.frames_sent and j.frames_sent >= 2 for j in by_m.values())
    # Text only is another judge too.
    scripted_llm.always(GOOD_SAFE)
    text = judge_with(run, scripted_llm, "m", "--text-only")
    assert "judged 4 episode(s)" in text.output
    assert len(identities(run, "llm")) == 3


def test_force_replaces_only_the_same_judges_verdicts(
    run: RunDir, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.always(GOOD_SAFE)
    judge_with(run, scripted_llm, "m")
    scripted_llm.always(GOOD_FULL)
    judge_with(run, scripted_llm, "m2")
    scripted_llm.always(GOOD_FULL)
    forced = judge_with(run, scripted_llm, "m", "--force")
    assert "judged 4 episode(s)" in forced.output
    assert {r.label for r in judged_records(run, "llm", JudgeChoice(model="m"))} == {"FAS"}
    assert {r.label for r in judged_records(run, "llm", JudgeChoice(model="m2"))} == {"FAS"}
    assert len(identities(run, "llm")) == 2


def test_a_report_over_two_judges_asks_which_and_names_the_one_it_read(
    run: RunDir, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.always(GOOD_SAFE)
    judge_with(run, scripted_llm, "m")
    alone = ghostei("report", str(run.path), "--judge", "llm", "--by", "none")
    assert alone.exit_code == 0, alone.output
    assert "Judge: llm, by the llm judge m (protocol ghostei" in " ".join(alone.output.split())
    scripted_llm.always(GOOD_FULL)
    judge_with(run, scripted_llm, "m2")
    for command in (
        ["report", str(run.path), "--judge", "llm"],
        ["report", str(run.path), "--judge", "llm", "--format", "json"],
        ["compare", str(run.path), "--judge", "llm"],
        ["judge", str(run.path), "--compare", "rule", "llm"],
    ):
        refused = ghostei(*command)
        assert refused.exit_code == 2, (command, refused.output)
        assert "llm judge m (" in refused.output and "llm judge m2 (" in refused.output
        assert "--judge-model" in refused.output
    chosen = ghostei(
        "report", str(run.path), "--judge", "llm", "--judge-model", "m2", "--format", "json"
    )
    assert chosen.exit_code == 0, chosen.output
    data = json.loads(chosen.output[chosen.output.index("{") :])
    assert data["judged_by"] == [
        "llm judge m2 (protocol ghostei; up to 8 keyframes, at most 768 px)"
    ]
    assert {e["label"] for e in data["episodes"]} == {"FAS"}
    unknown = ghostei("report", str(run.path), "--judge", "llm", "--judge-model", "m3")
    assert unknown.exit_code == 2 and "no llm verdicts of the judge asked for" in unknown.output
    compared = ghostei("judge", str(run.path), "--compare", "rule", "llm", "--judge-model", "m")
    assert compared.exit_code == 0, compared.output
    assert "Judge: llm judge m (protocol ghostei" in compared.output


def test_verdicts_stored_before_identities_still_read(run: RunDir) -> None:
    """A store written before verdicts named their frames is one judge (frames unknown)."""
    path = judgement_path(run, "llm")
    path.parent.mkdir(parents=True, exist_ok=True)
    verdict = run.records()[0].verdict
    assert verdict is not None
    old = {
        "agent": run.records()[0].agent,
        "case": run.records()[0].case,
        "verdict": verdict.model_copy(update={"judge": "llm"}).model_dump(mode="json"),
        "model": "old-model",
        "blind": True,
    }
    Path(path).write_text(json.dumps(old) + "\n")
    [identity] = identities(run, "llm")
    assert identity.frames == "" and "frames not recorded" in identity.describe()
    assert len(judged_records(run, "llm")) == len(run.records())


PAPER_SAFE = json.dumps(
    {"task_completion": True, "full_attack_success": False, "partial_attack_success": False}
)


def test_the_papers_judge_warns_of_frame_options_it_ignores_and_names_its_frames(
    run: RunDir, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.always(PAPER_SAFE)
    result = judge_with(
        run,
        scripted_llm,
        "m",
        "--protocol",
        "paper",
        "--max-frames",
        "4",
        "--image-max-side",
        "512",
    )
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "--max-frames does not apply to --protocol paper" in flat
    assert "--image-max-side does not apply to --protocol paper" in flat
    assert "--all-frames does not apply" not in flat
    [identity] = identities(run, "paper")
    assert identity.frames == "every frame, full size" and identity.protocol == "paper"
    assert identity.template_sha256 is None and "built-in template" in identity.describe()
    stored = load_stored(run, "paper")
    assert all(j.verdict.goal_reached is None for j in stored.values())
