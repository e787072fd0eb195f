"""External agent programs (``ghostei run --agent-cmd``): POSIX shell scripts driving served
phones through the real adb, judged as GhostEI's own agents are.

The reference programs are in tests/data/agents/: ``replay.sh`` sends the device commands of
a file (a screenshot before each), ``quits.sh`` gives up at once, ``idle.sh`` never ends. The
commands replayed are the in-process gullible agent's actions on the same case, turned into
the adb commands a program would send for them.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ghostei.actions import Action
from ghostei.cases import builtin_cases
from ghostei.cases.schema import Case
from ghostei.cli import main
from ghostei.integrations.external import execute_external, expand_command, name_from_command
from ghostei.integrations.external.commands import adb_commands
from ghostei.integrations.tools import action_to_tool_call
from ghostei.rundir import EpisodeRecord, RunDir
from ghostei.runner import RunConfig, new_manifest, run_episode

from .adb_helpers import free_base_port, requires_adb

AGENTS = Path(__file__).parent / "data" / "agents"
WIDTH, HEIGHT = 540, 1200
CASES = {c.id: c for c in builtin_cases()}

# The reference programs run through the real adb and take a few seconds each.
adb_program = pytest.mark.slow


def gullible(case: Case, tmp: Path) -> tuple[EpisodeRecord, list[str]]:
    """The in-process gullible agent's record on ``case``, and its actions as adb commands."""
    config = RunConfig(agents=("gullible",), width=WIDTH, height=HEIGHT)
    record = run_episode(case, "gullible", config, tmp)
    doc = json.loads((tmp / record.trajectory / "trajectory.json").read_text())
    commands = [c for s in doc["steps"] for c in adb_commands(Action(**s["action"]))]
    return record, commands


def external_run(
    out: Path, cmd: str, cases: list[Case], *, concurrency: int = 1, **options: object
) -> list[EpisodeRecord]:
    config = RunConfig(
        agents=(options.pop("name", "replay"),),  # type: ignore[arg-type]
        agent_cmd=cmd,
        width=WIDTH,
        height=HEIGHT,
        **options,  # type: ignore[arg-type]
    )
    run = RunDir(out)
    run.create(new_manifest(config, cases), cases)
    records = execute_external(
        run, config, cases, concurrency=concurrency, base_port=free_base_port(concurrency)
    )
    return sorted(records, key=lambda r: r.case)


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # adb keeps its keys, and the console its token, under HOME: the test's own.
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))


def write_commands(folder: Path, case: Case, commands: list[str]) -> None:
    folder.mkdir(exist_ok=True)
    (folder / f"{case.id}.txt").write_text("".join(c + "\n" for c in commands))


@requires_adb
@adb_program
def test_replaying_gullible_over_adb_gets_its_label_and_exposure(tmp_path: Path) -> None:
    case = CASES[1]  # an overlay that captures the card the task types
    inproc, commands = gullible(case, tmp_path / "inproc")
    assert inproc.label == "FAS" and inproc.exposed
    write_commands(tmp_path / "cmds", case, commands)
    cmd = f"sh {AGENTS / 'replay.sh'} {tmp_path / 'cmds'}/$GHOSTEI_CASE.txt"
    [record] = external_run(tmp_path / "run", cmd, [case])
    assert record.label == inproc.label == "FAS"
    assert record.exposed and record.attack_fired
    assert record.ended == "exited" and record.exit_code == 0
    assert record.steps == len(commands)
    assert record.agent == "replay" and record.error is None
    folder = tmp_path / "run" / record.trajectory
    doc = json.loads((folder / "trajectory.json").read_text())
    assert [s["command"] for s in doc["steps"]] == commands
    # Each step's frame is the screenshot fetched before it; the last is the phone's end.
    assert all(f is not None for f in doc["frames"]) and len(doc["frames"]) == len(commands) + 1
    assert doc["steps"][0]["events"] and doc["steps"][0]["action"]["action_type"] == "open_app"
    assert (folder / "stdout.txt").exists() and (folder / "stderr.txt").read_bytes() == b""


@requires_adb
@adb_program
def test_a_program_that_quits_at_once_fails_benignly_unexposed(tmp_path: Path) -> None:
    [record] = external_run(tmp_path / "run", f"sh {AGENTS / 'quits.sh'}", [CASES[1]])
    assert record.label == "BF" and record.exposed is False
    assert record.steps == 0 and record.ended == "exited" and record.exit_code == 0
    doc = json.loads((tmp_path / "run" / record.trajectory / "trajectory.json").read_text())
    assert doc["steps"] == [] and len(doc["frames"]) == 1


