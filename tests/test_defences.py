"""The defence registry and how defences are put around agents in a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ghostei.agents import AgentStep
from ghostei.cases import builtin_cases
from ghostei.cli import main
from ghostei.defences import (
    DEFENCES,
    Defence,
    DefenceContext,
    DefenceError,
    agent_labels,
    catalogue,
    defended_label,
    parse_spec,
    parse_specs,
)
from ghostei.defences.warn_popups import NOTE
from ghostei.observation import Observation
from ghostei.runner import RunConfig, run_episode

from .llm_server import ScriptedLLM

CASE = next(c for c in builtin_cases() if c.id == 1)

# A user's own defence, loaded by path: it blocks every tap on a window of another package
# than the foreground app, and counts what it saw.
USER_DEFENCE = """
from ghostei.defences import Defence, DefenceContext


class NoForeignTaps(Defence):
    name = "no-foreign-taps"
    point = "action"

    def __init__(self, ctx: DefenceContext, *, strict: bool = False, limit: int = 3) -> None:
        super().__init__(ctx)
        self.strict, self.limit = strict, limit

    def review(self, observation, step):
        element = observation.target(step.action)
        if step.action.action_type == "click" and element is not None:
            if element.package != observation.foreground_package:
                return self.block(step, f"a tap on {element.package}")
        return step
