"""Wall time of the 220 oracle + gullible episodes through Ray against local workers.

Starts a one-node Ray cluster as a user would (``ray start --head --num-cpus N``, see
tests/ray_helpers.py), then times, alternately and ``--repeat`` times each:

- ``ghostei run --agent oracle --agent gullible --workers N`` (the local executor), and
- the same with ``--executor ray --ray-address HEAD`` (every episode a Ray task);

with every frame saved (the default) and with ``--no-frames``. Each is a fresh CLI process,
start-up and connection included; the cluster's own start is timed once. Checks that both
give the same labels. Needs the ray extra: ``pip install -e '.[ray]'``.

    python benchmarks/bench_ray.py [--repeat 3] [--cpus 2] [--json FILE]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' Ray helper

from tests.ray_helpers import ray_head

CLI = [sys.executable, "-c", "from ghostei.cli import main; main()"]


def timed_run(env: dict[str, str], out: Path, *flags: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [*CLI, "run", "--agent", "oracle", "--agent", "gullible", "--out", str(out), *flags],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"ghostei run {' '.join(flags)} failed:\n{done.stderr}")
    return seconds


def labels(out: Path) -> dict[tuple[str, int], str]:
    rows = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines() if x]
    return {(r["agent"], r["case"]): r["label"] for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    results: dict[str, list[float]] = {}
    started = time.perf_counter()
    with ray_head(cpus=args.cpus) as head, tempfile.TemporaryDirectory() as tmp:
        results["cluster start"] = [time.perf_counter() - started]
        executors = {
            "local": ("--workers", str(args.cpus)),
            "ray": ("--executor", "ray", "--ray-address", head.address),
        }
        for frames in ("all", "none"):
            for i in range(args.repeat):
                runs = {}
                for name, flags in executors.items():
                    out = Path(tmp) / f"{name}-{frames}-{i}"
                    seconds = timed_run(head.env, out, "--frames", frames, *flags)
                    results.setdefault(f"{name}, frames {frames}", []).append(seconds)
                    runs[name] = labels(out)
                assert len(runs["local"]) == 220 and runs["local"] == runs["ray"], "labels differ"
    print(f"{'measure':<24} {'median s':>9} {'min s':>7} {'max s':>7}")
    for name, values in results.items():
        print(
            f"{name:<24} {statistics.median(values):>9.2f} {min(values):>7.2f} {max(values):>7.2f}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
