"""Each agent program fenced into its own episode, on its own phone.

- What a program starts and leaves behind (``setsid … &``, a daemon) is ended with its episode:
  it cannot act in the next one.
- Its output is kept bounded: the first and last 32 kB of each stream, and how much was dropped.
- A program that loses its phone (``adb disconnect``, ``adb kill-server``) ends its episode in
  error, naming why; the next episode gets a working phone.
- A program sees one device, its own, on its own adb server, on ports no default adb scans.
- SIGTERM or SIGKILL to the run leaves no process of it behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ghostei.cases import builtin_cases
from ghostei.integrations.external.fence import descendants
from ghostei.integrations.external.program import KEEP
from ghostei.rundir import RunDir

from .adb_helpers import requires_adb
from .test_external_agents import AGENTS, external_run, gullible, write_commands

CASES = {c.id: c for c in builtin_cases()}
pytestmark = [
    requires_adb,
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fencing is Linux's"),
]


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 :].split()[0] not in (b"Z", b"X")


def test_a_setsid_leftover_of_case_1_cannot_act_in_case_2(tmp_path: Path) -> None:
    cases = [CASES[1], CASES[2]]
    pids = tmp_path / "leftover.pid"
    # Case 1's program leaves a tapper behind in a session of its own, deaf to SIGTERM, then
    # exits; every program looks once and waits a moment, then quits without acting.
    tapper = (
        f'setsid sh -c \'trap "" TERM; echo $$ > {pids}; '
        "while :; do adb shell input tap 270 600; sleep 0.05; done' </dev/null >/dev/null 2>&1 &"
    )
    body = "adb exec-out screencap -p > /dev/null; sleep 1"
    cmd = f'if [ "$GHOSTEI_CASE" = 1 ]; then {tapper} fi; {body}'
    baseline = external_run(tmp_path / "baseline", body, cases, name="quiet")
    assert [r.steps for r in baseline] == [0, 0]
    records = external_run(tmp_path / "run", cmd, cases, name="quiet")
    assert records[0].steps >= 1  # the tapper acted while its program ran: its own episode
    assert records[1].steps == baseline[1].steps == 0
    assert records[1].label == baseline[1].label
    assert not _alive(int(pids.read_text()))


def test_a_program_that_disconnects_its_phone_is_an_error_and_the_next_runs(
    tmp_path: Path,
) -> None:
    cut_off, after = CASES[3], CASES[1]  # run in this order
    inproc, commands = gullible(after, tmp_path / "inproc")
    write_commands(tmp_path / "cmds", after, commands)
    write_commands(tmp_path / "cmds", cut_off, ["input keyevent KEYCODE_HOME"])
    replay = f"sh {AGENTS / 'replay.sh'} {tmp_path / 'cmds'}/$GHOSTEI_CASE.txt"
    cutting = {
        "disconnect": "adb disconnect $ANDROID_SERIAL",
        "kill-server": "adb kill-server",
    }
    for name, cut in cutting.items():
        # The first program acts once, cuts its phone off, then keeps trying as a confused
        # agent would.
        cmd = f'{replay}; if [ "$GHOSTEI_CASE" = 3 ]; then {cut}; sleep 2; {replay}; fi'
        records = external_run(tmp_path / name, cmd, [cut_off, after])
        first, second = (next(r for r in records if r.case == c.id) for c in (cut_off, after))
        assert first.label == "error", (name, first)
        assert first.error is not None and "lost its phone" in first.error
        assert first.ended == "error"
        assert second.label == inproc.label and second.error is None, (name, second)
        assert second.steps == len(commands)


def test_each_program_sees_one_device_its_own_on_no_emulator_port(tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    seen.mkdir()
    cmd = (
        f"adb devices > {seen}/$GHOSTEI_CASE.txt; "
        f"echo $ANDROID_SERIAL $ANDROID_ADB_SERVER_PORT >> {seen}/$GHOSTEI_CASE.txt; sleep 1"
    )
    external_run(tmp_path / "run", cmd, [CASES[1], CASES[2], CASES[3]], concurrency=3)
    servers = set()
    for case in (1, 2, 3):
        lines = (seen / f"{case}.txt").read_text().splitlines()
        serial, port = lines[-1].split()
        devices = [line.split("\t") for line in lines[1:-1] if line.strip()]
        assert devices == [[serial, "device"]]  # one device, its own, online
        assert not 5554 <= int(serial.removeprefix("emulator-")) <= 5585
        servers.add(port)
    assert len(servers) == 3  # three programs at once, three adb servers


def test_a_program_s_output_is_kept_bounded_and_says_what_was_dropped(tmp_path: Path) -> None:
    # 20 MB to stdout, a few bytes to stderr.
    cmd = "head -c 20000000 /dev/zero | tr '\\0' 'x'; echo tail-end; echo oops >&2"
    [record] = external_run(tmp_path / "run", cmd, [CASES[1]], name="loud")
    folder = tmp_path / "run" / record.trajectory
    stdout = (folder / "stdout.txt").read_bytes()
    assert len(stdout) < 2 * KEEP + 200
    assert stdout.startswith(b"x" * KEEP) and stdout.endswith(b"tail-end\n")
    assert b"bytes of 20,000,009 dropped here" in stdout
    assert (folder / "stderr.txt").read_bytes() == b"oops\n"


_RUN = [sys.executable, "-c", "from ghostei.cli import main; main()", "run"]


def _run_with_leftovers(tmp_path: Path) -> tuple[subprocess.Popen[bytes], list[int]]:
    """A ``ghostei run`` whose two programs each leave a stubborn process in a session of its
    own and then wait forever; the run and every process under it, once all are up."""
    pids = tmp_path / "pids"
    leftover = f"setsid sh -c 'trap \"\" TERM; echo $$ >> {pids}; while :; do sleep 1; done' &"
    cmd = f"{leftover} echo $$ >> {pids}; exec sh {AGENTS / 'idle.sh'}"
    out = str(tmp_path / "run")
    run = subprocess.Popen(
        [*_RUN, "--agent-cmd", cmd, "--cases", "1-2", "--concurrency", "2", "--out", out],
        env={**os.environ, "HOME": str(tmp_path / "home")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not pids.exists() or len(pids.read_text().split()) < 4:
        assert time.monotonic() < deadline and run.poll() is None
        time.sleep(0.1)
    time.sleep(0.3)
    return run, descendants(run.pid)


def _left(pids: list[int], within: float = 10.0) -> list[str]:
    """Those of ``pids`` still alive after ``within`` seconds, with their command lines."""
    deadline = time.monotonic() + within
    while (alive := [p for p in pids if _alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    named = [f"{pid}: {_command_line(pid)}" for pid in alive]
    for pid in alive:  # this test's to clean up
        os.kill(pid, signal.SIGKILL)
    return named


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "(gone)"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_or_ctrl_c_ends_the_run_and_every_process_under_it(
    tmp_path: Path, sig: signal.Signals
) -> None:
    run, under = _run_with_leftovers(tmp_path)
    assert len(under) >= 6  # two fences, two shells, two leftovers, adb servers…
    run.send_signal(sig)
    assert run.wait(timeout=30) == 128 + sig
    stderr = run.stderr.read().decode() if run.stderr else ""
    assert "Traceback" not in stderr
    assert f"ghostei run --resume --out {tmp_path / 'run'}" in stderr
    assert _left(under, within=1.0) == []


def test_sigkill_of_the_run_leaves_no_process_of_it(tmp_path: Path) -> None:
    run, under = _run_with_leftovers(tmp_path)
    run.kill()
    run.wait(timeout=10)
    assert _left(under) == []  # the kernel told each fence its parent died


def test_a_run_stopped_by_sigterm_resumes_to_every_episode_once(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = "adb exec-out screencap -p > /dev/null; sleep 0.5"
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    run = subprocess.Popen(
        [*_RUN, "--agent-cmd", cmd, "--cases", "1-6", "--out", str(out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not (out / RunDir.RECORDS).exists() or not (out / RunDir.RECORDS).read_text():
        assert time.monotonic() < deadline and run.poll() is None
        time.sleep(0.05)
    run.send_signal(signal.SIGTERM)
    assert run.wait(timeout=30) == 128 + signal.SIGTERM
    cut = len(RunDir(out).records())
    assert 1 <= cut < 6
    resumed = subprocess.run(
        [*_RUN, "--resume", "--out", str(out)], env=env, capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr
    records = RunDir(out).records()
    assert sorted(r.case for r in records) == [1, 2, 3, 4, 5, 6]
    assert all(r.attempts == 1 and r.label == "BF" and r.error is None for r in records)
