"""Fixtures for tests that reach served phones through the real adb client.

The ``adb`` binary comes with the adbutils wheel (the ``test`` extra installs it); tests that
need it carry ``requires_adb``. Every test gets its own adb server on a free port (never 5037)
with a private ``HOME`` (adb keeps its keys there and ``adb emu`` reads the console token from
it), told not to scan the default emulator ports, and killed when the test ends. Phones take
free console ports in 5600-5698, picked at random so that parallel runs rarely meet.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from ghostei.integrations.external.adb import AdbServer as _AdbServer

try:
    import adbutils

    ADB: str | None = str(Path(adbutils.__file__).parent / "binaries" / "adb")
    if not os.access(ADB, os.X_OK):
        ADB = None
except ImportError:
    ADB = None

requires_adb = pytest.mark.skipif(
    ADB is None, reason="the adb binary ships with adbutils: pip install -e '.[test]'"
)

PHONE_PORTS = range(5600, 5699)


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        # As the servers bind: a port whose old connections linger in TIME_WAIT is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_base_port(count: int = 1) -> int:
    """An even console port in 5600-5698 whose ``2 * count`` ports are all free."""
    candidates = [p for p in PHONE_PORTS if p % 2 == 0 and p + 2 * count - 1 < PHONE_PORTS.stop]
    random.shuffle(candidates)
    for base in candidates:
        if all(_bindable(p) for p in range(base, base + 2 * count)):
            return base
    raise RuntimeError("no free phone ports in 5600-5698")


def free_port() -> int:
    """A free TCP port chosen by the kernel."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class AdbServer(_AdbServer):
    """A private adb server for one test (its own child process on a free port, never
    5037, scanning no emulator ports), and the adb client pointed at it."""

    def __init__(self, home: Path) -> None:
        assert ADB is not None
        super().__init__(Path(ADB), home)


@contextlib.contextmanager
def private_adb_server(tmp_path: Path) -> Iterator[AdbServer]:
    """A running private adb server with ``HOME`` at ``tmp_path/home``; stopped on exit."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    server = AdbServer(home)
    server.start()
    try:
        yield server
    finally:
        server.kill()


def lines(output: bytes) -> Sequence[str]:
    """Non-empty lines of a command's output."""
    return [line for line in output.decode("utf-8", "replace").splitlines() if line.strip()]


@contextlib.contextmanager
def served_phones(
    env: Mapping[str, str], adb_port: int, count: int, cases: str, screen: str = "540x1200"
) -> Iterator[list[str]]:
    """``ghostei device serve`` in a subprocess with ``count`` phones registered with the adb
    server on ``adb_port``: their serials once it says it is ready; stopped on exit."""
    base = free_base_port(count)
    serve = subprocess.Popen(
        [
            *(sys.executable, "-c", "from ghostei.cli import main; main()"),
            *("device", "serve", "--count", str(count), "--base-port", str(base)),
            *("--adb-port", str(adb_port), "--screen", screen, "--cases", cases),
        ],
        env=dict(env),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stdout is not None
        seen: list[str] = []
        while not seen or "ready" not in seen[-1]:
            line = serve.stdout.readline()
            assert line, f"serve exited early: {''.join(seen)}"
            seen.append(line)
        yield [f"emulator-{base + 2 * i}" for i in range(count)]
    finally:
        serve.terminate()
        serve.wait(timeout=10)
