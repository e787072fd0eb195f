"""``--frames all|keyframes|none``: what each keeps, and that kept frames stay at their steps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ghostei.cases import builtin_cases
from ghostei.cli import main
from ghostei.events import Event
from ghostei.frames import keyframe_indices
from ghostei.judge.keyframes import load_episode
from ghostei.rundir import RunDir

# An overlay case (the attack fires mid-episode) and a static one.
CASES = "1,3"


def run(tmp_path: Path, name: str, *args: str) -> RunDir:
    out = tmp_path / name
    result = CliRunner().invoke(
        main,
        [
            *("run", "--cases", CASES, "--agent", "gullible", "--agent", "random"),
            *("--workers", "1", "--out", str(out), *args),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return RunDir(out)


def trajectories(run: RunDir) -> dict[tuple[str, int], dict[str, Any]]:
    out = {}
    for r in run.records():
        doc = json.loads((run.path / r.trajectory / "trajectory.json").read_text())
        out[(r.agent, r.case)] = doc
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunDir]:
    tmp = tmp_path_factory.mktemp("frames")
    return {
        "all": run(tmp, "all"),
        "keyframes": run(tmp, "key", "--frames", "keyframes"),
        "none": run(tmp, "none", "--no-frames"),
    }


def test_keyframes_keep_first_last_attack_and_compliance_at_their_steps(
    runs: dict[str, RunDir],
) -> None:
    full, key = trajectories(runs["all"]), trajectories(runs["keyframes"])
    records = {(r.agent, r.case): r for r in runs["keyframes"].records()}
    dropped = 0
    for episode, doc in key.items():
        every = full[episode]
        frames = doc["frames"]
        assert len(frames) == len(every["frames"]) == len(doc["dumps"])
        assert frames[0] and frames[-1]
        record = records[episode]
        if record.exposed_step is not None:
            assert frames[record.exposed_step], f"{episode}: the attack's first frame was dropped"
        if record.verdict is not None and record.verdict.first_compliance_step is not None:
            assert frames[record.verdict.first_compliance_step]
        for i, (kept, dump) in enumerate(zip(frames, doc["dumps"], strict=True)):
            assert (kept is None) == (dump is None)
            if kept is None:
                dropped += 1
                continue
            # A kept frame is the very frame --frames all saved at that step.
            assert Path(kept).name == Path(every["frames"][i]).name
        for step in doc["steps"]:
            assert step["frame"] == frames[step["step"]]
    assert dropped > 0, "keyframes kept every frame: nothing to compare"


def test_keyframes_store_fewer_files_and_the_judge_reads_them_in_order(
    runs: dict[str, RunDir],
) -> None:
    def stored(run: RunDir) -> int:
        return sum(1 for _ in (run.path / "frames").rglob("*.png"))

    assert 0 < stored(runs["keyframes"]) < stored(runs["all"])
    for r in runs["keyframes"].records():
        episode = load_episode(runs["keyframes"].path / r.trajectory)
        indices = [f.index for f in episode.frames]
        assert indices == sorted(indices) and all(f.path.exists() for f in episode.frames)


def test_no_frames_saves_none_and_the_labels_do_not_depend_on_frames(
    runs: dict[str, RunDir],
) -> None:
    assert not (runs["none"].path / "frames").exists()
    for doc in trajectories(runs["none"]).values():
        assert doc["frames"] == [] and doc["dumps"] == []
    labels = {
        name: [(r.agent, r.case, r.label) for r in run.records()] for name, run in runs.items()
    }
    assert labels["all"] == labels["keyframes"] == labels["none"]
    assert (
        json.loads((runs["keyframes"].path / "manifest.json").read_text())["config"]["frames"]
        == "keyframes"
    )


def _event(seq: int, step: int, kind: str) -> Event:
    return Event(seq=seq, step=step, time="", kind=kind, package="p")


def test_keyframe_indices_from_screens_and_events() -> None:
    a, b = ("screen a",), ("screen b",)
    screens = [a, a, a, b, b, b, b, a]
    steps = [{"step": i, "events": [i]} for i in range(7)]
    events = [_event(i, i, "form_submitted" if i == 5 else "text_typed") for i in range(7)]
    keep = keyframe_indices(screens, steps, events, exposed_step=1, verdict=None)
    # first, last; the attack shown at 1; compliance at step 5 and its outcome; changes at 3, 7
    assert keep == {0, 7, 1, 5, 6, 3}
    assert keyframe_indices([], [], [], exposed_step=None, verdict=None) == set()


def test_the_cli_refuses_an_unknown_frames_mode(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["run", "--cases", "1", "--frames", "some", "--out", str(tmp_path / "x")]
    )
    assert result.exit_code == 2
    assert "--frames" in result.output and "Traceback" not in result.output
    assert builtin_cases()  # the cases exist; only the option was wrong
