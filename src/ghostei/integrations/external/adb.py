"""The adb an external agent program is given: the binary, and a private adb server.

The binary is the real ``adb`` that adbutils' wheel ships (the ``external`` extra installs
it), else the first ``adb`` on ``PATH``. A run starts its own adb server (a child
process) on a free port and tells it of the run's phones only (it does not scan the emulator
ports, so a user's own emulators stay out of the run); the programs reach it through
``ANDROID_ADB_SERVER_PORT``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import select
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

from ...served.serve import register_emulator, wait_for_devices
from .program import fenced


class AdbMissing(RuntimeError):
    """No adb binary: the message says how to get one."""


def adb_binary() -> Path:
    """The adb binary programs are given; raises AdbMissing naming how to install one."""
    spec = importlib.util.find_spec("adbutils")  # found, not imported: only its file is used
    if spec is not None and spec.origin is not None:
        shipped = Path(spec.origin).parent / "binaries" / "adb"
        if os.access(shipped, os.X_OK):
            return shipped
    found = shutil.which("adb")
    if found is not None:
        return Path(found)
    raise AdbMissing(
        "external agents need adb: pip install 'ghostei[external]' (adbutils ships it), "
        "or put Android's platform-tools on PATH"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class AdbServer:
    """A private adb server on a free port, knowing only the phones registered with it.

    The server is this process's child (``adb nodaemon server``), not a daemon started with
    ``adb start-server``: ``start-server`` finds any adb server already on the port and uses
    it, so two runs (or tests) that chose the same free port would silently share one
    server and see each other's phones. A child that cannot bind its port exits instead,
    and another port is tried. ``home`` (default: the user's) is where adb keeps its keys
    and where ``adb emu`` reads the console's token.
    """

    def __init__(self, binary: Path, home: Path | None = None) -> None:
        self.binary = binary
        self.home = home
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self.env: dict[str, str] = {}

    def _environment(self) -> dict[str, str]:
        env = {
            **os.environ,
            "ANDROID_ADB_SERVER_PORT": str(self.port),
            # Below the first emulator port: the server scans no emulator ports (5555-5585),
            # so it knows only the phones announced to it, never a user's own emulators.
            "ADB_LOCAL_TRANSPORT_MAX_PORT": "1",
            # The native USB backend answers at once; libusb waits 3 s for devices at start.
            "ADB_LIBUSB": "0",
        }
        if self.home is not None:
            env["HOME"] = str(self.home)
        env.pop("ANDROID_SERIAL", None)
        return env

    def adb(
        self, *args: str, serial: str | None = None, stdin: bytes = b"", timeout: float = 30
    ) -> subprocess.CompletedProcess[bytes]:
        """Run the adb client against this server (``-s serial`` when given)."""
        command = [str(self.binary), "-P", str(self.port)]
        if serial:
            command += ["-s", serial]
        return subprocess.run(
            [*command, *args],
            input=stdin,
            capture_output=True,
            env=self.env,
            timeout=timeout,
            check=False,
        )

    def start(self, tries: int = 5, timeout: float = 30.0) -> None:
        """Start the server on a free port; raises RuntimeError with adb's own message if it
        cannot (a port taken between choosing and binding it is retried with another)."""
        message = ""
        for _ in range(tries):
            self.port = _free_port()
            self.env = self._environment()
            # Its log goes to a file, never a pipe: a pipe nobody reads would fill and stall it.
            log = tempfile.TemporaryFile()  # noqa: SIM115 (open for the server's life)
            # adb writes OK to the reply pipe once it holds its port (as for start-server);
            # a server that cannot bind it exits, and the pipe ends without a word.
            reply, reply_w = os.pipe()
            try:
                process = subprocess.Popen(
                    # Fenced: a run killed with SIGKILL leaves no adb server behind.
                    fenced(
                        [
                            *(str(self.binary), "-P", str(self.port), "nodaemon", "server"),
                            *("--reply-fd", str(reply_w)),
                        ]
                    ),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    env=self.env,
                    pass_fds=(reply_w,),
                )
            finally:
                os.close(reply_w)
            try:
                ready, _, _ = select.select([reply], [], [], timeout)
                answer = os.read(reply, 16) if ready else b""
            finally:
                os.close(reply)
            if answer.startswith(b"OK"):
                self._process, self._log = process, log
                return
            _stop(process)
            message = _last_line(log) or f"no answer in {timeout:g} s"
            log.close()
        raise RuntimeError(f"starting an adb server (last on port {self.port}): {message}")

    def attach(self, adbd_ports: Sequence[int], serials: Sequence[str]) -> None:
        """Announce the phones listening on ``adbd_ports`` and wait until all are online."""
        for port in adbd_ports:
            register_emulator(port, self.port)
        if not wait_for_devices(serials, self.port, timeout=20):
            raise RuntimeError(f"the adb server on port {self.port} did not list {serials}")

    @property
    def running(self) -> bool:
        """Whether the server is up (a program may have ended it: ``adb kill-server``)."""
        return self._process is not None and self._process.poll() is None

    def kill(self) -> None:
        """Stop the server (and wait for it)."""
        if self._process is not None:
            _stop(self._process)
            self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End a server process: SIGTERM, then SIGKILL if it lingers."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _last_line(log: IO[bytes]) -> str:
    """The last line adb wrote to its log (why it stopped)."""
    log.seek(0)
    lines = log.read().decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else ""


@contextlib.contextmanager
def adb_server(binary: Path, home: Path | None = None) -> Iterator[AdbServer]:
    """A started private adb server, stopped when the block ends."""
    server = AdbServer(binary, home)
    try:
        server.start()
        yield server
    finally:
        server.kill()
