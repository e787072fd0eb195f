"""The Android emulator console (telnet on the even port below adbd) for a served phone.

It behaves as the emulator's ``android/console.cpp`` does: a greeting that asks for the token of
``~/.emulator_console_auth_token`` (the file is created with a random token if missing; an empty
file turns authentication off), ``auth TOKEN``, and then one command per line answered with
``OK`` or ``KO: …`` (lines end in CRLF). Before authentication only ``help``, ``help-verbose``,
``ping``, ``avd name``, ``auth`` and ``quit`` exist. After it: ``sms send NUMBER TEXT``,
``avd snapshot list|save|load|del|delete NAME``, ``avd status``, ``avd name``, ``ping``,
``help``, ``quit``/``exit``. ``adb emu …`` connects here, sends ``auth`` with the token file's
contents, the command and ``quit``, and prints what follows the second ``OK``.
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import secrets
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .tcp import ThreadedTcpServer

log = logging.getLogger(__name__)

TOKEN_FILE = ".emulator_console_auth_token"
LINE_MAX = 4096  # the emulator's line buffer; longer lines wrap around, as there
_PHONE_NUMBER = re.compile(r"\+?[0-9]+")
_HTTP_REQUEST = re.compile(r"(GET|POST|PUT|DELETE|HEAD|OPTIONS|PATCH|CONNECT|TRACE) \S+ HTTP/")


@dataclass(frozen=True)
class SnapshotInfo:
    """One line of ``avd snapshot list``."""

    name: str
    size: int  # bytes
    saved: str  # "YYYY-MM-DD HH:MM:SS"
    vm_clock: str  # "HH:MM:SS.mmm" of device uptime when saved


class ConsoleTarget(Protocol):
    """What the console drives on its phone; each method takes the phone's lock itself."""

    @property
    def avd_name(self) -> str: ...
    def receive_sms(self, sender: str, body: str) -> None: ...
    def save_snapshot(self, name: str) -> None: ...
    def load_snapshot(self, name: str) -> bool: ...
    def delete_snapshot(self, name: str) -> bool: ...
    def list_snapshots(self) -> Sequence[SnapshotInfo]: ...


def default_token_path() -> Path:
    """Where the emulator (and ``adb emu``) look for the console token: ``$HOME``."""
    return Path(os.path.expanduser("~")) / TOKEN_FILE


def read_or_create_token(path: Path) -> str:
    """The console token, creating the file with a fresh random token as the emulator does."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        pass
    # Write a private temporary file, then link it into place: several consoles starting at
    # once agree on one token, and none ever reads a half-written file.
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(12)  # 16 characters, like the emulator's tokens
    temporary = path.with_name(f"{path.name}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(token)  # no newline, as the emulator writes it
        os.link(temporary, path)
    except FileExistsError:
        return path.read_text(encoding="utf-8").strip()
    finally:
        temporary.unlink(missing_ok=True)
    return token


class SmsTextError(ValueError):
    """An ``sms send`` text with an escape the emulator rejects."""


def unescape_sms(text: str) -> str:
    r"""The emulator's escapes in ``sms send`` text: ``\n``, ``\xNN``, ``\uNNNN``, ``\\``."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        kind = text[i + 1 : i + 2]
        if kind == "n":
            out.append("\n")
            i += 2
        elif kind == "\\":
            out.append("\\")
            i += 2
        elif kind in ("x", "u"):
            width = 2 if kind == "x" else 4
            digits = text[i + 2 : i + 2 + width]
            if len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise SmsTextError(text)
            out.append(chr(int(digits, 16)))
            i += 2 + width
        else:
            raise SmsTextError(text)
    return "".join(out)


BAD_SMS_TEXT = (
    "message must be utf8 and can use the following escapes:\n"
    "    \\n      for a newline\n"
    "    \\xNN    where NN are two hexadecimal numbers\n"
    "    \\uNNNN  where NNNN are four hexadecimal numbers\n"
    "    \\\\     to send a '\\' character\n\n"
    "    anything else is an error\n"
    "KO: badly formatted text\n"
)


# ----- commands -------------------------------------------------------------------------------

# A handler gets the session and the arguments (None when there are none) and returns the text
# to send; ``ok`` tells whether "OK" follows it.
Handler = Callable[["_Session", str | None], tuple[str, bool]]


@dataclass(frozen=True)
class Command:
    """One console command: names ``a|b``, a one-line abstract, a handler or sub-commands."""

    names: str
    abstract: str
    handler: Handler | None = None
    subcommands: tuple[Command, ...] = ()
    description: str = ""


def _find(line: str, commands: Sequence[Command]) -> tuple[Command, str | None] | None:
    """The command a line starts with and its arguments (spaces after the name skipped)."""
    word, _, rest = line.partition(" ")
    args = rest.lstrip(" ") or None
    for command in commands:
        if word in command.names.split("|"):
            return command, args
    return None


