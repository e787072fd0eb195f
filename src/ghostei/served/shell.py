"""The served phone's shell: ``/system/bin/sh`` as adbd runs it for ``shell:`` and ``exec:``.

``AndroidShell.run`` parses a command line (``shell_parse``), expands words (parameters,
command substitution, field splitting, globs against the phone's file system) and runs the
programs registered in ``commands.PROGRAMS`` with pipes and redirections between them. Programs
answer as API 34 does, byte for byte where clients parse the output, and drive the phone through
its device contract so every effect lands in the event log.

Several clients run command lines at once (adbd serves each stream on a thread of its own), and
no line may hold the phone for the others: the phone's lock is taken for one command at a time
(its redirections, the program and the writing of its files), never for a whole line. A line is
bounded as a real phone bounds it (``ShellLimits``): its length as the kernel bounds the command
adbd execs, its time, what its programs write (the shell holds it in memory until the line
ends), and how deeply shells run inside one another. A line whose episode is over stops at its
next command.
"""

from __future__ import annotations

import glob as globlib
import posixpath
import time
from dataclasses import dataclass

from ..sim.phone import SimPhone

# Importing the program modules registers their programs.
from . import (  # noqa: F401
    android_commands,
    coreutils,
    dumpsys,
    ime,
    input_commands,
    logcat,
    providers,
    settings_provider,
    shell_builtins,
    system_info,
    textutils,
)
from .commands import (
    IO,
    PROGRAMS,
    DeviceState,
    Line,
    LineStopped,
    Program,
    Session,
    ShellExit,
    UsageError,
    Writer,
)
from .network import PhoneNetwork
from .shell_parse import AndOr, Command, Pipeline, Redirect, ShellSyntaxError, Word, parse
from .vfs import SYSTEM_BIN, PhoneFS

SHELL = "/system/bin/sh"
SHELL_PID = 4321
# The environment adbd gives a root shell on an API-34 emulator.
ENVIRONMENT = {
    "ANDROID_ART_ROOT": "/apex/com.android.art",
    "ANDROID_ASSETS": "/system/app",
    "ANDROID_DATA": "/data",
    "ANDROID_I18N_ROOT": "/apex/com.android.i18n",
    "ANDROID_ROOT": "/system",
    "ANDROID_STORAGE": "/storage",
    "ANDROID_TZDATA_ROOT": "/apex/com.android.tzdata",
    "EXTERNAL_STORAGE": "/sdcard",
    "HOME": "/",
    "HOSTNAME": "emu64x",
    "LOGNAME": "root",
    "PATH": "/product/bin:/apex/com.android.runtime/bin:/apex/com.android.art/bin:"
    "/system_ext/bin:/system/bin:/system/xbin:/odm/bin:/vendor/bin:/vendor/xbin",
    "SHELL": SHELL,
    "TERM": "dumb",
    "TMPDIR": "/data/local/tmp",
    "USER": "root",
}
# Folders whose programs are the shell's own (a program named by path must live in one).
BIN_DIRS = ("/system/bin", "/system/xbin", "/vendor/bin", "/product/bin", "/system_ext/bin")
# The programs that run command lines themselves: each of their commands takes the phone's
# lock on its own, so they run without it (a script must not hold the phone while it runs).
NESTING = frozenset({"sh", "eval", "exec", "command", "toybox"})
# adbd execs ``sh -c COMMAND``; the kernel refuses an argument of MAX_ARG_STRLEN (32 pages,
# 128 KiB, its NUL included) or more with E2BIG, and adbd reports the failed exec so.
MAX_ARG_STRLEN = 128 * 1024
TOO_LONG = b"error: exec '/system/bin/sh' failed: Argument list too long\n"
KILLED = 128 + 9  # the status of a process killed by SIGKILL, as adbd reports it


