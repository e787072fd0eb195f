"""A served phone under heavy shell use (issue 32): no client can wedge it (prints figures).

    python benchmarks/served_writes.py [--writes 400,1200,10000] [--hold-writes 100000]
                                       [--limit 600] [--skip-timeout]

Serves one phone (``ghostei device serve``, in a subprocess, so its memory can be read) to a
private adb server and measures, through the real adb client:

* file writes: one line of N writes (``echo>fK;`` in a fresh folder) piped into ``adb shell``
  (a line of 10,000 is longer than the 64 KiB a request to the adb server may be), timed;
* a second client's answer: while one client runs ``sh`` on a script of ``--hold-writes``
  writes (each of 1,000 files over and over), how long ``adb shell echo ok`` takes;
* a 10 MB line with no newline into the interactive shell (``adb shell`` with no command,
  stdin piped; and with a pty, ``adb shell -tt``, then Enter): its answer and how much the
  server's memory grew (peak RSS over what it was before). With a pty the adb client sends
  what it reads a byte a packet, so that line is 10 million packets: it takes a minute, the
  phone answering other clients meanwhile;
* ``--episode-timeout 5`` while the program's command (the same script) runs: how long the
  episode took past its timeout, and how it ended.

A measurement that runs past ``--limit`` seconds is reported as such and its phone replaced
(the old code held the phone for the whole line, so the next figure would wait for it).
Needs adb (the external extra); uses a private HOME and adb server.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ghostei.cases import select_cases
from ghostei.integrations.external import execute_external
from ghostei.integrations.external.adb import AdbServer, adb_binary, adb_server
from ghostei.rundir import RunDir
from ghostei.runner import RunConfig, new_manifest

TIMEOUT = 5.0  # the --episode-timeout of the timeout measurement
LINE_BYTES = 10 * 1024 * 1024


class Phone:
    """``ghostei device serve`` with one phone, registered with ``adb``'s server."""

    def __init__(self, adb: AdbServer, base_port: int) -> None:
        self.adb = adb
        self.serial = f"emulator-{base_port}"
        self.process = subprocess.Popen(
            [
                *(sys.executable, "-c", "from ghostei.cli import main; main()"),
                *("device", "serve", "--count", "1", "--base-port", str(base_port)),
                *("--adb-port", str(adb.port), "--cases", "1"),
            ],
            env=adb.env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        while "ready" not in (line := self.process.stdout.readline()):
            if not line:
                raise RuntimeError("ghostei device serve exited early")

    def shell(self, *args: str, stdin: bytes = b"", timeout: float = 600) -> tuple[int, bytes]:
        done = self.adb.adb("shell", *args, serial=self.serial, stdin=stdin, timeout=timeout)
        return done.returncode, done.stdout + done.stderr

    def rss(self) -> int:
        """The server's resident memory now, in bytes."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@contextmanager
def serving(adb: AdbServer, base_port: int) -> Iterator[Phone]:
    phone = Phone(adb, base_port)
    try:
        yield phone
    finally:
        phone.close()


def writes_line(folder: str, count: int) -> str:
    """One command line of ``count`` file writes (under the 128 KiB an argument may have)."""
    return f"cd {folder};" + "".join(f"echo>f{k};" for k in range(count))


def hold_script(count: int) -> str:
    """A script of ``count`` writes, each of 1,000 files in turn: it runs a long time."""
    return "".join(f"echo x >/sdcard/hold/f{k % 1000}\n" for k in range(count))


def measure_writes(adb: AdbServer, base_port: int, counts: list[int], limit: float) -> None:
    phone = Phone(adb, base_port)
    try:
        for count in counts:
            folder = f"/sdcard/w{count}"
            phone.shell(f"mkdir {folder}")
            started = time.perf_counter()
            try:
                line = writes_line(folder, count).encode() + b"\n"
                status, out = phone.shell(stdin=line, timeout=limit)
            except subprocess.TimeoutExpired:
                print(f"{count:>6} writes in one line: over {limit:.0f} s (stopped)")
                phone.close()
                phone = Phone(adb, base_port)
                continue
            seconds = time.perf_counter() - started
            _, listing = phone.shell(f"ls {folder} | wc -l")
            print(
                f"{count:>6} writes in one line: {seconds:7.2f} s "
                f"({1e6 * seconds / count:6.0f} us a write; exit {status}, "
                f"{listing.decode().strip()} files) {out[:80]!r}"
            )
    finally:
        phone.close()


def measure_concurrent_echo(adb: AdbServer, base_port: int, hold: int, limit: float) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".sh") as script, serving(adb, base_port) as phone:
        script.write(hold_script(hold))
        script.flush()
        phone.shell("mkdir /sdcard/hold")
        adb.adb("push", script.name, "/sdcard/hold.sh", serial=phone.serial)
        long_line = subprocess.Popen(
            [
                str(adb.binary),
                "-P",
                str(adb.port),
                "-s",
                phone.serial,
                "shell",
                "sh /sdcard/hold.sh",
            ],
            env=adb.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            started = time.perf_counter()
            time.sleep(1.0)  # the long line is running
            asked = time.perf_counter()
            try:
                status, out = phone.shell("echo ok", timeout=limit)
            except subprocess.TimeoutExpired:
                print(f"another client's echo ok while {hold} writes run: over {limit:.0f} s")
                return
            answered = time.perf_counter()
            running = long_line.poll() is None
            long_line.wait(timeout=limit)
            finished = time.perf_counter()
            print(
                f"another client's echo ok while {hold} writes run: "
                f"{answered - asked:.3f} s ({out.strip()!r}, exit {status}); the long line "
                f"{'was still running' if running else 'had ended'} and took "
                f"{finished - started:.1f} s"
            )
        finally:
            long_line.kill()
            long_line.wait()


def measure_long_line(adb: AdbServer, base_port: int, limit: float, *args: str) -> None:
    with serving(adb, base_port) as phone:
        time.sleep(1.0)
        before = phone.rss()
        peak = before
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, phone.rss())
                time.sleep(0.02)

        sampler = threading.Thread(target=sample)
        sampler.start()
        started = time.perf_counter()
        try:
            # Piped, the line ends with stdin; a terminal's line waits for its Enter (^D on a
            # line that is not empty ends nothing, as in mksh), so with a pty one is typed.
            end = b"\r" if args else b""
            status, out = phone.shell(*args, stdin=b"a" * LINE_BYTES + end, timeout=limit)
            result = f"exit {status}, {out[:90]!r}"
        except subprocess.TimeoutExpired:
            result = f"no answer in {limit:.0f} s"
        seconds = time.perf_counter() - started
        done.set()
        sampler.join()
        how = "with a pty" if args else "piped"
        print(
            f"a 10 MB line into the interactive shell ({how}): {seconds:.2f} s, {result}; server "
            f"memory {before / 2**20:.0f} MB -> peak {peak / 2**20:.0f} MB "
            f"(+{(peak - before) / 2**20:.0f} MB)"
        )


def measure_timeout(hold: int, base_port: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-timeout-") as tmp:
        root = Path(tmp)
        (root / "hold.sh").write_text(hold_script(hold))
        program = root / "agent.sh"
        program.write_text(
            "adb shell mkdir /sdcard/hold\n"
            f"adb push {root / 'hold.sh'} /sdcard/hold.sh >/dev/null\n"
            "adb shell sh /sdcard/hold.sh\n"
            "sleep 600\n"
        )
        config = RunConfig(
            agents=("hold",),
            agent_cmd=f"sh {program}",
            width=540,
            height=1200,
            episode_timeout=TIMEOUT,
        )
        cases = select_cases("1")
        run = RunDir(root / "run")
        run.create(new_manifest(config, cases), cases)
        [record] = execute_external(run, config, cases, base_port=base_port)
        print(
            f"--episode-timeout {TIMEOUT:g} while the program's command ({hold} writes) runs: "
            f"the episode took {record.seconds:.1f} s, {record.seconds - TIMEOUT:.1f} s past "
            f"its timeout (ended: {record.ended})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writes", default="400,1200,10000")
    parser.add_argument("--hold-writes", type=int, default=100_000)
    parser.add_argument("--limit", type=float, default=600.0)
    parser.add_argument("--base-port", type=int, default=5680)
    parser.add_argument("--skip-timeout", action="store_true")
    args = parser.parse_args()
    counts = [int(c) for c in args.writes.split(",") if c]
    with tempfile.TemporaryDirectory(prefix="bench-writes-") as home:
        os.environ["HOME"] = home  # adb's keys and the console token stay in here
        with adb_server(adb_binary(), Path(home)) as adb:
            measure_writes(adb, args.base_port, counts, args.limit)
            measure_concurrent_echo(adb, args.base_port, args.hold_writes, args.limit)
            measure_long_line(adb, args.base_port, args.limit)
            measure_long_line(adb, args.base_port, args.limit, "-tt")
        if not args.skip_timeout:
            measure_timeout(args.hold_writes, args.base_port)


if __name__ == "__main__":
    main()
