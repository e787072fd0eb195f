"""Timing a ``ghostei`` command in a fresh process, for the benchmark scripts."""

from __future__ import annotations

import resource
import subprocess
import sys
import time


def run_cli(*args: str) -> tuple[float, float]:
    """Run ``ghostei ARGS`` in a new process: (wall seconds, CPU seconds of it and its
    workers). Fails if the command does."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "from ghostei.cli import main; main()", *args],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
