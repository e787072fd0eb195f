"""The Android emulator console: snapshots and incoming SMS.

We talk to it directly over TCP rather than through ``adb emu``: ``adb emu`` prints no error
status we could rely on and starts a process per command, while the console answers every
command with ``OK`` or ``KO: reason``. The console of ``emulator-5554`` listens on
``127.0.0.1:5554`` (the number in the serial; adbd is the port above it) and wants the token
from ``~/.emulator_console_auth_token`` first (an empty file means no authentication).
"""

from __future__ import annotations

import contextlib
import re
import socket
from pathlib import Path

TOKEN_NAME = ".emulator_console_auth_token"  # in $HOME, read when a console connects
_SERIAL = re.compile(r"^emulator-(\d+)$")


class ConsoleError(RuntimeError):
    """The console refused a command (``KO: …``) or could not be reached."""


def console_port(serial: str) -> int | None:
    """The console port of an emulator serial (``emulator-5554`` → 5554), else None."""
    m = _SERIAL.match(serial)
    return int(m.group(1)) if m else None


def parse_snapshot_list(text: str) -> list[str]:
    """Snapshot names from ``avd snapshot list`` (QEMU's ``info snapshots`` table)."""
    names: list[str] = []
    header_seen = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("ID") and "TAG" in line:
            header_seen = True
            continue
        parts = line.split()
        if header_seen and len(parts) >= 2 and line not in ("OK",):
            names.append(parts[1])
    return names


def escape_sms(body: str) -> str:
    r"""Text for ``sms send``, which reads one line: ``\n`` for line breaks, ``\\`` for ``\``."""
    return body.replace("\\", "\\\\").replace("\r\n", "\n").replace("\n", "\\n")


class EmulatorConsole:
    """One authenticated console connection; each command waits for its ``OK``/``KO``."""

    def __init__(
        self,
        port: int,
        *,
        host: str = "127.0.0.1",
        token_file: Path | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.port = port
        # $HOME as it is now, not when this module was imported (a harness may set it later).
        token_file = token_file or Path.home() / TOKEN_NAME
        try:
            self._sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            raise ConsoleError(f"no emulator console on {host}:{port}: {exc}") from exc
        self._buffer = b""
        greeting = self._answer()
        if "Authentication required" in greeting:
            token = token_file.read_text(encoding="utf-8").strip() if token_file.exists() else ""
            if not token:
                raise ConsoleError(f"the console wants the auth token of {token_file}")
            self.command(f"auth {token}")

    def command(self, line: str) -> str:
        """Send one command line; its output without the final ``OK``."""
        if "\n" in line or "\r" in line:
            raise ValueError("a console command is one line")
        self._sock.sendall(line.encode("utf-8") + b"\r\n")
        return self._answer()

    def snapshots(self) -> list[str]:
        """Names of the AVD's snapshots."""
        return parse_snapshot_list(self.command("avd snapshot list"))

    def load_snapshot(self, name: str) -> None:
        """Restore a snapshot (the device comes back as it was saved)."""
        self.command(f"avd snapshot load {name}")

    def send_sms(self, sender: str, body: str) -> None:
        """Deliver an SMS from ``sender`` as the radio would."""
        self.command(f"sms send {sender} {escape_sms(body)}")

    def close(self) -> None:
        """Hang up."""
        with contextlib.suppress(OSError):
            self._sock.sendall(b"quit\r\n")
        self._sock.close()

    def _answer(self) -> str:
        lines: list[str] = []
        while True:
            line = self._line()
            if line == "OK":
                return "\n".join(lines)
            if line.startswith("KO"):
                raise ConsoleError(line[2:].lstrip(": ").strip() or "the console said KO")
            lines.append(line)

    def _line(self) -> str:
        while b"\n" not in self._buffer:
            try:
                chunk = self._sock.recv(4096)
            except OSError as exc:
                raise ConsoleError(f"console connection lost: {exc}") from exc
            if not chunk:
                raise ConsoleError("the console closed the connection")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace").rstrip("\r")