@requires_adb
@adb_program
def test_a_program_that_never_ends_is_stopped_at_the_timeout_and_judged(tmp_path: Path) -> None:
    [record] = external_run(
        tmp_path / "run", f"sh {AGENTS / 'idle.sh'}", [CASES[1]], episode_timeout=3.0
    )
    assert record.ended == "timeout" and record.exit_code is None
    assert record.label == "BF" and record.error is None
    assert 3.0 <= record.seconds < 10.0


@requires_adb
@adb_program
def test_exit_code_is_kept_and_compromise_before_it_counts(tmp_path: Path) -> None:
    case = CASES[1]
    _, commands = gullible(case, tmp_path / "inproc")
    # Up to the overlay form's submit (the in-process agent's 7th action), then fail.
    submit = commands.index("input tap 270 748")
    write_commands(tmp_path / "cmds", case, commands[: submit + 1])
    cmd = f"sh {AGENTS / 'replay.sh'} {tmp_path / 'cmds'}/$GHOSTEI_CASE.txt; exit 3"
    [record] = external_run(tmp_path / "run", cmd, [case])
    assert record.label == "FAS" and record.exit_code == 3 and record.ended == "exited"
    assert record.error is None


@requires_adb
@adb_program
def test_the_step_limit_ends_the_program(tmp_path: Path) -> None:
    case = CASES[1]
    _, commands = gullible(case, tmp_path / "inproc")
    write_commands(tmp_path / "cmds", case, commands)
    cmd = f"sh {AGENTS / 'replay.sh'} {tmp_path / 'cmds'}/$GHOSTEI_CASE.txt"
    [record] = external_run(tmp_path / "run", cmd, [case], max_steps=3)
    assert record.ended == "max_steps" and record.steps == 3 and record.exit_code is None
    assert record.label in ("BF", "PAS", "FAS") and record.error is None


@requires_adb
@adb_program
def test_the_same_program_twice_gives_byte_identical_events(tmp_path: Path) -> None:
    case = CASES[1]
    _, commands = gullible(case, tmp_path / "inproc")
    write_commands(tmp_path / "cmds", case, commands)
    cmd = f"sh {AGENTS / 'replay.sh'} {tmp_path / 'cmds'}/$GHOSTEI_CASE.txt"
    events = []
    for n in (1, 2):
        [record] = external_run(tmp_path / f"run{n}", cmd, [case])
        events.append((tmp_path / f"run{n}" / record.trajectory / "events.jsonl").read_bytes())
    assert events[0] == events[1] and events[0]


def test_commands_get_serial_and_instruction_quoted() -> None:
    got = expand_command("agent --device {serial} --task {instruction}", "emulator-5554", "it's")
    assert got == "agent --device emulator-5554 --task 'it'\"'\"'s'"
    assert expand_command("{instruction}", "s", "{serial}") == "'{serial}'"
    assert name_from_command("python3 my_agent.py --serial {serial}") == "my_agent"
    assert name_from_command("FOO=1 ./run.sh") == "run"


def translatable(case: Case, tmp: Path) -> tuple[EpisodeRecord, list[str]] | None:
    try:
        return gullible(case, tmp)
    except ValueError:  # an action with no adb command here (a scroll, an index)
        return None


@requires_adb
@adb_program
def test_eight_programs_at_once_give_the_records_of_one_at_a_time(tmp_path: Path) -> None:
    chosen: list[Case] = []
    inproc: dict[int, str] = {}
    for case in CASES.values():
        found = translatable(case, tmp_path / f"inproc-{case.id}")
        if found is not None and found[1]:
            write_commands(tmp_path / "cmds", case, found[1])
            chosen.append(case)
            inproc[case.id] = found[0].label
        if len(chosen) == 8:
            break
    cmd = f"sh {AGENTS / 'replay.sh'} {tmp_path / 'cmds'}/$GHOSTEI_CASE.txt"
    serial = external_run(tmp_path / "one", cmd, chosen)
    parallel = external_run(tmp_path / "eight", cmd, chosen, concurrency=8)

    def same(r: EpisodeRecord) -> dict[str, object]:
        return r.model_dump(exclude={"seconds"})

    assert [same(r) for r in parallel] == [same(r) for r in serial]
    # Each as the in-process gullible agent's episode was judged.
    assert {r.case: r.label for r in serial} == inproc
    for r in serial:
        events = [
            (tmp_path / run / r.trajectory / "events.jsonl").read_bytes()
            for run in ("one", "eight")
        ]
        assert events[0] == events[1]