def _help_list(commands: Sequence[Command]) -> str:
    names = "".join(f"    {c.names}\n" for c in commands)
    return (
        "Android console commands:\n"
        + names
        + "\nTry 'help-verbose' for more description\nTry 'help <command>' for command-specific"
        " help\n"
    )


def _describe(command: Command, prefix: str) -> str:
    text = command.description or command.abstract + "\n"
    if command.subcommands:
        text += "\navailable sub-commands:\n"
        text += "".join(f"   {prefix} {c.names:<15}  {c.abstract}\n" for c in command.subcommands)
        text += "\n"
    return text


def _do_help(session: _Session, args: str | None) -> tuple[str, bool]:
    if args is None:
        return _help_list(session.commands), True
    commands, line = session.commands, args
    while True:
        found = _find(line, commands)
        if found is None:
            return _help_list(session.commands) + "\nKO: unknown command\n", False
        command, rest = found
        if rest is None or not command.subcommands:
            return _describe(command, args), True
        commands, line = command.subcommands, rest


def _do_help_verbose(session: _Session, args: str | None) -> tuple[str, bool]:
    rows = "".join(f"    {c.names:<15}  {c.abstract}\n" for c in session.commands)
    return (
        "Android console command help:\n\n"
        + rows
        + "\ntry 'help <command>' for command-specific help\n",
        True,
    )


def _do_ping(session: _Session, args: str | None) -> tuple[str, bool]:
    return "I am alive!\n", True


def _do_quit(session: _Session, args: str | None) -> tuple[str, bool]:
    session.finished = True
    return "", False


def _do_auth(session: _Session, args: str | None) -> tuple[str, bool]:
    if args is None:
        return "KO: missing authentication token\n", False
    try:
        token = read_or_create_token(session.console.token_path)
    except OSError:
        return f"KO: unable to read ~/{TOKEN_FILE}\n", False
    if not hmac.compare_digest(token.encode(), args.strip().encode()):
        return f"KO: authentication token does not match ~/{TOKEN_FILE}\n", False
    session.commands = MAIN_COMMANDS
    return "Android Console: type 'help' for a list of commands\n", True


def _do_avd_name(session: _Session, args: str | None) -> tuple[str, bool]:
    return session.console.target.avd_name + "\n", True


def _do_avd_status(session: _Session, args: str | None) -> tuple[str, bool]:
    return "virtual device is running\n", True


def _do_sms_send(session: _Session, args: str | None) -> tuple[str, bool]:
    missing = "KO: missing argument, try 'sms send <phonenumber> <text message>'\n"
    if args is None or " " not in args:
        return missing, False
    number, _, text = args.partition(" ")
    if not _PHONE_NUMBER.fullmatch(number):
        return "KO: bad phone number format, must be [+](0-9)*\n", False
    try:
        body = unescape_sms(text)
    except SmsTextError:
        return BAD_SMS_TEXT, False
    session.console.target.receive_sms(number, body)
    return "", True


def _do_snapshot_list(session: _Session, args: str | None) -> tuple[str, bool]:
    rows = [f"{'ID':<10}{'TAG':<20}{'VM SIZE':>7}{'DATE':>20}{'VM CLOCK':>15}"]
    for snap in session.console.target.list_snapshots():
        rows.append(
            f"{'--':<10}{snap.name:<20}{_size(snap.size):>7}{snap.saved:>20}{snap.vm_clock:>15}"
        )
    if len(rows) == 1:
        return "There is no snapshot available.\n", True
    return "List of snapshots present on all disks:\n" + "\n".join(rows) + "\n", True


def _size(size: int) -> str:
    for unit in ("", "K", "M", "G"):
        if size < 1024 or unit == "G":
            return f"{size}{unit}"
        size //= 1024
    return str(size)


def _do_snapshot_save(session: _Session, args: str | None) -> tuple[str, bool]:
    if args is None:
        return "KO: Argument missing, try 'avd snapshot save <name>'\n", False
    session.console.target.save_snapshot(args.strip())
    return "", True


def _do_snapshot_load(session: _Session, args: str | None) -> tuple[str, bool]:
    if args is None:
        return "KO: Argument missing, try 'avd snapshot load <name>'\n", False
    name = args.strip()
    if not session.console.target.load_snapshot(name):
        return f"KO: Snapshot '{name}' does not exist\n", False
    return "", True


def _do_snapshot_del(session: _Session, args: str | None) -> tuple[str, bool]:
    if args is None:
        return "KO: Argument missing, try 'avd snapshot list <name>'\n", False
    name = args.strip()
    if not session.console.target.delete_snapshot(name):
        return f"KO: Snapshot '{name}' does not exist\n", False
    return "", True


