"""The labelled set of trajectories, measured: its size (episodes, megabytes on disk), its
counts of true label x attack vector, and how long ``ghostei truth build`` takes; and how
long ``ghostei cases probe`` takes over the built-in cases and the paper's rows.

    python benchmarks/truth_set.py                 # builds into a temporary folder
    python benchmarks/truth_set.py --out runs/truth --workers 2
    python benchmarks/truth_set.py --json

Every figure is what the commands a user runs give: it times ``ghostei cases probe`` and
``ghostei truth build`` as processes and reads ``ghostei truth stats --format json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LABELS = ("FAS", "PAS", "TC", "BF")


def _ghostei(*args: str, check: bool = True) -> tuple[str, float]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ghostei", *args], capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    if check and done.returncode != 0:
        raise SystemExit(f"ghostei {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout, seconds


def _probe(spec: str | None, workers: int) -> dict[str, Any]:
    args = ["cases", "probe", "--format", "json", "--workers", str(workers)]
    if spec:
        args += ["--cases", spec]
    text, seconds = _ghostei(*args, check=False)
    rows = json.loads(text)["results"]
    kinds = ("passed", "failed", "unverifiable")
    statuses = {s: sum(r["status"] == s for r in rows) for s in kinds}
    cases = len({r["case"] for r in rows})
    return {"cases": cases, "trajectories": len(rows), **statuses, "seconds": round(seconds, 1)}


def measure(out: Path, workers: int) -> dict[str, Any]:
    probes = {
        "builtin": _probe(None, workers),
        "paper": _probe("paper", workers),
    }
    _, seconds = _ghostei("truth", "build", "--out", str(out), "--workers", str(workers))
    stats = json.loads(_ghostei("truth", "stats", str(out), "--format", "json")[0])
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return {
        "probes": probes,
        "build_seconds": round(seconds, 1),
        "megabytes": round(size / 1e6, 1),
        "stats": stats,
    }


def markdown(m: dict[str, Any]) -> str:
    s = m["stats"]
    lines = [
        "| suite | cases | trajectories | as labelled | mismatched | unverifiable | seconds |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, p in m["probes"].items():
        lines.append(
            f"| {name} | {p['cases']} | {p['trajectories']} | {p['passed']} | {p['failed']} "
            f"| {p['unverifiable']} | {p['seconds']} |"
        )
    lines += ["", "| vector | " + " | ".join(LABELS) + " | all |", "| --- |" + " ---: |" * 5]
    for vector, row in s["by_vector"].items():
        cells = [row[k] for k in LABELS]
        lines.append(f"| {vector} | " + " | ".join(map(str, cells)) + f" | {sum(cells)} |")
    totals = [s["by_label"][k] for k in LABELS]
    lines.append("| all | " + " | ".join(map(str, totals)) + f" | {s['episodes']} |")
    shares = [f"{100 * s['share'][k]:.0f}%" for k in LABELS]
    lines.append("| share | " + " | ".join(shares) + " | |")
    lines += [
        "",
        f"{s['episodes']} episodes of {s['cases']} cases ({s['by_suite']}), "
        f"{m['megabytes']} MB with every frame, built in {m['build_seconds']} s.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="Keep the set here.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ghostei-truth-") as tmp:
        out = args.out or Path(tmp) / "truth"
        m = measure(out, args.workers)
    print(json.dumps(m, indent=2) if args.json else markdown(m))


if __name__ == "__main__":
    main()
