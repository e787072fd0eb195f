"""An agent program as a process: started through the shell inside a fence (:mod:`.fence`)
that ends everything it started when it exits or is ended, even what left its process group
(``setsid … &``), and even when the run itself is killed; its output kept bounded."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

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


FENCE = Path(__file__).with_name("fence.py")
KEEP = 32 * 1024  # of a program's stdout and of its stderr: this much of each end is kept


def fence_available() -> bool:
    """Whether programs can be fenced (Linux: a subreaper and ``/proc``)."""
    return sys.platform.startswith("linux") and os.path.isdir("/proc/self")


def fenced(argv: list[str], grace: float = 1.0) -> list[str]:
    """``argv`` run inside a fence whose parent is this process (see :mod:`.fence`), where
    one is available; else ``argv`` as it is."""
    if not fence_available():
        return argv
    return [sys.executable, "-S", "-E", str(FENCE), str(os.getpid()), str(grace), "--", *argv]


class BoundedOutput:
    """What a program writes to one of its streams, read as it comes: the first and the last
    ``keep`` bytes are kept, and how much was dropped between them is counted, so a program
    that writes gigabytes costs a run no more memory (and no disk) than one that writes 64 kB.
    """

    def __init__(self, fd: int, keep: int = KEEP) -> None:
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self._fd = fd
        self._thread = threading.Thread(
            target=self._read, name="ghostei-program-output", daemon=True
        )
        self._thread.start()

    def _read(self) -> None:
        try:
            while chunk := os.read(self._fd, 65536):
                self.total += len(chunk)
                room = self.keep - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self.tail += chunk
                    del self.tail[: max(0, len(self.tail) - self.keep)]
        except OSError:
            pass
        finally:
            os.close(self._fd)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    @property
    def dropped(self) -> int:
        """Bytes written but kept by neither end."""
        return self.total - len(self.head) - len(self.tail)

    def contents(self) -> bytes:
        """The kept bytes, with a line saying how much was dropped where it was."""
        if not self.dropped:
            return bytes(self.head + self.tail)
        note = f"\n[ghostei: {self.dropped:,} bytes of {self.total:,} dropped here]\n"
        return bytes(self.head) + note.encode() + bytes(self.tail)


class Program:
    """A started agent program: run by the shell inside a fence (see :mod:`.fence`) where
    Linux offers one, else in a process group of its own; its output kept bounded."""

    def __init__(self, command: str, env: Mapping[str, str], grace: float = 1.0) -> None:
        self.command = command
        self.fenced = fence_available()
        argv = fenced(["/bin/sh", "-c", command], grace)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            self.process = subprocess.Popen(
                argv,
                start_new_session=True,  # its own session: out of reach of the terminal's ^C
                stdin=subprocess.DEVNULL,
                stdout=out_w,
                stderr=err_w,
                env=dict(env),
            )
        except BaseException:
            for fd in (out_r, out_w, err_r, err_w):
                os.close(fd)
            raise
        os.close(out_w)
        os.close(err_w)
        self.stdout = BoundedOutput(out_r)
        self.stderr = BoundedOutput(err_r)

    def wait(self) -> int:
        """Wait for the program to exit (with all it started, when fenced); its exit status."""
        return self.process.wait()

    @property
    def exit_code(self) -> int | None:
        """Its exit status once it exited, else None."""
        return self.process.poll()

    def end(self, grace: float = 2.0) -> None:
        """End the program and all it started: the fence is told to (it gives them SIGTERM,
        then SIGKILL); unfenced, or a fence that does not end in time, the process group gets
        SIGTERM, then SIGKILL after ``grace`` seconds."""
        group = self.process.pid  # start_new_session: the group's id is the first process's
        if self.fenced:
            if self.process.poll() is None:
                self.process.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=grace + 2.0)
            if self.process.returncode is not None:
                # The fence exits once all it fenced is gone: nothing is left to wait for
                # (the group may still hold zombies an init that reaps nothing keeps).
                _signal_group(group, signal.SIGKILL)
                self._join_outputs()
                return
        _signal_group(group, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            self.process.poll()
            if self.process.returncode is not None and not _group_alive(group):
                break
            time.sleep(0.02)
        _signal_group(group, signal.SIGKILL)
        self.process.wait()
        self._join_outputs()

    def _join_outputs(self) -> None:
        # The streams end with the last process that held them; one that escaped an unfenced
        # program's group may hold them open: its output stops being read here.
        self.stdout.join(timeout=2.0)
        self.stderr.join(timeout=2.0)

    def outputs(self) -> dict[str, bytes]:
        """``stdout.txt`` and ``stderr.txt`` as kept (see :class:`BoundedOutput`)."""
        return {"stdout.txt": self.stdout.contents(), "stderr.txt": self.stderr.contents()}


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
    """The programs of a run still running, so that the run, however it stops (^C, SIGTERM),
    ends them: each is in a session of its own, out of reach of the terminal's signals. Once
    the run has ended them, a program started late (by an episode thread still finishing) is
    ended as it is added."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._programs: set[Program] = set()
        self._closed = False

    def add(self, program: Program) -> None:
        with self._lock:
            if not self._closed:
                self._programs.add(program)
                return
        program.end()

    def discard(self, program: Program) -> None:
        with self._lock:
            self._programs.discard(program)

    def end_all(self) -> None:
        """End every program still running (each with all it started), and any added later."""
        with self._lock:
            programs, self._programs = list(self._programs), set()
            self._closed = True
        for program in programs:
            program.end()
