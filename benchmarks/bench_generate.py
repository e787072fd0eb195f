"""Cases at scale: generation time, the reference agents on generated cases, interval widths.

1. ``ghostei cases generate --per-cell N`` (default 11: 2,156 cases over the 196 cells of
   the threat matrix), timed as a user runs it (a fresh process, the gate included), with
   the generator's own report (discards and their reasons).
2. oracle and gullible over the first ``--run`` (500) generated cases, without frames:
   oracle's TC, gullible's VR and exposure.
3. The width of the 95 % interval of VR per matrix cell (``report --by cell``: Wilson's, over
   the cell's N - BF) for oracle, gullible and random on the 110 built-in cases against the
   generated ones.

    python benchmarks/bench_generate.py [--per-cell 11] [--run 500] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ghostei.cases import builtin_cases, load_cases
from ghostei.metrics import group_records
from ghostei.report.tables import Scored
from ghostei.rundir import RunDir

CLI = [sys.executable, "-c", "from ghostei.cli import main; main()"]


def cli(*args: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"ghostei {' '.join(args)} failed:\n{done.stderr}")
    return seconds, done.stdout + done.stderr


def run(cases: str, out: Path, *agents: str) -> float:
    flags = [a for agent in agents for a in ("--agent", agent)]
    seconds, _ = cli(
        "run", *flags, "--cases", cases, "--no-frames", "--workers", "2", "--out", str(out)
    )
    return seconds


def vr_widths(out: Path) -> dict[str, dict[str, Any]]:
    """Per agent, over the matrix cells where its VR is defined: the cells' median N - BF,
    and the median and widest 95 % interval of VR as the report gives it (Wilson's)."""
    rundir = RunDir(out)
    cases = {c.id: c for c in rundir.cases_faced()}
    found: dict[str, dict[str, list[float]]] = {}
    for group in group_records(rundir.records(), cases, "cell").values():
        for agent in sorted({r.agent for r in group}):
            mine = [r for r in group if r.agent == agent and r.label != "error"]
            n = sum(r.label in ("TC", "FAS", "PAS") for r in mine)  # N - BF
            ci = Scored.of(mine).ci.get("vr")
            if n == 0 or ci is None:
                continue  # every episode a benign failure: VR is undefined
            entry = found.setdefault(agent, {"n": [], "width": []})
            entry["n"].append(n)
            entry["width"].append(ci[1] - ci[0])
    return {
        a: {
            "cells": len(e["n"]),
            "median n": statistics.median(e["n"]),
            "width median": round(statistics.median(e["width"]), 3),
            "width max": round(max(e["width"]), 3),
        }
        for a, e in found.items()
    }


def rates(out: Path) -> dict[str, dict[str, Any]]:
    _, text = cli("report", str(out), "--format", "json", "--by", "none")
    data = json.loads(text[text.index("{") :])
    return {
        a: {k: m[k] for k in ("n", "tc", "vr", "exposed", "errors")}
        for a, m in data["agents"].items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-cell", type=int, default=11)
    parser.add_argument("--run", type=int, default=500)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "suite"
        seconds, text = cli(
            "cases",
            "generate",
            "--per-cell",
            str(args.per_cell),
            "--workers",
            "2",
            "--out",
            str(suite),
        )
        generated = load_cases(suite)
        report = json.loads((suite / "_generation.json").read_text())
        result["generate"] = {"seconds": round(seconds, 1), "cases": len(generated), **report}
        print(text)
        first = generated[: args.run]
        ids = ",".join(str(c.id) for c in first)  # generated ids are digests: no ranges
        run_dir = Path(tmp) / "reference"
        result["reference_seconds"] = round(run(f"{suite}:{ids}", run_dir, "oracle", "gullible"), 1)
        result["reference"] = rates(run_dir)
        widths: dict[str, Any] = {}
        for name, spec in (("built-in", f"1-{len(builtin_cases())}"), ("generated", str(suite))):
            out = Path(tmp) / f"widths-{name}"
            run(spec, out, "oracle", "gullible", "random")
            widths[name] = vr_widths(out)
        result["vr_interval_widths"] = widths
    print(json.dumps(result, indent=1))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
