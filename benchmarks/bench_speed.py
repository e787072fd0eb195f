"""The speed benchmark: every figure of docs/performance.md comes from this script.

    python benchmarks/bench_speed.py [--json FILE] [--skip-runs] [--skip-concurrency]

It measures, in one run, as the issue "Fast by design" asks:

* the default ``ghostei run`` (110 cases x oracle, gullible, random; every frame saved):
  wall time, CPU time and the run folder's size, against ``--frames none`` (and, for
  reference, ``--frames keyframes``);
* a step with its frame (the agent's decision, the device acting, the frame and its dump
  produced as a run saves them) against the bare PNG encode of that same frame, over every
  step of the reference agents on every built-in case, in one process as a worker runs them;
* ``ghostei report --format html`` over the default run: wall time, CPU time, size, and the
  first paint in headless Chromium (when Playwright and a Chromium are installed);
* 16 ``uitars`` episodes against a scripted endpoint answering after 1 s, with
  ``--concurrency 1`` and ``--concurrency 16`` (``bench_concurrency.py``).

Figures depend on the machine: the manual's were measured on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from cli_timing import run_cli

from ghostei.agents import AgentContext, build_agent
from ghostei.cases import builtin_cases
from ghostei.injection import build_injection
from ghostei.observation import encode_png
from ghostei.sim.phone import SimPhone
from ghostei.world import build_world

AGENTS = ("oracle", "gullible", "random")
HERE = Path(__file__).resolve().parent

TARGETS = {
    "run_s": ("default run, wall", 30.0, "s"),
    "run_mb": ("default run, size", 150.0, "MB"),
    "frames_ratio": ("frames-on / --frames none", 5.0, "x"),
    "step_ratio": ("median step with frame / bare encode", 2.0, "x"),
    "html_s": ("HTML report, wall", 10.0, "s"),
    "html_mb": ("HTML report, size", 6.0, "MB"),
    "first_paint_ms": ("HTML report, first paint", 1000.0, "ms"),
    "concurrency_ratio": ("concurrency 16 / 1 wall", 1 / 8, "x"),
}


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def measure_runs(tmp: Path, out: dict[str, Any]) -> Path:
    """The default run against --frames none and keyframes; returns the default run's folder."""
    runs = {}
    for mode in ("all", "none", "keyframes"):
        folder = tmp / f"run-{mode}"
        wall, cpu = run_cli("run", "--out", str(folder), "--frames", mode)
        runs[mode] = {"wall_s": wall, "cpu_s": cpu, "bytes": folder_bytes(folder)}
        print(
            f"ghostei run --frames {mode:9s} {wall:6.1f} s wall, {cpu:6.1f} s CPU, "
            f"{runs[mode]['bytes'] / 1e6:6.1f} MB",
            flush=True,
        )
    out["runs"] = runs
    out["run_s"] = runs["all"]["wall_s"]
    out["run_mb"] = runs["all"]["bytes"] / 1e6
    out["frames_ratio"] = runs["all"]["wall_s"] / runs["none"]["wall_s"]
    stored = list((tmp / "run-all" / "frames").rglob("*.png"))
    out["distinct_frames"] = len(stored)
    out["frames"] = sum(
        sum(1 for rel in json.loads(doc.read_text())["frames"] if rel)
        for doc in (tmp / "run-all").glob("episodes/*/*/trajectory.json")
    )
    print(f"frames of the default run: {out['frames']}, {len(stored)} distinct", flush=True)
    # The validity gate over the built-in cases (simulated phone, no frames), as CI runs it.
    wall, cpu = run_cli("cases", "check")
    out["cases_check_s"] = wall
    print(f"ghostei cases check      {wall:6.1f} s wall, {cpu:6.1f} s CPU", flush=True)
    out["png_kb_mean"] = sum(p.stat().st_size for p in stored) / max(1, len(stored)) / 1e3
    return tmp / "run-all"


def measure_steps(out: dict[str, Any], encode_every: int) -> None:
    """Every step of the reference agents on every built-in case, timed as a run does it."""
    steps: list[float] = []
    ratios: list[float] = []
    encodes: list[float] = []
    for case in builtin_cases():
        for name in AGENTS:
            phone = SimPhone()
            injection = build_injection(case)
            phone.reset(case.setup, seed=0)
            injection.install(phone)
            obs = phone.observe()
            ctx = AgentContext(case=case, seed=0, max_steps=20, owner=build_world(case.setup).owner)
            agent = build_agent(name, ctx)
            agent.reset(case.prompt)
            for step in range(20):
                start = time.perf_counter()
                phone.begin_step(step)
                png, _ = obs.png, obs.xml  # the frame and its dump, as a run saves them
                injection.observe(obs, step)
                action = agent.act(obs).action
                nxt = phone.act(action)
                if injection.after_step(phone, step + 1):
                    nxt = phone.observe()
                took = time.perf_counter() - start
                steps.append(took)
                if len(steps) % encode_every == 0:
                    # The bare encode of this very frame, from its pixels, outside every cache.
                    image = obs.screenshot
                    t0 = time.perf_counter()
                    again = encode_png(image)
                    bare = time.perf_counter() - t0
                    assert again == png, "a cached frame differs from its encoding"
                    encodes.append(bare)
                    ratios.append(took / bare)
                obs = nxt
                if action.terminal:
                    break
    out["steps"] = len(steps)
    out["step_ms"] = statistics.median(steps) * 1e3
    out["encode_ms"] = statistics.median(encodes) * 1e3
    out["step_ratio"] = out["step_ms"] / out["encode_ms"]
    out["step_ratio_per_step_median"] = statistics.median(ratios)
    print(
        f"step with its frame: {out['step_ms']:.2f} ms median over {len(steps)} steps; bare "
        f"encode of the frame {out['encode_ms']:.2f} ms; ratio {out['step_ratio']:.2f}x "
        f"(median of per-step ratios {out['step_ratio_per_step_median']:.2f}x)",
        flush=True,
    )


