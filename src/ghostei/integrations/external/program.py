"""An agent program as a process: started through the shell, in a process group of its own,
and ended with that whole group (SIGTERM, then SIGKILL after a grace period)."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

_PLACEHOLDER = re.compile(r"\{(serial|instruction)\}")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_INTERPRETERS = {"sh", "bash", "dash", "env", "exec", "node", "npx", "uv", "uvx", "run", "-m"}


def expand_command(cmd: str, serial: str, instruction: str) -> str:
    """``cmd`` with ``{serial}`` and ``{instruction}`` replaced by their shell-quoted values
    (in one pass: an instruction that contains ``{serial}`` stays as it is)."""
    values = {"serial": shlex.quote(serial), "instruction": shlex.quote(instruction)}
    return _PLACEHOLDER.sub(lambda m: values[m[1]], cmd)


def name_from_command(cmd: str) -> str:
    """An agent name for a command: its program's file name without extension (``python
    agent.py`` gives ``agent``, ``./run.sh --fast`` gives ``run``), else ``external``."""
    try:
        words = shlex.split(cmd)
    except ValueError:
        words = cmd.split()
    # Past environment assignments, options and interpreters, to the file that is the program.
    for word in words:
        if _ASSIGNMENT.match(word) or word.startswith("-") or "{" in word:
            continue
        base = os.path.basename(word)
        if base in _INTERPRETERS or re.fullmatch(r"python[0-9.]*", base):
            continue
        name = re.sub(r"[^A-Za-z0-9_-]+", "-", base.split(".")[0]).strip("-")
        if name:
            return name
    return "external"


class Program:
    """A started agent program: its shell's process group, its output in two files."""

    def __init__(self, command: str, env: Mapping[str, str], stdout: Path, stderr: Path) -> None:
        self.command = command
        self._out: IO[bytes] = stdout.open("wb")
        self._err: IO[bytes] = stderr.open("wb")
        try:
            self.process = subprocess.Popen(
                command,
                shell=True,
                start_new_session=True,  # its own process group: ended whole
                stdin=subprocess.DEVNULL,
                stdout=self._out,
                stderr=self._err,
                env=dict(env),
            )
        except BaseException:
            self._close_files()
            raise

    def wait(self) -> int:
        """Wait for the program (its shell) to exit; its exit status."""
        return self.process.wait()

    @property
    def exit_code(self) -> int | None:
        """Its exit status once it exited, else None."""
        return self.process.poll()

    def end(self, grace: float = 2.0) -> None:
        """End the program's whole process group: SIGTERM, then SIGKILL to whatever of it is
        still there after ``grace`` seconds (children it left behind included)."""
        group = self.process.pid  # start_new_session: the group's id is the shell's pid
        _signal_group(group, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            self.process.poll()
            if self.process.returncode is not None and not _group_alive(group):
                break
            time.sleep(0.02)
        _signal_group(group, signal.SIGKILL)
        self.process.wait()
        self._close_files()

    def _close_files(self) -> None:
        self._out.close()
        self._err.close()


def _signal_group(group: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LivePrograms:
    """The programs of a run still running, so that the run, however it stops (^C), ends
    them: each is in a session of its own, out of reach of the terminal's signals."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._programs: set[Program] = set()

    def add(self, program: Program) -> None:
        with self._lock:
            self._programs.add(program)

    def discard(self, program: Program) -> None:
        with self._lock:
            self._programs.discard(program)

    def end_all(self) -> None:
        """End every program still running (each with its process group)."""
        with self._lock:
            programs, self._programs = list(self._programs), set()
        for program in programs:
            program.end()
