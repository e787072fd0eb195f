"""A throwaway local Ray cluster, as a user starts one: ``ray start --head --block``.

For the Ray executor's tests and ``benchmarks/bench_ray.py``. The head takes free ports (a
cluster already running on this machine is left alone) and token authentication, Ray's
default, with a token of its own: a driver must be given ``env`` to connect.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

RAY = str(Path(sys.executable).parent / "ray")


@dataclass
class RayHead:
    address: str  # the head's GCS, HOST:PORT
    client: str  # Ray Client's, ray://HOST:PORT
    env: dict[str, str]  # the head's: workers inherit it, drivers need it (the token)
    token: str


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def ray_head(cpus: int = 2, env: Mapping[str, str] | None = None) -> Iterator[RayHead]:
    """A one-node Ray cluster with ``cpus`` CPUs and ``env`` (default: this process's),
    stopped with all its processes on exit."""
    token = secrets.token_hex(32)
    head_env = {
        **(env if env is not None else os.environ),
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": token,
    }
    head_env.pop("RAY_ADDRESS", None)
    # Short: Ray's sockets live under it, and a socket's path has at most 107 bytes.
    temp = Path(tempfile.mkdtemp(prefix="gr", dir="/tmp"))
    client_port = _free_port()
    ports = {
        "--port": _free_port(),
        "--ray-client-server-port": client_port,
        "--dashboard-agent-listen-port": _free_port(),
    }
    head = subprocess.Popen(
        [
            *(RAY, "start", "--head", "--block", "--num-cpus", str(cpus)),
            *(f"{k}={v}" for k, v in ports.items()),
            *("--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}"),
        ],
        env=head_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert head.stdout is not None
        address = None
        seen: list[str] = []
        while address is None:
            line = head.stdout.readline()
            if not line:
                raise RuntimeError("ray start exited:\n" + "".join(seen))
            seen.append(line)
            if "ray start --address='" in line:
                address = line.split("--address='")[1].split("'")[0]
        client = f"ray://{address.rsplit(':', 1)[0]}:{client_port}"
        yield RayHead(address, client, head_env, token)
    finally:
        head.send_signal(signal.SIGTERM)  # --block: stopping it stops the node's processes
        head.wait(timeout=60)
        shutil.rmtree(temp, ignore_errors=True)
