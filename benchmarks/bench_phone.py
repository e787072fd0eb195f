"""Benchmark of the simulated phone and of the default run (not a test: prints figures).

    python benchmarks/bench_phone.py [--skip-run]

Reports the median time of one step (act + observe with the PNG encoded), of observe without
a screenshot, of encoding the same frame as PNG alone, and the wall time of the default
``ghostei run`` (all built-in cases, agents oracle, gullible and random) and of
``ghostei run --agent oracle --agent gullible`` with one and with two workers.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

from isal import isal_zlib

from ghostei.actions import Action
from ghostei.cases import builtin_cases
from ghostei.observation import encode_png
from ghostei.sim.phone import SimPhone


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip-run", action="store_true", help="skip the default-run timing")
    parser.add_argument("--repeat", type=int, default=40)
    args = parser.parse_args()

    case = next(c for c in builtin_cases() if c.id == 1)
    phone = SimPhone()
    phone.reset(case.setup)
    phone.act(Action(action_type="open_app", app_name="Booking"))
    # A step that changes the screen back and forth: open a reservation, go back.
    detail = next(e for e in phone.observe().elements if e.text == "Hotel Lumen")
    toggle = [
        Action(action_type="click", x=detail.center[0], y=detail.center[1]),
        Action(action_type="navigate_back"),
    ]
    i = 0

    def step() -> object:
        nonlocal i
        obs = phone.act(toggle[i % 2])
        i += 1
        return obs.png

    step_ms = median_ms(step, args.repeat)
    observe_ms = median_ms(phone.observe, args.repeat * 5)
    # Encode the very frames the step produced (both screens of the toggle), alone.
    frames = [phone.act(a).screenshot for a in toggle]
    png_ms = statistics.median(
        median_ms(lambda f=f: encode_png(f), args.repeat // 2) for f in frames
    )
    render_ms = median_ms(lambda: phone.observe().screenshot, args.repeat)
    # The deflate behind encode_png (ISA-L) against zlib, on the same rows of one frame.
    rgb = frames[0]
    rows = b"".join(
        b"\x00" + row
        for row in (
            rgb.tobytes()[y * rgb.width * 3 : (y + 1) * rgb.width * 3] for y in range(rgb.height)
        )
    )
    for name, deflate in (("zlib", zlib.compress), ("isal", isal_zlib.compress)):
        ms = median_ms(lambda d=deflate: d(rows, 1), args.repeat // 2)
        print(f"deflate level 1, {name}:     {ms:7.2f} ms, {len(deflate(rows, 1)) / 1e3:.0f} KB")
    print(f"step (act + observe + PNG): {step_ms:7.2f} ms median")
    print(f"observe without screenshot: {observe_ms:7.2f} ms median")
    print(f"observe + render, no PNG:   {render_ms:7.2f} ms median")
    print(f"PNG encoding of one frame:  {png_ms:7.2f} ms median")
    print(f"step / PNG encoding:        {step_ms / png_ms:7.2f}x (target <= 1.5x)")
    if args.skip_run:
        return
    n = len(builtin_cases())
    wall, size = timed_run([])
    bare, _ = timed_run(["--no-frames"])
    print(f"default `ghostei run`:      {wall:7.2f} s wall, {size / 1e6:.0f} MB ({3 * n} episodes)")
    print(f"  the same, --no-frames:    {bare:7.2f} s wall ({wall / bare:.1f}x faster)")
    for workers in ("1", "2"):
        wall, _ = timed_run(["--agent", "oracle", "--agent", "gullible", "--workers", workers])
        print(f"oracle + gullible, {workers} worker(s): {wall:7.2f} s wall ({2 * n} episodes)")


def timed_run(options: list[str]) -> tuple[float, int]:
    """Wall time of one ``ghostei run`` in a fresh process, and the run folder's size."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-c", "from ghostei.cli import main; main()", "run"]
        out = Path(tmp) / "run"
        start = time.perf_counter()
        subprocess.run(
            [*command, "--out", str(out), *options], check=True, stdout=subprocess.DEVNULL
        )
        wall = time.perf_counter() - start
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        return wall, size


if __name__ == "__main__":
    main()