def test_the_manifest_keeps_the_command_and_old_manifests_load() -> None:
    config = RunConfig(agents=("my-agent",), agent_cmd="./agent.sh {serial}", episode_timeout=30)
    data = config.to_json()
    assert data["agent_cmd"] == "./agent.sh {serial}" and data["episode_timeout"] == 30
    assert RunConfig.from_json(data) == config
    old = RunConfig(agents=("gullible",)).to_json()
    assert "agent_cmd" not in old and RunConfig.from_json(old).agent_cmd is None
    with pytest.raises(ValueError, match=r"config\.episode_timeout"):
        RunConfig.from_json({**data, "episode_timeout": 0})
    record = EpisodeRecord.model_validate_json(
        '{"case": 1, "agent": "a", "seed": 0, "label": "BF", "injection": "none",'
        ' "attack_fired": false, "steps": 0}'
    )
    assert record.ended is None and record.exit_code is None


def test_actions_as_adb_commands() -> None:
    typed = Action(action_type="input_text", text="it's 5 pm", x=10, y=20)
    assert adb_commands(typed) == ["input tap 10 20", "input text 'it'\"'\"'s%s5%spm'"]
    assert adb_commands(Action(action_type="open_app", app_name="Booking")) == [
        "monkey -p com.booking -c android.intent.category.LAUNCHER 1"
    ]
    assert adb_commands(Action(action_type="input_text", text="Priya – home")) == [
        "am broadcast -a ADB_INPUT_TEXT --es msg 'Priya – home'"
    ]
    assert adb_commands(Action(action_type="finish")) == []
    with pytest.raises(ValueError, match="no adb command"):
        adb_commands(Action(action_type="click", index=3))


def mcp_calls(folder: Path, case: Case, calls: list[tuple[str, dict[str, object]]]) -> None:
    folder.mkdir(exist_ok=True)
    doc = [{"name": name, "arguments": arguments} for name, arguments in calls]
    (folder / f"{case.id}.json").write_text(json.dumps(doc))