@dataclass(frozen=True)
class ShellLimits:
    """What one command line may use.

    ``line_bytes``: the longest command line (see ``MAX_ARG_STRLEN``; the interactive shell
    holds its lines to it too). ``seconds``: how long a line may run; no program of this
    shell waits (``sleep`` returns at once), so only a runaway script comes near it.
    ``output_bytes``: what a line's programs may write in all, to the client, pipes and files
    (32 MiB: above any screen's raw ``screencap``, 1440x3200x4 bytes). ``depth``: shells
    running inside one another (a script calling itself); a real phone runs out of processes,
    and mksh then says it cannot fork. Past the time or output limit the line is killed
    (status 137, as a process killed by SIGKILL); past the depth the command fails.
    """

    line_bytes: int = MAX_ARG_STRLEN - 1
    seconds: float = 60.0
    output_bytes: int = 32 * 1024 * 1024
    depth: int = 64


@dataclass(frozen=True)
class ShellResult:
    """What a command line produced.

    ``output`` interleaves stdout and stderr as they were written: it is what a raw
    ``shell:`` or ``exec:`` stream carries (adbd gives the process one stream for both).
    ``chunks`` are the writes in order, ``(1, data)`` for stdout and ``(2, data)`` for stderr,
    for a shell-v2 stream that sends each as its own packet.
    """

    stdout: bytes
    stderr: bytes
    exit_code: int
    output: bytes = b""
    chunks: tuple[tuple[int, bytes], ...] = ()


class _Capture:
    """Collects stdout and stderr, and both interleaved in the order they were written."""

    def __init__(self) -> None:
        self.chunks: list[tuple[int, bytes]] = []

    def writer(self, fd: int) -> Writer:
        def write(data: bytes) -> None:
            if data:
                self.chunks.append((fd, data))

        return write

    def result(self, status: int) -> ShellResult:
        return ShellResult(
            b"".join(d for fd, d in self.chunks if fd == 1),
            b"".join(d for fd, d in self.chunks if fd == 2),
            status & 0xFF,
            b"".join(d for _, d in self.chunks),
            tuple(self.chunks),
        )