def measure_deflate(run: Path, out: dict[str, Any], limit: int = 250) -> None:
    """The deflaters behind ghostei/png.py on the run's distinct frames, in the order a worker
    meets them: ISA-L level 1 and zlib-ng level 6 on whole frames, and png.encode_frame."""
    from isal import isal_zlib
    from PIL import Image
    from zlib_ng import zlib_ng

    from ghostei import png

    order: list[Path] = []
    for doc_path in sorted(run.glob("episodes/*/*/trajectory.json")):
        for rel in json.loads(doc_path.read_text())["frames"]:
            frame = (doc_path.parent / rel).resolve()
            if rel and frame not in order:
                order.append(frame)
    images = []
    for frame in order[:limit]:
        with Image.open(frame) as image:
            images.append(image.convert("RGB"))
    rows = []
    for image in images:
        arr = np.empty((image.height, image.width * 3 + 1), np.uint8)
        arr[:, 0] = 0
        arr[:, 1:] = np.asarray(image).reshape(image.height, -1)
        rows.append(arr)
    png._BANDS = png._BandCache(png.BAND_BUDGET)  # cold, as a new worker starts
    candidates = {
        "isal level 1, whole frame": lambda i: len(isal_zlib.compress(rows[i], 1)),
        "zlib-ng level 6, whole frame": lambda i: len(zlib_ng.compress(rows[i], 6)),
        "ghostei.png (zlib-ng 6, cached bands)": lambda i: len(png.encode_png(images[i])),
    }
    figures = {}
    for name, encode in candidates.items():
        start = time.process_time()
        sizes = [encode(i) for i in range(len(images))]
        ms = (time.process_time() - start) / len(images) * 1e3
        figures[name] = {"kb": sum(sizes) / len(sizes) / 1e3, "ms": ms}
        print(f"{name:40s} {figures[name]['kb']:6.1f} kB {ms:6.2f} ms", flush=True)
    out["deflate"] = figures


def measure_html(run: Path, out: dict[str, Any]) -> None:
    page = run.parent / "report.html"
    wall, cpu = run_cli("report", str(run), "--format", "html", "--output", str(page))
    out["html_s"], out["html_cpu_s"] = wall, cpu
    out["html_mb"] = page.stat().st_size / 1e6
    print(f"HTML report: {wall:.1f} s wall, {cpu:.1f} s CPU, {out['html_mb']:.2f} MB", flush=True)
    paint = first_paint_ms(page)
    if paint is not None:
        out["first_paint_ms"] = paint
        print(f"HTML report first paint in Chromium: {paint:.0f} ms", flush=True)


def first_paint_ms(page: Path) -> float | None:
    """First contentful paint of the page in headless Chromium, if both are installed."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        chromium = None
    if chromium is None:
        print("first paint: skipped (needs playwright and a chromium)")
        return None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 900})
            tab.goto(page.as_uri(), wait_until="load")
            paint = tab.evaluate(
                "() => { const p = performance.getEntriesByName('first-contentful-paint');"
                " return p.length ? p[0].startTime : null; }"
            )
        finally:
            browser.close()
    return float(paint) if paint is not None else None


def measure_concurrency(out: dict[str, Any]) -> None:
    sys.path.insert(0, str(HERE))
    try:
        import bench_concurrency  # type: ignore[import-not-found]
    except ImportError:
        print("concurrency: skipped (benchmarks/bench_concurrency.py missing)")
        return
    figures = bench_concurrency.measure(episodes=16, latency=1.0, levels=(1, 16))
    out["concurrency"] = figures
    out["concurrency_ratio"] = figures["ratio"]
    print(f"concurrency: {figures}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--skip-runs", action="store_true", help="no whole runs, no report")
    parser.add_argument("--skip-concurrency", action="store_true")
    parser.add_argument("--encode-every", type=int, default=5, help="encode every n-th step")
    args = parser.parse_args()
    out: dict[str, Any] = {"cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_runs:
            run = measure_runs(Path(tmp), out)
            measure_deflate(run, out)
            measure_html(run, out)
        measure_steps(out, args.encode_every)
        if not args.skip_concurrency:
            measure_concurrency(out)
    print(f"\n{'measure':40s} {'value':>10s} {'target':>10s}")
    for key, (title, target, unit) in TARGETS.items():
        if key not in out:
            continue
        value = out[key]
        ok = "ok" if value <= target else "MISSED"
        print(f"{title:40s} {value:10.3g} {target:10.3g} {unit:3s} {ok}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
