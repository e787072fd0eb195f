"""Simulated phones served as Android emulators: adbd and the console per phone, on a thread each.

Phone ``n`` takes the ports an emulator started with ``-port 5554+2n`` takes: the console on
``base_port + 2n`` and adbd on the next (odd) port; its serial is ``emulator-<console port>``.
Each phone announces itself to the adb server as the emulator does, by sending
``host:emulator:<adbd port>`` to the server's port (``--adb-port``, else
``ANDROID_ADB_SERVER_PORT``, else 5037). An adb server started later finds phones on the default
ports by itself (it scans 5555-5585 at start); phones on other ports need ``adb connect
127.0.0.1:<adbd port>`` then, or a restart of ``ghostei device serve``.

Snapshots stand for the AVD snapshots a user prepares with the app data of each case: every
phone starts with ``ghostei-base`` (the default world) and ``ghostei-case-<id>`` (each case's
world), and the console saves, loads, lists and deletes them. Loading one gives the phone that
world with a fresh OS (no app open, no overlay, no notification) and an empty event log.

A served phone reports what a stock emulator with our helper app reports: its logcat prints
only the helper's overlay events, its browser loads, types into and submits the phishing pages
the helper's broadcast names over HTTP (:mod:`.network`), and the SMS provider lists what it
sent. ``full_events`` makes logcat print every event of the phone's log too, for debugging.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..cases import Case, builtin_cases
from ..injection import build_injection
from ..sim.navigation import DEFAULT_NAVIGATION
from ..sim.phone import SimPhone
from ..world import build_world
from .adbd import AdbDaemon
from .console import EmulatorConsole, SnapshotInfo
from .network import PhoneNetwork
from .shell import AndroidShell
from .vfs import PhoneFS

DEFAULT_CONSOLE_PORT = 5554
DEFAULT_ADB_SERVER_PORT = 5037
BASE_SNAPSHOT = "ghostei-base"


def case_snapshot_name(case_id: int) -> str:
    """The snapshot that holds a case's world."""
    return f"ghostei-case-{case_id}"


def resolve_adb_server_port(port: int | None = None) -> int:
    """The adb server's port: the given one, else ``ANDROID_ADB_SERVER_PORT``, else 5037."""
    if port is not None:
        return port
    value = os.environ.get("ANDROID_ADB_SERVER_PORT", "")
    return int(value) if value.isdigit() else DEFAULT_ADB_SERVER_PORT


@dataclass(frozen=True)
class _Snapshot:
    world_json: str  # immutable: loading parses a fresh copy
    saved: datetime
    uptime: float  # seconds the phone had been up when saved


class ServedPhone:
    """One simulated phone with its adbd and console.

    Its logcat prints the helper app's events only, unless ``full_events``; its ``network``
    is how its browser reaches the phishing server. ``navigation`` is the system navigation
    it starts each episode (each snapshot load) with: gestures, buttons or two-button.
    """

    def __init__(
        self,
        console_port: int,
        *,
        width: int = 1080,
        height: int = 2400,
        host: str = "127.0.0.1",
        token_path: Path | None = None,
        snapshots: Iterable[tuple[str, str]] = (),
        full_events: bool = False,
        navigation: str = DEFAULT_NAVIGATION,
    ) -> None:
        self.console_port = console_port
        self.adb_port = console_port + 1
        self.serial = f"emulator-{console_port}"
        self.phone = SimPhone(width, height, navigation)
        self.fs = PhoneFS(self.phone)
        # The phone is not thread-safe: adbd's streams, the console and the file system all
        # take this one lock around every use of it.
        self.lock = self.fs.lock
        self.network = PhoneNetwork(self.phone, fs=self.fs)
        self.shell = AndroidShell(
            self.phone,
            self.fs,
            serial=self.serial,
            full_events=full_events,
            network=self.network,
        )
        self._started = time.monotonic()
        self._snapshots: dict[str, _Snapshot] = {
            name: _Snapshot(world_json, datetime.now(), 0.0) for name, world_json in snapshots
        }
        self.adbd = AdbDaemon(self.shell, self.fs, self.lock, port=self.adb_port, host=host)
        try:
            self.console = EmulatorConsole(
                self, port=console_port, host=host, token_path=token_path
            )
        except OSError:
            self.adbd.close()
            raise

    @property
    def avd_name(self) -> str:
        """What ``avd name`` answers."""
        return f"GhostEI_Sim_{self.console_port}"

    def start(self) -> ServedPhone:
        """Start answering on both ports."""
        self.adbd.start()
        self.console.start()
        return self

    def close(self) -> None:
        """Stop both servers."""
        self.console.close()
        self.adbd.close()

    # ----- what the console drives ------------------------------------------------------------

    def receive_sms(self, sender: str, body: str) -> None:
        """An incoming SMS, as the modem delivers it: the inbox and a heads-up."""
        with self.lock:
            self.phone.receive_sms(sender, body)

    def save_snapshot(self, name: str) -> None:
        """Keep the phone's world (its clock at the present time) under ``name``."""
        with self.lock:
            world = self.phone.world.model_dump(mode="json")
            world["clock"] = self.phone.now()
            uptime = time.monotonic() - self._started
            self._snapshots[name] = _Snapshot(json.dumps(world), datetime.now(), uptime)

    def load_snapshot(self, name: str) -> bool:
        """Give the phone a snapshot's world with a fresh OS and event log; False if unknown."""
        with self.lock:
            snapshot = self._snapshots.get(name)
            if snapshot is None:
                return False
            self.phone.reset(json.loads(snapshot.world_json))
            return True

    def delete_snapshot(self, name: str) -> bool:
        """Forget a snapshot; False if unknown."""
        with self.lock:
            return self._snapshots.pop(name, None) is not None

    def list_snapshots(self) -> list[SnapshotInfo]:
        """The snapshots, oldest first, as ``avd snapshot list`` shows them."""
        with self.lock:
            items = list(self._snapshots.items())
        return [
            SnapshotInfo(
                name,
                len(snap.world_json),
                snap.saved.strftime("%Y-%m-%d %H:%M:%S"),
                _clock(snap.uptime),
            )
            for name, snap in items
        ]