HELP = Command("help|h|?", "print a list of commands", _do_help)
HELP_VERBOSE = Command(
    "help-verbose", "print a list of commands with descriptions", _do_help_verbose
)
PING = Command("ping", "check if the emulator is alive", _do_ping)
QUIT = Command("quit|exit", "quit control session", _do_quit)
AVD_NAME = Command(
    "name",
    "query virtual device name",
    _do_avd_name,
    description="'avd name' will return the name of this virtual device\n",
)
SNAPSHOT_COMMANDS = (
    Command("list", "list available state snapshots", _do_snapshot_list),
    Command("save", "save state snapshot", _do_snapshot_save),
    Command("load", "load state snapshot", _do_snapshot_load),
    Command("del", "delete state snapshot", _do_snapshot_del),
    Command("delete", "delete state snapshot", _do_snapshot_del),
)
AVD_COMMANDS = (
    Command("status", "query virtual device status", _do_avd_status),
    AVD_NAME,
    Command(
        "snapshot",
        "state snapshot commands",
        subcommands=SNAPSHOT_COMMANDS,
        description="allows you to save and restore the virtual device state in snapshots\n",
    ),
)
AVD_DESCRIPTION = "control virtual device execution\n"
MAIN_COMMANDS: tuple[Command, ...] = (
    HELP,
    HELP_VERBOSE,
    PING,
    QUIT,
    Command(
        "sms",
        "SMS related commands",
        subcommands=(Command("send", "send inbound SMS text message", _do_sms_send),),
        description="allows you to simulate an inbound SMS\n",
    ),
    Command(
        "avd",
        "control virtual device execution",
        subcommands=AVD_COMMANDS,
        description=AVD_DESCRIPTION,
    ),
)
PREAUTH_COMMANDS: tuple[Command, ...] = (
    HELP,
    HELP_VERBOSE,
    PING,
    Command(
        "avd",
        "control virtual device execution",
        subcommands=(AVD_NAME,),
        description=AVD_DESCRIPTION,
    ),
    Command(
        "auth",
        "user authentication for the emulator console",
        _do_auth,
        description="use 'auth <auth_token>' to get extended console functionality\n",
    ),
    QUIT,
)


# ----- sessions and the server -------------------------------------------------------------------


class _Session:
    """One telnet client of the console."""

    def __init__(self, console: EmulatorConsole, sock: socket.socket) -> None:
        self.console = console
        self.sock = sock
        self.commands: Sequence[Command] = PREAUTH_COMMANDS
        self.finished = False

    def write(self, text: str) -> None:
        # The console ends every line with CRLF, whatever the handler wrote.
        self.sock.sendall(text.replace("\r\n", "\n").replace("\n", "\r\n").encode("utf-8"))

    def greet(self) -> bool:
        """Send the greeting; False if the token file cannot be read (the client is dropped)."""
        path = self.console.token_path
        try:
            token = read_or_create_token(path)
        except OSError:
            return False
        if not token:
            self.commands = MAIN_COMMANDS
            self.write("Android Console: type 'help' for a list of commands\nOK\n")
        else:
            self.write(
                "Android Console: Authentication required\n"
                "Android Console: type 'auth <auth_token>' to authenticate\n"
                f"Android Console: you can find your <auth_token> in \n'{path}'\nOK\n"
            )
        return True

    def serve(self) -> None:
        if not self.greet():
            return
        pending = bytearray()
        while not self.finished:
            data = self.sock.recv(4096)
            if not data:
                return
            for byte in data:
                if byte == 0x0D:  # "\r" is filtered out
                    continue
                if byte != 0x0A:
                    if len(pending) >= LINE_MAX - 1:
                        pending.clear()
                    pending.append(byte)
                    continue
                self.command(bytes(pending))
                pending.clear()
                if self.finished:
                    return

    def command(self, raw: bytes) -> None:
        """Run one line and answer it."""
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            self.write("KO: Forbidden binary request. Aborting\n")
            self.finished = True
            return
        if _HTTP_REQUEST.match(line):
            self.write("KO: Forbidden HTTP request. Aborting\n")
            self.finished = True
            return
        found = _find(line, self.commands)
        if found is None:
            self.write("KO: unknown command, try 'help'\n")
            return
        command, args = found
        while command.handler is None:
            if args is None:
                self.write(_describe(command, "") + "KO: missing sub-command\n")
                return
            sub = _find(args, command.subcommands)
            if sub is None:
                self.write(_describe(command, "") + "KO:  bad sub-command\n")
                return
            command, args = sub
        try:
            text, ok = command.handler(self, args)
        except Exception as exc:  # a failing command answers KO; the console stays up
            log.exception("console command %r failed", line)
            text, ok = f"KO: {exc}\n", False
        self.write(text + ("OK\n" if ok else ""))


class EmulatorConsole(ThreadedTcpServer):
    """The console server of one phone: an accept thread and one thread per client."""

    name = "console"

    def __init__(
        self,
        target: ConsoleTarget,
        *,
        port: int,
        host: str = "127.0.0.1",
        token_path: Path | None = None,
    ) -> None:
        super().__init__(port=port, host=host)
        self.target = target
        self.token_path = token_path or default_token_path()

    def start(self) -> EmulatorConsole:
        """Accept clients in a background thread; the token file exists from now on."""
        read_or_create_token(self.token_path)
        self.start_listening()
        return self

    def handle(self, sock: socket.socket) -> None:
        _Session(self, sock).serve()