class AndroidShell:
    """Android's shell on the served phone; one per phone, shared by all adb connections."""

    def __init__(
        self,
        phone: SimPhone,
        fs: PhoneFS,
        *,
        serial: str,
        full_events: bool = True,
        network: PhoneNetwork | None = None,
        limits: ShellLimits | None = None,
    ) -> None:
        # The bare shell logs every event (its own tests read them all); ServedPhone, which
        # stands for a stock emulator, asks for the helper app's events only.
        self.phone = phone
        self.fs = fs
        self.serial = serial
        self.device = DeviceState(phone, full_events=full_events, network=network)
        self.limits = limits or ShellLimits()

    def run(self, command: str, stdin: bytes = b"") -> ShellResult:
        """Run one command line as ``sh -c`` does and return its output and exit status.

        It takes the phone's lock for each command, not for the line: call it without the
        lock held, or the line holds the phone from start to end.
        """
        capture = _Capture()
        if len(command.encode("utf-8", "surrogateescape")) > self.limits.line_bytes:
            capture.writer(2)(TOO_LONG)  # adbd's report when sh cannot even be started
            return capture.result(126)
        with self.fs.lock:
            observer = self.device.observer
        line = Line(
            command,
            observer,
            deadline=time.monotonic() + self.limits.seconds,
            output_left=self.limits.output_bytes,
        )
        io = IO(
            stdin, self._metered(line, capture.writer(1)), self._metered(line, capture.writer(2))
        )
        session = self.session(line)
        # The episode of an external agent, if one is in progress, sees each command line.
        with self.device.running(line, self.fs.lock):
            try:
                status = self._run_source(session, command, io)
            except ShellExit as done:
                status = done.status
            except LineStopped as stop:
                capture.writer(2)(f"{SHELL}: {stop}\n".encode())
                status = KILLED
            except RecursionError:  # the depth limit comes first, unless Python's stack is short
                capture.writer(2)(f"{SHELL}: killed: shells nested too deeply\n".encode())
                status = KILLED
        return capture.result(status)

    def session(self, line: Line | None = None) -> Session:
        """A fresh shell process (adbd starts one per ``shell:`` request) running ``line``."""
        env = dict(ENVIRONMENT)
        return Session(
            self.phone,
            self.fs,
            self.serial,
            self.device,
            env,
            self._script,
            self._invoke,
            line=line or Line(),
        )

    # ----- the line's limits ------------------------------------------------------------------

    def _check(self, session: Session) -> None:
        """Between commands: stop the line if it ran out of time or its episode is over."""
        line = session.line
        if time.monotonic() > line.deadline:
            raise LineStopped(f"killed: the command line ran past {self.limits.seconds:g} s")
        observer = line.observer
        if observer is not self.device.observer or (observer is not None and observer.ended):
            raise LineStopped("killed: the episode this command line belongs to is over")

    def _metered(self, line: Line, write: Writer) -> Writer:
        """``write``, counting what it takes against the line's output budget."""

        def metered(data: bytes) -> None:
            line.output_left -= len(data)
            if line.output_left < 0:
                limit = self.limits.output_bytes
                raise LineStopped(f"killed: the command line wrote more than {limit} bytes")
            write(data)

        return metered

    # ----- lists, pipelines, commands -------------------------------------------------------

    def _script(self, session: Session, source: str, io: IO, positional: list[str]) -> int:
        """``sh -c``: run ``source`` in a child shell; ``exit`` ends only the child."""
        line = session.line
        if line.depth >= self.limits.depth:
            # A real phone runs out of processes first; mksh then reports the failed fork.
            name = posixpath.basename(positional[0]) if positional else "sh"
            io.error(f"{SHELL}: {name}: can't fork - try again ({line.depth} shells deep)")
            return 1
        child = session.subshell()
        if positional:
            child.name, child.positional = positional[0], positional[1:]
        line.depth += 1
        try:
            return self._run_source(child, source, io)
        except ShellExit as done:
            return done.status
        finally:
            line.depth -= 1

    def _run_source(self, session: Session, source: str, io: IO) -> int:
        try:
            script = parse(source)
        except ShellSyntaxError as exc:
            io.error(f"{SHELL}: {exc}")
            session.status = 1
            return 1
        for item in script:
            session.status = self._and_or(session, item, io)
        return session.status

    def _and_or(self, session: Session, node: AndOr, io: IO) -> int:
        status = self._pipeline(session, node.pipelines[0], io)
        for op, pipeline in zip(node.ops, node.pipelines[1:], strict=True):
            session.status = status
            if (op == "&&") == (status == 0):
                status = self._pipeline(session, pipeline, io)
        return status

    def _pipeline(self, session: Session, pipeline: Pipeline, io: IO) -> int:
        data = io.stdin
        status = 0
        last = len(pipeline.commands) - 1
        for i, cmd in enumerate(pipeline.commands):
            # Each stage reads what the previous one wrote; the phone settles instantly, so
            # running the stages one after another gives what concurrent ones would.
            piped = bytearray()
            out = io.out if i == last else self._metered(session.line, piped.extend)
            status = self._command(session, cmd, IO(data, out, io.err))
            data = bytes(piped)
        if pipeline.negate:
            status = 0 if status else 1
        return status

    def _command(self, session: Session, cmd: Command, io: IO) -> int:
        self._check(session)
        session.subst_status = None
        # Expansion first, without the phone's lock: a $(...) in it runs commands of its own.
        argv: list[str] = []
        for word in cmd.words:
            argv.extend(self._expand(session, word, io))
        assigns = {name: self._expand_plain(session, w, io) for name, w in cmd.assigns}
        targets = [self._expand_plain(session, r.target, io) for r in cmd.redirects]
        lock = self.fs.lock
        try:
            with lock:
                # Checked again under the lock: the episode cannot end during the command.
                self._check(session)
                redirected = self._redirect(session, cmd.redirects, targets, io)
                if redirected is None:
                    return 1
                rio, files = redirected
                try:
                    if not argv:
                        session.env.update(assigns)
                        return session.subst_status or 0
                    if assigns:
                        session = session.subshell()
                        session.env.update(assigns)
                    if not self._nests(session, argv[0]):
                        return self._invoke(session, argv, rio)
                    lock.release()  # its commands take the lock one at a time
                    try:
                        return self._invoke(session, argv, rio)
                    finally:
                        lock.acquire()
                finally:
                    for path, buf in files:
                        self.fs.write(path, bytes(buf), 0o644)
        finally:
            # A line that takes the lock again at once would keep any other client waiting
            # for it (the lock is not fair): let one that waits have the phone first.
            time.sleep(0)

    def _nests(self, session: Session, name: str) -> bool:
        """Whether the program ``name`` runs command lines (see ``NESTING``)."""
        if "/" not in name:
            return name in NESTING
        base = posixpath.basename(name)
        return base in NESTING or self._lookup(session, name) not in (None, PROGRAMS.get(base))

    def _invoke(self, session: Session, argv: list[str], io: IO) -> int:
        name = argv[0]
        program = self._lookup(session, name)
        if program is None:
            io.error(f"{SHELL}: {name}: inaccessible or not found")
            return 127
        if self._nests(session, name):
            return self._call(program, session, argv, io)
        with self.fs.lock:  # toybox and exec call here for the commands they run
            self._check(session)
            if self.device.network is not None:
                self.device.network.watch()  # Chrome's requests follow the present OS
            return self._call(program, session, argv, io)

    @staticmethod
    def _call(program: Program, session: Session, argv: list[str], io: IO) -> int:
        name = posixpath.basename(argv[0])
        try:
            return program(session, [name, *argv[1:]], io)
        except UsageError as exc:
            io.error(str(exc))
            return exc.status
        except ValueError as exc:  # a malformed number in the arguments, as toybox reports it
            io.error(f"{name}: {exc}")
            return 1

    def _lookup(self, session: Session, name: str) -> Program | None:
        if "/" not in name:
            return PROGRAMS.get(name)
        path = self.fs.canonical(session.path(name))
        base = posixpath.basename(path)
        if posixpath.dirname(path) in BIN_DIRS and base in PROGRAMS:
            return PROGRAMS[base] if base in SYSTEM_BIN or base == "sh" else None
        st = self.fs.stat(path)
        if st is not None and st.is_file and st.mode & 0o111:
            return _script_program(path)
        return None

    # ----- redirections -----------------------------------------------------------------------

    def _redirect(
        self, session: Session, redirects: list[Redirect], targets: list[str], io: IO
    ) -> tuple[IO, list[tuple[str, bytearray]]] | None:
        fds: dict[int, Writer] = {1: io.out, 2: io.err}
        stdin = io.stdin
        files: list[tuple[str, bytearray]] = []
        for r, target in zip(redirects, targets, strict=True):
            if r.op in (">", ">>") or (r.op == ">&" and not target.isdigit() and target != "-"):
                writer = self._open_output(session, target, r.op == ">>", files, io)
                if writer is None:
                    return None
                for fd in (1, 2) if r.fd == -1 or (r.op == ">&" and r.fd == 1) else (r.fd,):
                    fds[fd] = writer
            elif r.op == ">&":
                if target == "-":
                    fds[r.fd] = _discard
                elif int(target) in fds:
                    fds[r.fd] = fds[int(target)]
                else:
                    io.error(f"{SHELL}: {target}: bad file descriptor")
                    return None
            elif r.op == "<":
                data = self.fs.read(session.path(target))
                if data is None:
                    io.error(f"{SHELL}: can't open {target}: No such file or directory")
                    return None
                if r.fd == 0:
                    stdin = data
        return IO(stdin, fds[1], fds[2]), files

    def _open_output(
        self,
        session: Session,
        target: str,
        append: bool,
        files: list[tuple[str, bytearray]],
        io: IO,
    ) -> Writer | None:
        path = session.path(target)
        if self.fs.canonical(path) == "/dev/null":
            return _discard
        old = self.fs.read(path) if append else None
        try:
            if self.fs.kind(posixpath.dirname(path)) != "dir":
                raise FileNotFoundError(2, "No such file or directory")
            if self.fs.kind(path) == "dir":
                raise IsADirectoryError(21, "Is a directory")
            self.fs.write(path, old or b"", 0o644)  # the file exists from here on, as open(2)
        except OSError as exc:
            io.error(f"{SHELL}: can't create {target}: {exc.strerror}")
            return None
        buf = bytearray(old or b"")
        files.append((path, buf))
        return self._metered(session.line, buf.extend)

    # ----- expansion --------------------------------------------------------------------------

    def _param(self, session: Session, name: str) -> str:
        if name == "?":
            return str(session.status)
        if name == "$":
            return str(SHELL_PID)
        if name == "#":
            return str(len(session.positional))
        if name == "0":
            return session.name
        if name.isdigit():
            i = int(name)
            return session.positional[i - 1] if i <= len(session.positional) else ""
        if name in ("@", "*"):
            return " ".join(session.positional)
        if name in ("!", "-"):
            return ""
        return session.env.get(name, "")

    def _substitute(self, session: Session, source: str, io: IO) -> str:
        out = bytearray()
        write = self._metered(session.line, out.extend)
        status = self._script(session, source, IO(b"", write, io.err), [])
        session.subst_status = status
        return out.decode("utf-8", "replace").rstrip("\n")

    def _expand_plain(self, session: Session, word: Word, io: IO) -> str:
        """A word without field splitting or globbing (assignments, redirection targets)."""
        texts: list[str] = []
        for part in word.parts:
            if part.kind == "lit":
                texts.append(part.text)
            elif part.kind == "var":
                texts.append(self._param(session, part.text))
            else:
                texts.append(self._substitute(session, part.text, io))
        return "".join(texts)

    def _expand(self, session: Session, word: Word, io: IO) -> list[str]:
        """A word's fields: parameters and substitutions split when unquoted, then globbed."""
        fields: list[list[tuple[str, bool]]] = []
        cur: list[tuple[str, bool]] | None = None
        for part in word.parts:
            if part.kind == "lit":
                cur = [*(cur or []), (part.text, part.quoted)]
                continue
            if part.kind == "var":
                value = self._param(session, part.text)
            else:
                value = self._substitute(session, part.text, io)
            if part.quoted:
                cur = [*(cur or []), (value, True)]
                continue
            pieces = value.split()
            if not pieces:
                if value and cur is not None:
                    fields.append(cur)
                    cur = None
                continue
            if value[0].isspace() and cur is not None:
                fields.append(cur)
                cur = None
            for k, piece in enumerate(pieces):
                if k and cur is not None:
                    fields.append(cur)
                    cur = None
                cur = [*(cur or []), (piece, False)]
            if value[-1].isspace() and cur is not None:
                fields.append(cur)
                cur = None
        if cur is not None:
            fields.append(cur)
        out: list[str] = []
        for f in fields:
            text = "".join(t for t, _ in f)
            if f and not f[0][1] and f[0][0].startswith("~"):
                head = f[0][0]
                if head == "~" or head.startswith("~/"):
                    text = session.env.get("HOME", "/").rstrip("/") + text[1:] or "/"
            if any(not quoted and _magic(t) for t, quoted in f):
                pattern = "".join(t if not q else globlib.escape(t) for t, q in f)
                matches = self._glob(session, pattern)
                if matches:
                    out.extend(matches)
                    continue
            out.append(text)
        return out

    def _glob(self, session: Session, pattern: str) -> list[str]:
        if pattern.startswith("/"):
            return self.fs.glob(pattern)
        base = session.cwd.rstrip("/") + "/"
        return [m[len(base) :] for m in self.fs.glob(base + pattern) if m.startswith(base)]


def _magic(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def _discard(data: bytes) -> None:
    pass


def _script_program(path: str) -> Program:
    """An executable file: run as a shell script, as mksh does for a file without #!."""

    def run(session: Session, argv: list[str], io: IO) -> int:
        data = session.fs.read(path) or b""
        return session.run_script(session, data.decode("utf-8", "replace"), io, [path, *argv[1:]])

    return run