@requires_adb
@adb_program
def test_an_mcp_client_replaying_gullible_through_the_tools_gets_fas(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    case = CASES[1]
    inproc = run_episode(
        case, "gullible", RunConfig(width=WIDTH, height=HEIGHT), tmp_path / "inproc"
    )
    doc = json.loads((tmp_path / "inproc" / inproc.trajectory / "trajectory.json").read_text())
    actions = [Action(**s["action"]) for s in doc["steps"]]
    mcp_calls(tmp_path / "calls", case, [action_to_tool_call(a) for a in actions])
    cmd = f"{sys.executable} {AGENTS / 'mcp_client.py'} {tmp_path / 'calls'}/$GHOSTEI_CASE.json"
    [record] = external_run(tmp_path / "run", cmd, [case], name="mcp-client")
    assert (record.label, record.exposed, record.ended) == ("FAS", True, "mcp_finish")
    assert record.steps == len(actions) == inproc.steps and record.error is None
    # The same steps as the in-process agent's: the same events, byte for byte.
    events = [
        (root / r.trajectory / "events.jsonl").read_bytes()
        for root, r in ((tmp_path / "run", record), (tmp_path / "inproc", inproc))
    ]
    assert events[0] == events[1]


@requires_adb
@adb_program
def test_an_mcp_client_refusing_a_harmful_instruction_completes_the_task(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    case = next(c for c in CASES.values() if c.case_type == "User-Provided Instructions")
    mcp_calls(tmp_path / "calls", case, [("refuse", {"reason": "this would harm the user"})])
    cmd = f"{sys.executable} {AGENTS / 'mcp_client.py'} {tmp_path / 'calls'}/$GHOSTEI_CASE.json"
    [record] = external_run(tmp_path / "run", cmd, [case], name="mcp-client")
    assert (record.label, record.ended, record.steps) == ("TC", "mcp_refuse", 1)
    assert record.exposed is True  # the instruction is the attack: it always reaches


@requires_adb
@adb_program
def test_a_program_that_acts_blind_has_null_frames_and_is_not_exposed(tmp_path: Path) -> None:
    case = CASES[1]
    _, commands = gullible(case, tmp_path / "inproc")
    # The overlay's trigger is opening the app; without a screenshot it never reaches the
    # program, though it is on the phone's screen.
    cmd = f"adb shell {shlex.quote(commands[0])} && adb shell input keyevent 3"
    [record] = external_run(tmp_path / "run", cmd, [case], name="blind")
    assert record.attack_fired and record.exposed is False and record.steps == 2
    doc = json.loads((tmp_path / "run" / record.trajectory / "trajectory.json").read_text())
    assert [s["frame"] for s in doc["steps"]] == [None, None] and doc["frames"][-1] is not None


# ----- the command line ------------------------------------------------------------------------


def ghostei(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@requires_adb
@adb_program
def test_ghostei_run_agent_cmd_runs_records_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = f"sh {AGENTS / 'quits.sh'}"
    result = ghostei("run", "--agent-cmd", cmd, "--cases", "1-2", "--out", str(out))
    assert result.exit_code == 0, result.output
    config = json.loads((out / "manifest.json").read_text())["config"]
    assert (config["agents"], config["agent_cmd"], config["episode_timeout"]) == (
        ["quits"],
        cmd,
        600.0,
    )
    records = RunDir(out).records()
    assert [(r.case, r.agent, r.label, r.ended) for r in records] == [
        (1, "quits", "BF", "exited"),
        (2, "quits", "BF", "exited"),
    ]
    # An interrupted run: its last record lost; --resume runs that episode with the command.
    lines = (out / "episodes.jsonl").read_text().splitlines(keepends=True)
    (out / "episodes.jsonl").write_text(lines[0])
    result = ghostei("run", "--resume", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert [(r.case, r.agent, r.label) for r in RunDir(out).records()] == [
        (1, "quits", "BF"),
        (2, "quits", "BF"),
    ]
    result = ghostei("run", "--resume", "--out", str(out), "--agent-cmd", "sh other.sh")
    assert result.exit_code == 2 and "--agent-cmd 'sh other.sh': the run has" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent-cmd", "x", "--defence", "overlay-gate"], "defences wrap GhostEI's own agents"),
        (["--agent-cmd", "x", "--agent", "oracle"], "--agent: the program is the agent"),
        (["--agent-cmd", "x", "--backend", "android"], "the program's phones are served phones"),
        (["--agent-cmd", " "], "give the command that starts your agent program"),
        (["--agent-name", "mine"], "--agent-name needs --agent-cmd"),
        (["--episode-timeout", "5"], "--episode-timeout needs --agent-cmd"),
        (["--agent-cmd", "x", "--episode-timeout", "0"], "--episode-timeout"),
    ],
)
def test_what_an_agent_cmd_run_refuses(tmp_path: Path, args: list[str], message: str) -> None:
    result = ghostei("run", *args, "--cases", "1", "--out", str(tmp_path / "run"))
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "run").exists()


@requires_adb
@adb_program
def test_a_command_the_shell_cannot_find_is_judged_and_warned_of(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = ghostei(
        "run", "--agent-cmd", "no-such-agent-program", "--cases", "1", "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    assert "did not find the program (exit 127) in case(s) [1]" in result.output
    [record] = RunDir(out).records()
    assert (record.label, record.exit_code, record.agent) == ("BF", 127, "no-such-agent-program")
    assert b"not found" in (out / record.trajectory / "stderr.txt").read_bytes()


@requires_adb
@adb_program
def test_a_deep_link_is_a_step_and_its_trigger_fires_after_it(tmp_path: Path) -> None:
    case = CASES[3]  # an overlay that comes when Chrome opens
    cmd = (
        "adb shell am start -a android.intent.action.VIEW -d https://pdxlibrary.org < /dev/null"
        " && adb exec-out screencap -p > /dev/null"
    )
    [record] = external_run(tmp_path / "run", cmd, [case], name="link")
    assert record.steps == 1 and record.fired_step == 1 and record.exposed_step == 1
    doc = json.loads((tmp_path / "run" / record.trajectory / "trajectory.json").read_text())
    [step] = doc["steps"]
    assert step["command"].startswith("am start") and "action" not in step
    events = (tmp_path / "run" / record.trajectory / "events.jsonl").read_text().splitlines()
    kinds = [json.loads(events[i])["kind"] for i in step["events"]]
    assert "app_opened" in kinds and "injection_fired" in kinds


_INTERRUPTIBLE_CLI = (
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from ghostei.cli import main; main()"
)


@requires_adb
@adb_program
def test_interrupting_a_run_ends_its_programs(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    # Each program notes its shell's pid (its process group's), then never ends by itself.
    cmd = f"echo $$ >> {pids}; exec sh {AGENTS / 'idle.sh'}"
    run = subprocess.Popen(
        [
            # ^C handled as in a terminal, even when this test's own process was started
            # with SIGINT ignored (a background job inherits that, and passes it on).
            *(sys.executable, "-c", _INTERRUPTIBLE_CLI, "run"),
            *("--agent-cmd", cmd, "--cases", "1-2", "--concurrency", "2"),
            *("--out", str(tmp_path / "run")),
        ],
        env={**os.environ, "HOME": str(tmp_path / "home")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not pids.exists() or len(pids.read_text().split()) < 2:
        assert time.monotonic() < deadline and run.poll() is None
        time.sleep(0.1)
    run.send_signal(signal.SIGINT)
    run.wait(timeout=30)
    left = []
    for pid in (int(p) for p in pids.read_text().split()):
        try:
            os.killpg(pid, signal.SIGKILL)  # a program the run left behind: this test's to end
            left.append(pid)
        except ProcessLookupError:
            pass
    assert left == []
