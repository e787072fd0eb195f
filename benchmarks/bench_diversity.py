"""How varied and how well held out a generated suite is, for two seeds.

For each seed, ``ghostei cases generate --per-cell N --seed S`` (default 11: 2,156 cases) is
timed as a user runs it (a fresh process, the gate included), and the suite's figures are
printed (``ghostei.cases.diversity``):

- distinct task texts, attack texts and overlay titles per 100 cases: the mean number among
  100 cases drawn at random (200 seeded draws), overlay titles among 100 overlay cases; and
  the suite's totals;
- duplicate groups (identical prompt, attack text and checks) and near-duplicate groups (task
  and attack text equal once case, digits and punctuation are taken out);
- cross-split texts: task texts and attack texts (normalised) found in both dev and test;
- agent-visible texts with an unfilled slot (``{...}``);
- the cases kept and discarded by the gate, and why;

and across the two seeds: ids that name different content (collisions), and ids shared
(the same case drawn by both).

    python benchmarks/bench_diversity.py [--per-cell 11] [--seeds 0,1] [--json FILE]
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

from ghostei.cases import load_cases
from ghostei.cases.diversity import diversity, id_collisions

CLI = [sys.executable, "-c", "from ghostei.cli import main; main()"]


def generate(per_cell: int, seed: int, out: Path) -> float:
    """Generate a suite into ``out``; the wall-clock seconds it took."""
    started = time.perf_counter()
    options = ["--per-cell", str(per_cell), "--seed", str(seed), "--workers", "2"]
    done = subprocess.run(
        [*CLI, "cases", "generate", *options, "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1):  # 1: some cell short, still a suite to measure
        raise SystemExit(f"generate --seed {seed} failed:\n{done.stderr}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-cell", type=int, default=11)
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    result: dict[str, Any] = {"per_cell": args.per_cell, "seeds": {}}
    suites = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            out = Path(tmp) / f"seed{seed}"
            seconds = generate(args.per_cell, seed, out)
            cases = load_cases(out)
            report = json.loads((out / "_generation.json").read_text())
            result["seeds"][seed] = {
                "seconds": round(seconds, 1),
                "kept": report["cases"],
                "discarded": sum(report["discarded"].values()),
                "discard_reasons": report["discarded"],
                "splits": report["splits"],
                "short": report["short"],
                **diversity(cases).to_json(),
            }
            suites.append(cases)
            print(f"seed {seed}:", json.dumps(result["seeds"][seed], indent=1), flush=True)
    ids = [{c.id for c in suite} for suite in suites]
    result["across_seeds"] = {
        "id_collisions": len(id_collisions(*suites)),
        "shared_ids": len(set.intersection(*ids)) if ids else 0,
    }
    print("across seeds:", json.dumps(result["across_seeds"]))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
