"""One writer per run folder: a run, a resume, a judge or a labelled set's build takes the
folder's writer lock for as long as it writes; a second writer exits 2 naming the holder; a
lock whose process ended is free."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ghostei.rundir import RunDir, RunDirBusy

from .helpers import assert_user_error, cli

CLI = [sys.executable, "-c", "from ghostei.cli import main; main()"]


def test_a_second_writer_exits_2_naming_the_holder_and_changes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert (
        cli(
            "run", "--cases", "1-2", "--agent", "oracle", "--no-frames", "--out", str(out)
        ).exit_code
        == 0
    )
    lock = RunDir(out).hold()  # this process holds it now, as a run in flight would
    try:
        before = {
            p: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != RunDir.LOCK
        }
        busy = cli("run", "--resume", "--out", str(out))
        assert_user_error(busy, "being written by", f"process {os.getpid()}")
        new = cli("run", "--cases", "3", "--agent", "oracle", "--no-frames", "--out", str(out))
        assert_user_error(new, "being written by")
        after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != RunDir.LOCK}
        assert after == before  # nothing repaired, nothing appended, nothing deleted
        with pytest.raises(RunDirBusy):
            RunDir(out).hold()
    finally:
        lock.release()
    resumed = cli("run", "--resume", "--out", str(out))
    assert resumed.exit_code == 0, resumed.output  # released: the next writer goes on


def test_a_lock_left_by_a_dead_process_is_free(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    # A writer killed with SIGKILL leaves its file naming it; the kernel dropped its lock.
    (out / RunDir.LOCK).write_text("process 999999 (ghostei run)\n")
    result = cli("run", "--cases", "1", "--agent", "oracle", "--no-frames", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert (out / RunDir.LOCK).read_text() == ""  # released: it names no writer any more


@pytest.mark.slow
def test_a_resume_beside_a_running_run_is_refused_and_the_run_ends_whole(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = subprocess.Popen(
        [
            *CLI,
            "run",
            "--cases",
            "1-40",
            "--agent",
            "oracle",
            "--agent",
            "gullible",
            "--out",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (out / RunDir.MANIFEST).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        second = subprocess.run(
            [*CLI, "run", "--resume", "--out", str(out)], capture_output=True, text=True
        )
        if first.poll() is None:  # still writing: the second was refused
            assert second.returncode == 2, second.stderr
            assert f"process {first.pid}" in second.stderr
    finally:
        assert first.wait(timeout=300) == 0, first.stderr.read() if first.stderr else ""
    records = RunDir(out).records()
    keys = [(r.agent, r.case) for r in records]
    assert len(keys) == len(set(keys)) == 80
    assert all(r.attempts == 1 for r in records)
    lines = (out / RunDir.RECORDS).read_text().splitlines()
    assert len(lines) == 80  # no second writer's lines