def _clock(seconds: float) -> str:
    whole = int(seconds)
    millis = int((seconds - whole) * 1000)
    return f"{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}.{millis:03d}"


def case_snapshots(cases: Sequence[Case]) -> list[tuple[str, str]]:
    """``ghostei-base`` and one ``ghostei-case-<id>`` per case, each a world as JSON.

    A case's snapshot holds what its injection plants before the episode too (a static
    seed, the phishing pages its browser can show): the AVD snapshot a user prepares per case
    has the same.
    """
    snapshots = [(BASE_SNAPSHOT, build_world(None).model_dump_json())]
    phone = SimPhone()
    for case in cases:
        phone.reset(case.setup)
        build_injection(case).install(phone)
        snapshots.append((case_snapshot_name(case.id), phone.world.model_dump_json()))
    return snapshots


class ServedPhones:
    """``count`` simulated phones served as emulators until ``close()`` (or the ``with`` ends).

    ``cases`` (default: the built-in cases) give the pre-made snapshots. ``register`` announces
    each phone to the adb server; ``registered`` tells which announcements reached a server.
    ``full_events`` makes each phone's logcat print every event of its log, not only the
    helper app's (``ghostei device serve --full-events``); ``navigation`` is the phones'
    system navigation (``--navigation``).
    """

    def __init__(
        self,
        count: int = 1,
        *,
        base_port: int = DEFAULT_CONSOLE_PORT,
        adb_server_port: int | None = None,
        width: int = 1080,
        height: int = 2400,
        cases: Sequence[Case] | None = None,
        host: str = "127.0.0.1",
        token_path: Path | None = None,
        register: bool = True,
        full_events: bool = False,
        navigation: str = DEFAULT_NAVIGATION,
    ) -> None:
        if count < 1:
            raise ValueError("count must be at least 1")
        if not 1024 <= base_port <= 65534 - 2 * count:
            raise ValueError(f"base port {base_port} leaves no room for {count} phone(s)")
        self.server_port = resolve_adb_server_port(adb_server_port)
        snapshots = case_snapshots(builtin_cases() if cases is None else cases)
        self.phones: list[ServedPhone] = []
        try:
            for n in range(count):
                phone = ServedPhone(
                    base_port + 2 * n,
                    width=width,
                    height=height,
                    host=host,
                    token_path=token_path,
                    snapshots=snapshots,
                    full_events=full_events,
                    navigation=navigation,
                )
                self.phones.append(phone.start())
        except OSError:
            self.close()
            raise
        self.registered: list[bool] = []
        if register:
            self.registered = [register_emulator(p.adb_port, self.server_port) for p in self.phones]

    @property
    def serials(self) -> list[str]:
        """``emulator-5554``, ``emulator-5556``, …"""
        return [p.serial for p in self.phones]

    def close(self) -> None:
        """Stop every phone's servers (the adb server then drops them)."""
        for phone in self.phones:
            phone.close()

    def __enter__(self) -> ServedPhones:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _host_request(server_port: int, request: str, timeout: float = 2.0) -> bytes | None:
    """Send one request to the adb server's smart socket and read until it hangs up."""
    data = request.encode()
    try:
        with socket.create_connection(("127.0.0.1", server_port), timeout=timeout) as sock:
            sock.sendall(b"%04x" % len(data) + data)
            reply = bytearray()
            while chunk := sock.recv(65536):
                reply += chunk
            return bytes(reply)
    except OSError:
        return None


def register_emulator(adb_port: int, server_port: int) -> bool:
    """Tell the adb server an emulator's adbd listens on ``adb_port`` (it connects back)."""
    # The server answers nothing and closes; it then connects to adb_port by itself.
    return _host_request(server_port, f"host:emulator:{adb_port}") is not None


def adb_devices(server_port: int) -> dict[str, str]:
    """Serial → state, as the adb server lists its devices (empty if no server answers)."""
    reply = _host_request(server_port, "host:devices")
    if not reply or not reply.startswith(b"OKAY"):
        return {}
    body = reply[8 : 8 + int(reply[4:8], 16)].decode("utf-8", "replace")
    devices: dict[str, str] = {}
    for line in body.splitlines():
        serial, _, state = line.partition("\t")
        if serial:
            devices[serial] = state
    return devices


def wait_for_devices(serials: Sequence[str], server_port: int, timeout: float = 10.0) -> bool:
    """Wait until the adb server lists every serial as ``device``; False on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        devices = adb_devices(server_port)
        if all(devices.get(s) == "device" for s in serials):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
