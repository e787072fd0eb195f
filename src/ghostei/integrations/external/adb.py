"""The adb an external agent program is given: the binary, and a private adb server.

The binary is the real ``adb`` that adbutils' wheel ships (the ``external`` extra installs
it), else the first ``adb`` on ``PATH``. A run starts its own adb server on a free port and
tells it of the run's phones only (it does not scan the emulator ports, so a user's own
emulators stay out of the run); the programs reach it through ``ANDROID_ADB_SERVER_PORT``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

from ...served.serve import register_emulator, wait_for_devices


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
    """A private adb server on a free port, knowing the phones registered with it."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary
        self.port = _free_port()
        self.env = {
            **os.environ,
            "ANDROID_ADB_SERVER_PORT": str(self.port),
            # Below the first emulator port: the server scans no emulator ports at start,
            # so it knows only the phones of this run.
            "ADB_LOCAL_TRANSPORT_MAX_PORT": "1",
            # The native USB backend answers at once; libusb waits 3 s for devices at start.
            "ADB_LIBUSB": "0",
        }
        self.env.pop("ANDROID_SERIAL", None)

    def _adb(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [str(self.binary), "-P", str(self.port), *args],
            capture_output=True,
            env=self.env,
            timeout=timeout,
            check=False,
        )

    def start(self) -> None:
        """Start the server; raises RuntimeError with adb's own message if it cannot."""
        result = self._adb("start-server")
        if result.returncode != 0:
            message = result.stderr.decode("utf-8", "replace").strip()
            raise RuntimeError(f"starting an adb server on port {self.port}: {message}")

    def attach(self, adbd_ports: Sequence[int], serials: Sequence[str]) -> None:
        """Announce the phones listening on ``adbd_ports`` and wait until all are online."""
        for port in adbd_ports:
            register_emulator(port, self.port)
        if not wait_for_devices(serials, self.port, timeout=20):
            raise RuntimeError(f"the adb server on port {self.port} did not list {serials}")

    def kill(self) -> None:
        """Stop the server."""
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            self._adb("kill-server", timeout=10)


@contextlib.contextmanager
def adb_server(binary: Path) -> Iterator[AdbServer]:
    """A started private adb server, killed when the block ends."""
    server = AdbServer(binary)
    try:
        server.start()
        yield server
    finally:
        server.kill()
