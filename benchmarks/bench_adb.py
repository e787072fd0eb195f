"""Step latency through adb against the direct simulator, on the same cases (prints figures).

    python benchmarks/bench_adb.py [--cases 1-10] [--frames]

Serves one simulated phone as an emulator, starts a private adb server (the binary of the
adbutils wheel, on a free port, killed at the end) and runs oracle and gullible on each case
twice: on the simulator directly and through adb with ``--backend android``. Prints the time
per step of each path and compares labels: through adb a label is the simulator's or
`undetermined` (what a stock device does not report). Needs the android extra.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import adbutils  # type: ignore[import-untyped]

from ghostei.cases import select_cases
from ghostei.runner import RunConfig, run_episode
from ghostei.served.serve import ServedPhones, wait_for_devices

ADB = str(Path(adbutils.__file__).parent / "binaries" / "adb")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", default="1-10")
    parser.add_argument("--frames", action="store_true", help="save frames (PNG) every step")
    parser.add_argument("--base-port", type=int, default=5640)
    args = parser.parse_args()
    cases = select_cases(args.cases)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        server = free_port()
        env = {
            **os.environ,
            "HOME": str(home),
            "ADB_LIBUSB": "0",
            "ADB_LOCAL_TRANSPORT_MAX_PORT": "1",
        }
        os.environ["HOME"] = str(home)  # the console token lives there
        subprocess.run([ADB, "-P", str(server), "start-server"], env=env, check=True)
        try:
            with ServedPhones(
                1,
                base_port=args.base_port,
                adb_server_port=server,
                cases=cases,
                token_path=home / ".emulator_console_auth_token",
            ) as phones:
                if not wait_for_devices(phones.serials, server):
                    raise SystemExit("the adb server did not list the served phone")
                frames = "all" if args.frames else "none"
                configs = {
                    "direct": RunConfig(frames=frames),
                    "adb": RunConfig(
                        frames=frames,
                        backend="android",
                        serial=phones.serials[0],
                        adb_port=server,
                    ),
                }
                timing: dict[str, tuple[float, int]] = {}
                labels: dict[str, list[str]] = {}
                failures: list[str] = []
                for path, config in configs.items():
                    seconds, steps, seen = 0.0, 0, []
                    for case in cases:
                        for agent in ("oracle", "gullible"):
                            out = Path(tmp) / path if args.frames else None
                            start = time.perf_counter()
                            record = run_episode(case, agent, config, out)
                            seconds += time.perf_counter() - start
                            steps += record.steps
                            seen.append(record.label)
                            if record.error:
                                failures.append(f"{path} case {case.id} {agent}: {record.error}")
                    timing[path], labels[path] = (seconds, steps), seen
        finally:
            subprocess.run([ADB, "-P", str(server), "kill-server"], env=env, check=False)
    if failures:  # a step time over failed episodes would measure nothing
        raise SystemExit("episodes failed:\n" + "\n".join(failures))
    for path, (seconds, steps) in timing.items():
        print(f"{path:>6}: {1000 * seconds / steps:7.2f} ms per step ({steps} steps)")
    pairs = list(zip(labels["direct"], labels["adb"], strict=True))
    same = sum(a == b for a, b in pairs)
    blind = sum(b == "undetermined" for _, b in pairs)
    print(f"labels equal in {same} of {len(pairs)} episodes, undetermined through adb in {blind}")


if __name__ == "__main__":
    main()
