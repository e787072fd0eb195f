"""The one choke point for adb: every command the Android backend sends goes through here.

``AdbTransport`` is the little the backend needs of adb; ``AdbutilsTransport`` provides it
with the ``adbutils`` client (the ``android`` extra), which speaks to the adb server on
``adb_port`` (default: ``ANDROID_ADB_SERVER_PORT``, else 5037). Tests put a recorded double in
its place.
"""

from __future__ import annotations

import os
import socket
import struct
from pathlib import Path
from typing import Any, Protocol


class AdbError(RuntimeError):
    """adb could not run a command on the device."""


class AdbTransport(Protocol):
    """What the backend asks of adb."""

    serial: str

    def shell(self, command: str) -> str:
        """Run a shell command line; its output (stdout and stderr) as text."""

    def exec_out(self, command: str) -> bytes:
        """Run a command with raw binary output (``adb exec-out``)."""

    def pull(self, path: str) -> bytes:
        """A file's bytes (sync RECV)."""

    def push(self, data: bytes, path: str) -> None:
        """Write a file (sync SEND)."""

    def reverse(self, remote: str, local: str) -> None:
        """``adb reverse``: the device's ``remote`` reaches the host's ``local``."""

    def wait_for_device(self, timeout: float) -> None:
        """Block until the device is online."""


def _adbutils() -> Any:
    try:
        import adbutils  # type: ignore[import-untyped]
    except ImportError as exc:  # the android extra is optional
        raise AdbError(
            "the Android backend needs adbutils: pip install 'ghostei[android]'"
        ) from exc
    return adbutils


class AdbutilsTransport:
    """adb through the adbutils client library.

    The per-step commands (shell, exec-out, pull) open their connection with
    ``host:transport:SERIAL`` themselves and close it without lingering: adbutils asks the
    server for its version before every command and waits 10 ms when closing, which would
    triple the cost of a step on a fast device. The rest (push, reverse, wait) is adbutils'.
    """

    def __init__(
        self,
        serial: str,
        *,
        adb_port: int | None = None,
        host: str = "127.0.0.1",
        timeout: float = 120.0,
    ) -> None:
        adbutils = _adbutils()
        port = adb_port or int(os.environ.get("ANDROID_ADB_SERVER_PORT", "5037"))
        self.serial = serial
        self._timeout = timeout
        self._client = adbutils.AdbClient(host=host, port=port)
        self._device = self._client.device(serial)
        self._errors: tuple[type[BaseException], ...] = (adbutils.AdbError, OSError)

    def _service(self, service: str) -> Any:
        """A connection to ``service`` on the device (the server said OKAY to both)."""
        conn = self._client.make_connection(timeout=self._timeout)
        try:
            conn.send_command(f"host:transport:{self.serial}")
            conn.check_okay()
            conn.send_command(service)
            conn.check_okay()
        except BaseException:
            conn.conn.close()
            raise
        return conn

    def _run(self, service: str) -> bytes:
        try:
            conn = self._service(service)
            try:
                return bytes(conn.read_until_close(encoding=None))
            finally:
                conn.conn.close()
        except self._errors as exc:
            raise AdbError(f"adb {service!r} on {self.serial}: {exc}") from exc

    def shell(self, command: str) -> str:
        return self._run("shell:" + command).decode("utf-8", errors="replace")

    def exec_out(self, command: str) -> bytes:
        return self._run("exec:" + command)

    def pull(self, path: str) -> bytes:
        # The sync protocol's RECV: DATA chunks until DONE, or FAIL with a reason.
        try:
            conn = self._service("sync:")
            try:
                name = path.encode("utf-8")
                conn.send(b"RECV" + struct.pack("<I", len(name)) + name)
                data = bytearray()
                while True:
                    header = conn.read_exact(8)
                    size = struct.unpack("<I", header[4:])[0]
                    if header[:4] == b"DATA":
                        data += conn.read_exact(size)
                    elif header[:4] == b"DONE":
                        break
                    else:
                        reason = conn.read_exact(size).decode("utf-8", errors="replace")
                        raise AdbError(f"adb pull {path} from {self.serial}: {reason}")
                conn.send(b"QUIT" + bytes(4))
                return bytes(data)
            finally:
                conn.conn.close()
        except self._errors as exc:
            raise AdbError(f"adb pull {path} from {self.serial}: {exc}") from exc

    def push(self, data: bytes, path: str) -> None:
        try:
            self._device.sync.push(data, path, mode=0o644)
        except self._errors as exc:
            raise AdbError(f"adb push {path} to {self.serial}: {exc}") from exc

    def install(self, apk: Path) -> None:
        """``adb install -r APK``."""
        try:
            self._device.install(str(apk), nolaunch=True)
        except self._errors as exc:
            raise AdbError(f"adb install {apk} on {self.serial}: {exc}") from exc

    def reverse(self, remote: str, local: str) -> None:
        try:
            self._device.reverse(remote, local)
        except self._errors as exc:
            raise AdbError(f"adb reverse {remote} {local} on {self.serial}: {exc}") from exc

    def wait_for_device(self, timeout: float) -> None:
        try:
            self._client.wait_for(self.serial, state="device", timeout=timeout)
        except self._errors as exc:
            raise AdbError(f"{self.serial} did not come online: {exc}") from exc


def list_devices(*, adb_port: int | None = None) -> dict[str, str]:
    """Every device the adb server on this machine knows, with its state (``device`` when
    ready); raises AdbError when no server answers on the port."""
    adbutils = _adbutils()
    port = adb_port or int(os.environ.get("ANDROID_ADB_SERVER_PORT", "5037"))
    try:
        # Probe first: adbutils would start a server of its own on the default port.
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError as exc:
        raise AdbError(
            f"no adb server answers on port {port}: start one with `adb -P {port} start-server`"
        ) from exc
    client = adbutils.AdbClient(host="127.0.0.1", port=port)
    try:
        return {d.serial: d.state for d in client.list()}
    except (adbutils.AdbError, OSError) as exc:
        raise AdbError(f"no adb server answers on port {port}: {exc}") from exc


def check_device(serial: str, *, adb_port: int | None = None) -> None:
    """Raise AdbError with what to fix unless the adb server lists ``serial`` as a device."""
    devices = list_devices(adb_port=adb_port)
    state = devices.get(serial)
    if state != "device":
        port = adb_port or int(os.environ.get("ANDROID_ADB_SERVER_PORT", "5037"))
        known = ", ".join(f"{s} ({st})" for s, st in sorted(devices.items())) or "none"
        raise AdbError(
            f"{serial} is {'not connected' if state is None else state} on the adb server at "
            f"port {port}; devices: {known}"
        )
