"""What every program of the served phone's shell gets: its argv, its I/O and the session.

Programs register themselves with ``@command("name", ...)``; the shell finds them by name
(or by a path in ``/system/bin``). A program writes through ``io`` and returns its exit status.
"""

from __future__ import annotations

import contextlib
import math
import posixpath
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from ..actions import Action
from ..observation import Observation

if TYPE_CHECKING:
    from ..sim.phone import SimPhone
    from ..world import World
    from .network import PhoneNetwork
    from .vfs import PhoneFS

T = TypeVar("T")
Writer = Callable[[bytes], None]


@dataclass
class IO:
    """A program's standard input (all of it, as a pipe would deliver it) and its outputs."""

    stdin: bytes
    out: Writer
    err: Writer

    def write(self, text: str) -> None:
        """Write text to stdout as UTF-8."""
        self.out(text.encode("utf-8"))

    def print(self, text: str = "") -> None:
        """Write a line to stdout."""
        self.out((text + "\n").encode("utf-8"))

    def error(self, text: str) -> None:
        """Write a line to stderr."""
        self.err((text + "\n").encode("utf-8"))


Program = Callable[["Session", list[str], IO], int]
PROGRAMS: dict[str, Program] = {}


def command(*names: str) -> Callable[[Program], Program]:
    """Register a program of the shell under one or more names."""

    def register(fn: Program) -> Program:
        for name in names:
            PROGRAMS[name] = fn
        return fn

    return register


class UsageError(Exception):
    """Bad arguments: the program prints the message on stderr and exits with ``status``."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


class EpisodeObserver(Protocol):
    """Who counts an external program's steps and observations (the episode driving the phone).

    An action the shell's programs carry out goes through :meth:`act`, which makes it a step
    of the episode (or refuses it, once the episode is over); a screenshot or dump a program
    fetches is reported to :meth:`observed`. ``command`` is the command line being run; each
    is announced (:meth:`command_started`, :meth:`command_finished`), so that one that
    changes the phone without an action (a deep link opened) is a step too. Once it has
    :attr:`ended`, the lines that started in it stop at their next command.
    """

    @property
    def ended(self) -> bool:
        """Whether the episode is over."""
        ...

    def act(self, action: Action, command: str) -> Observation:
        """Carry out ``action`` as a step of the episode; what the phone shows after it."""
        ...

    def observed(self, obs: Observation) -> None:
        """A program fetched ``obs`` (a screenshot or a dump)."""
        ...

    def command_started(self, command: str) -> None:
        """A command line starts (under the phone's lock, as every use of the phone)."""
        ...

    def command_finished(self, command: str) -> None:
        """The command line ended: what it changed without an action is a step too."""
        ...


class LineStopped(BaseException):
    """The command line must stop at once: it ran past its time or wrote past its output
    budget, or its episode is over. Raised between commands and by writes, and caught where
    the line started; a BaseException, so that no program's ``except Exception`` takes it."""


@dataclass
class Line:
    """One command line a client runs, with what bounds it (``AndroidShell.run`` sets them).

    ``observer`` is the episode that was in progress when it started (None: none was): its
    actions are that episode's steps, and it stops once that episode is over or another took
    the phone. ``deadline`` is a ``time.monotonic()`` value; ``output_left`` counts down the
    bytes its programs may still write (to the client, a pipe or a file); ``depth`` is how
    many shells (``sh``, ``eval``, scripts, ``$(...)``) are running inside one another.
    """

    command: str = ""
    observer: EpisodeObserver | None = None
    deadline: float = math.inf
    output_left: int = sys.maxsize
    depth: int = 0


class DeviceState:
    """What the shell keeps between command lines (logcat's clear mark, stored settings, ...).

    Each kind of state is a small class created on first use; all of it is dropped when the
    phone's world is replaced, as a snapshot load reverts a real device. What the phone *is*
    stays: whether its logcat prints every event (``full_events``) or only the helper app's,
    and its ``network`` (how its browser reaches servers; None: it reaches none).
    """

    def __init__(
        self, phone: SimPhone, *, full_events: bool = True, network: PhoneNetwork | None = None
    ) -> None:
        self._phone = phone
        self._world: World = phone.world
        self._slots: dict[type[Any], Any] = {}
        self.full_events = full_events
        self.network = network
        # The episode an external program plays on this phone (None: no one counts steps).
        self.observer: EpisodeObserver | None = None
        # Per episode, the command lines of it running now and the first one's command:
        # several clients' lines run at once, one command of each at a time.
        self._running: dict[int, tuple[int, str]] = {}

    @contextlib.contextmanager
    def running(self, line: Line, lock: contextlib.AbstractContextManager[Any]) -> Iterator[None]:
        """Run ``line``: its episode, if any, is told when it starts and ends. Lines that run
        at once are one command to the episode (told when the first starts and the last ends),
        so that what they change without an action is one step, not lost between them.
        ``lock`` is the phone's (the episode's bookkeeping happens under it)."""
        observer = line.observer
        if observer is None:
            yield
            return
        key = id(observer)
        with lock:
            count, first = self._running.get(key, (0, line.command))
            self._running[key] = (count + 1, first)
            if count == 0:
                observer.command_started(first)
        try:
            yield
        finally:
            with lock:
                count, first = self._running.pop(key)
                if count > 1:
                    self._running[key] = (count - 1, first)
                else:
                    observer.command_finished(first)

    def slot(self, cls: type[T]) -> T:
        """The state object of type ``cls`` (created with ``cls()`` when first asked for)."""
        if self._world is not self._phone.world:
            self._world = self._phone.world
            self._slots.clear()
        found = self._slots.get(cls)
        if found is None:
            found = self._slots[cls] = cls()
        return cast(T, found)


@dataclass
class Session:
    """One shell process: the phone it drives, its variables, cwd and last exit status."""

    phone: SimPhone
    fs: PhoneFS
    serial: str
    device: DeviceState
    env: dict[str, str]
    run_script: Callable[[Session, str, IO, list[str]], int]
    invoke: Callable[[Session, list[str], IO], int]
    cwd: str = "/"
    status: int = 0
    positional: list[str] = field(default_factory=list)
    name: str = "/system/bin/sh"
    subst_status: int | None = None  # status of the last command substitution
    line: Line = field(default_factory=Line)  # the command line it runs (shared by subshells)

    def path(self, arg: str) -> str:
        """An argument as an absolute path (relative to the working directory)."""
        return posixpath.normpath(posixpath.join(self.cwd, arg)) if arg else self.cwd

    def act(self, action: Action) -> Observation:
        """Drive the phone through its device contract, so the effect lands in its event log
        (as a step of the episode in progress, if one is)."""
        observer = self.line.observer
        if observer is None:
            return self.phone.act(action)
        return observer.act(action, self.line.command)

    def observed(self, obs: Observation) -> Observation:
        """Report a screenshot or dump a program fetched to the episode in progress; ``obs``."""
        observer = self.line.observer
        if observer is not None:
            observer.observed(obs)
        return obs

    def subshell(self) -> Session:
        """A copy for ``sh -c`` and command substitution: changes stay inside it."""
        return Session(
            self.phone,
            self.fs,
            self.serial,
            self.device,
            dict(self.env),
            self.run_script,
            self.invoke,
            self.cwd,
            self.status,
            list(self.positional),
            self.name,
            line=self.line,
        )


class ShellExit(Exception):
    """``exit N``: ends the shell (or the ``sh -c`` it runs in) with status N."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def strerror(exc: OSError) -> str:
    """The text toybox prints for an errno."""
    return exc.strerror or "I/O error"