"""


@pytest.fixture
def user_defence(tmp_path: Path) -> str:
    path = tmp_path / "guard.py"
    path.write_text(USER_DEFENCE)
    return f"{path}:NoForeignTaps"


def test_specs_name_a_defence_and_convert_its_options(user_defence: str) -> None:
    assert parse_spec("warn-popups").label == "warn-popups"
    spec = parse_spec(f"{user_defence}:strict=true,limit=5")
    assert spec.options == {"strict": True, "limit": 5}
    assert spec.label == "no-foreign-taps:limit=5,strict=true"
    assert parse_spec(user_defence).label == "no-foreign-taps"
    assert defended_label("m3a", parse_specs(["warn-popups", user_defence])) == (
        "m3a+warn-popups+no-foreign-taps"
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("nope", "unknown defence 'nope'; known: "),
        ("warn-popups:loud=1", "unknown option 'loud=1' (it takes: note="),
        ("warn-popups:note", "option note needs a value: note=STR"),
        ("ghostei.actions:Action", "is not a subclass of ghostei.defences.Defence"),
        ("no/such/file.py:X", "no file no/such/file.py"),
    ],
)
def test_a_bad_spec_says_what_is_wrong(text: str, said: str) -> None:
    with pytest.raises(DefenceError) as caught:
        parse_spec(text)
    assert said in str(caught.value)


def test_a_bad_option_value_names_the_option(user_defence: str) -> None:
    with pytest.raises(DefenceError, match="option limit must be int, not 'many'"):
        parse_spec(f"{user_defence}:limit=many")
    with pytest.raises(DefenceError, match="option strict must be bool"):
        parse_spec(f"{user_defence}:strict=perhaps")


def test_every_builtin_defence_is_listed_with_its_point_and_source() -> None:
    listed = {entry["name"]: entry for entry in catalogue()}
    assert set(listed) == set(DEFENCES)
    for entry in listed.values():
        assert entry["point"] in ("prompt", "observation", "action")
        assert entry["summary"] and entry["source"]
    shown = CliRunner().invoke(main, ["defences", "list", "--format", "json"])
    assert shown.exit_code == 0 and json.loads(shown.output) == json.loads(json.dumps(catalogue()))


def test_manifest_labels_follow_the_defences() -> None:
    config = RunConfig(agents=("oracle", "gullible"), defences=("warn-popups",))
    assert agent_labels(config.to_json()) == ["oracle+warn-popups", "gullible+warn-popups"]
    assert RunConfig.from_json(config.to_json()) == config
    with pytest.raises(ValueError, match=r"config\.defences: unknown defence 'gone'"):
        RunConfig.from_json({**config.to_json(), "defences": ["gone"]})


def test_a_blocked_action_is_an_event_and_a_step_record(user_defence: str, tmp_path: Path) -> None:
    config = RunConfig(agents=("gullible",), defences=(user_defence,), frames="none")
    record = run_episode(CASE, "gullible", config, tmp_path)
    assert record.agent == "gullible+no-foreign-taps"
    folder = tmp_path / record.trajectory
    events = [json.loads(x) for x in (folder / "events.jsonl").read_text().splitlines()]
    blocked = [e for e in events if e["kind"] == "action_blocked"]
    assert blocked, "gullible taps the overlay: the gate blocks it"
    first = blocked[0]["data"]
    assert first["defence"] == "no-foreign-taps" and first["action"]["action_type"] == "click"
    steps = json.loads((folder / "trajectory.json").read_text())["steps"]
    stopped = [s for s in steps if "blocked" in s]
    assert stopped[0]["action"] == {"action_type": "wait"}
    assert stopped[0]["blocked"]["reason"].startswith("a tap on ")
    # The overlay's confirm button was never pressed through the gate.
    assert not any(e["kind"] == "overlay_confirmed" for e in events)


class Recorder(Defence):
    """Notes the order it is called in, in a list shared by several."""

    name = "recorder"

    def __init__(self, ctx: DefenceContext, *, tag: str = "") -> None:
        super().__init__(ctx)
        self.tag = tag

    def screen(self, observation: Observation) -> Observation:
        LOG.append(f"screen {self.tag}")
        return observation

    def review(self, observation: Observation, step: AgentStep) -> AgentStep:
        LOG.append(f"review {self.tag}")
        return step


LOG: list[str] = []


def test_defences_apply_in_order_the_first_outermost() -> None:
    from ghostei.agents import AgentContext, build_agent
    from ghostei.defences import defended
    from ghostei.sim.phone import SimPhone
    from ghostei.world import build_world

    owner = build_world(CASE.setup).owner
    ctx = DefenceContext.for_case(CASE, owner)
    agent = defended(
        build_agent("oracle", AgentContext(CASE, 0, 5, owner)),
        Recorder(ctx, tag="a"),
        Recorder(ctx, tag="b"),
    )
    LOG.clear()
    agent.reset(CASE.prompt)
    phone = SimPhone()
    phone.reset(CASE.setup)
    agent.act(phone.observe())
    assert LOG == ["screen a", "screen b", "review b", "review a"]


def test_a_prompt_defence_reaches_every_request_of_a_framework(
    scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    scripted_llm.push(
        'Reason: open it\nAction: {"action_type": "open_app", "app_name": "Booking"}',
        "Opened Booking.",
        'Reason: done\nAction: {"action_type": "status", "goal_status": "complete"}',
    )
    config = RunConfig(
        agents=("t3a",),
        frames="none",
        model=scripted_llm.provider_config(),
        defences=("warn-popups",),
    )
    record = run_episode(CASE, "t3a", config, None)
    assert record.error is None and record.agent == "t3a+warn-popups"
    assert len(scripted_llm.requests) == 3
    for request in scripted_llm.requests:
        assert request.system() == NOTE  # T3A sends no system message of its own
    assert record.usage["requests"] == 3  # the defended requests are metered


def test_run_and_resume_name_the_defences(tmp_path: Path, user_defence: str) -> None:
    out = tmp_path / "run"
    args = ["run", "--agent", "gullible", "--cases", "1", "--out", str(out), "--no-frames"]
    ran = CliRunner().invoke(main, [*args, "--defence", "warn-popups"])
    assert ran.exit_code == 0, ran.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["defences"] == ["warn-popups"]
    (line,) = (out / "episodes.jsonl").read_text().splitlines()
    assert json.loads(line)["agent"] == "gullible+warn-popups"
    other = CliRunner().invoke(main, [*args, "--resume", "--defence", user_defence])
    assert other.exit_code == 2 and "--defences" in other.output, other.output
    bad = CliRunner().invoke(main, ["run", "--agent", "gullible", "--defence", "nope"])
    assert bad.exit_code == 2 and "--defence: unknown defence 'nope'" in bad.output
    assert "Traceback" not in bad.output


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        # An empty note would run the baseline with no warning at all.
        ("warn-popups:note=", "--defence warn-popups:note=: warn-popups: the note must say"),
        ("warn-popups:note=  ", "the note must say something"),
        # The last of two values would win without a word.
        ("provenance:draw=true,draw=false", "option draw is given more than once"),
        ("overlay-gate:on_block=ask,on_block=skip", "option on_block is given more than once"),
        ("spotlight:marker", "option marker needs a value: marker=STR"),
    ],
)
def test_bad_defence_options_are_refused_by_the_cli(spec: str, said: str, tmp_path: Path) -> None:
    args = ["run", "--agent", "oracle", "--cases", "1", "--out", str(tmp_path / "run")]
    refused = CliRunner().invoke(main, [*args, "--no-frames", "--defence", spec])
    assert refused.exit_code == 2, refused.output
    assert said in " ".join(refused.output.split()), refused.output
    assert "Traceback" not in refused.output
    assert not (tmp_path / "run" / "episodes.jsonl").exists()


def test_a_bare_bool_option_is_true(tmp_path: Path) -> None:
    assert parse_spec("overlay-gate:allow_dismiss").options == {"allow_dismiss": True}
    assert parse_spec("provenance:draw").options == {"draw": True}
    out = tmp_path / "run"
    args = ["run", "--agent", "oracle", "--cases", "1", "--out", str(out), "--no-frames"]
    ran = CliRunner().invoke(main, [*args, "--defence", "overlay-gate:allow_dismiss"])
    assert ran.exit_code == 0, ran.output
    (line,) = (out / "episodes.jsonl").read_text().splitlines()
    assert json.loads(line)["agent"] == "oracle+overlay-gate:allow_dismiss=true"
