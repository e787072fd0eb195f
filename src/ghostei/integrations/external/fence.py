"""A fence around one command and everything it starts (Linux): when the command exits, when
the fence is told to end (SIGTERM, SIGINT, SIGHUP), or when the process that started the
fence dies (even by SIGKILL), every process the command left behind is ended too.

A process group is not enough: ``setsid cmd &`` leaves it, and so does any daemon (``adb
start-server`` forks one). The fence is a *child subreaper* (``PR_SET_CHILD_SUBREAPER``):
whatever the command starts and then orphans is re-parented to the fence, never to init, so
the fence's descendants in ``/proc`` are all of it, however they detached. It asks the kernel
for SIGTERM when its parent dies (``PR_SET_PDEATHSIG``), so a run killed with SIGKILL, which
can clean nothing up itself, still leaves nothing running. (The kernel's "parent" there is
the thread that started the fence: start one from a thread that lives as long as it must.)

Run as a script (``python -S -E fence.py PARENT GRACE -- COMMAND...``): the standard library
only, no site packages, so it starts in a few tens of milliseconds. It exits with the
command's exit status (128 + N when a signal N ended it, as a shell reports), once everything
the command started is gone: first SIGTERM, then SIGKILL after ``GRACE`` seconds.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class _End(Exception):
    """The fence was told to end (a signal, or its parent's death)."""


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def descendants(root: int) -> list[int]:
    """The live processes under ``root`` (zombies left out: they are reaped, not signalled)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue  # gone meanwhile
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after
        # its last ")".
        fields = stat[stat.rindex(b")") + 2 :].split()
        if fields[0] in (b"Z", b"X"):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _reap() -> None:
    """Collect every child that has exited (orphans re-parented to the fence included)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def end_everything(grace: float) -> None:
    """End every descendant: SIGTERM, then SIGKILL after ``grace`` seconds, again and again
    until none is left (a process forking as it is killed leaves children to the next round)."""
    me = os.getpid()
    for pid in descendants(me):
        _signal(pid, signal.SIGTERM)
    try:
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            _reap()
            if not descendants(me):
                return
            time.sleep(0.02)
        for _ in range(1000):
            left = descendants(me)
            if not left:
                return
            for pid in left:
                _signal(pid, signal.SIGKILL)
            _reap()
            time.sleep(0.005)
    finally:
        # What died after the last reap is the fence's zombie (orphans are re-parented to
        # it): left at its exit, it would go to init, and an init that reaps nothing (a
        # container's first process often does not) keeps it, and the process group alive,
        # for good.
        _reap()


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _exit_status(status: int | None) -> int:
    if status is None:
        return 128 + signal.SIGTERM  # ended before the command did
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def run(parent: int, grace: float, command: list[str]) -> int:
    """Start ``command`` inside the fence and end all it started once it exits or the fence is
    told to end; the command's exit status."""
    told = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal told
        if not told:  # once: ending what the command started is not cut short
            told = True
            raise _End

    for sig in ENDING_SIGNALS:
        signal.signal(sig, on_signal)
    status: int | None = None
    # The signal may come at any moment (the run may die while the fence starts): wherever
    # it lands, the fence goes on to end what it started.
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the fence asked to be told
            return 128 + signal.SIGTERM
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        child = os.fork()
        if child == 0:
            try:
                for sig in ENDING_SIGNALS:
                    signal.signal(sig, signal.SIG_DFL)
                os.execvp(command[0], command)
            finally:
                os._exit(127)  # exec failed, or the fence was told to end first
        # The fence needs none of what it was handed; the command has its own copies. Kept
        # open here, a pipe's write end would keep its reader waiting after the command ends.
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        while status is None:
            try:
                pid, got = os.waitpid(-1, 0)  # reaps orphans as they end, too
            except ChildProcessError:
                break
            if pid == child:
                status = got
        told = True  # the command is over: a signal from here on changes nothing
    except _End:
        pass
    end_everything(grace)
    return _exit_status(status)


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: fence.py PARENT GRACE -- COMMAND...\n")
        return 2
    return run(int(argv[0]), float(argv[1]), argv[3:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
