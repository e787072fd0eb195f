"""Benchmark of episodes in flight against a slow model endpoint (not a test: prints figures).

    python benchmarks/bench_concurrency.py [--episodes 16] [--latency 1.0] [--levels 1 16]

Starts the tests' scripted OpenAI-compatible server (tests/llm_server.py, so run it from a
checkout with the test extra installed) answering every request after ``--latency``
seconds, as a remote model would, with a UI-TARS reply that ends an episode in three
requests. Then runs ``ghostei run --agent uitars`` on ``--episodes`` cases once per
concurrency level, each in a fresh process with the default ``--workers`` (the number of
cores) unless ``--workers`` is given, and prints the wall times and the ratio of the last
level's to the first's: with 16 episodes in flight the run should take about one episode's
time, 1/16 of the sequential run plus start-up (the target is 1/8).

It also prints what a model step spends on the CPU that concurrency does not hide: scaling a
1080x2400 frame down for the model (LANCZOS, as before, against ``downscale``) and building
an SDK client (now once per process and endpoint, no longer once per episode), and what
importing the SDK takes in a fresh process.

``measure()`` returns the run figures as a dict, for other benchmarks (bench_speed.py).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the scripted server lives in tests/

from cli_timing import run_cli  # noqa: E402
from tests.llm_server import ScriptedLLM, uitars_episode_reply  # noqa: E402


def timed_run(
    llm: ScriptedLLM, out: Path, episodes: int, concurrency: int, workers: int | None
) -> float:
    """Wall seconds of one ``ghostei run`` in a fresh process."""
    args = [
        *("run", "--agent", "uitars", "--cases", f"1-{episodes}", "--out", str(out)),
        *("--model", "scripted-model", "--base-url", llm.openai_url),
        *("--api-key-env", "GHOSTEI_BENCH_NO_KEY", "--concurrency", str(concurrency)),
        *(("--workers", str(workers)) if workers is not None else ()),
    ]
    return run_cli(*args)[0]


def measure(
    episodes: int = 16,
    latency: float = 1.0,
    levels: Sequence[int] = (1, 16),
    *,
    workers: int | None = None,
) -> dict[str, float]:
    """Wall seconds of ``episodes`` UI-TARS episodes at each concurrency level
    (``concurrency_<n>_s``) and ``ratio``, the last level's time over the first's;
    ``workers`` None is the command's default (the number of cores)."""
    figures: dict[str, float] = {}
    with ScriptedLLM(latency=latency) as llm, tempfile.TemporaryDirectory() as tmp:
        llm.respond(uitars_episode_reply)
        for level in levels:
            seconds = timed_run(llm, Path(tmp) / f"c{level}", episodes, level, workers)
            figures[f"concurrency_{level}_s"] = round(seconds, 2)
        requests = len(llm.requests)
    if requests != 3 * episodes * len(levels):
        raise RuntimeError(f"expected {3 * episodes} requests per run, the server saw {requests}")
    first, last = (figures[f"concurrency_{n}_s"] for n in (levels[0], levels[-1]))
    figures["ratio"] = round(last / first, 3)
    return figures


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def measure_cpu(repeat: int = 30) -> dict[str, float]:
    """Median milliseconds of a model step's CPU work that concurrency does not hide."""
    import openai
    from PIL import Image

    from ghostei.cases import builtin_cases
    from ghostei.providers.clients import clear_clients, shared_client
    from ghostei.providers.images import downscale
    from ghostei.sim.phone import SimPhone

    phone = SimPhone(1080, 2400)
    phone.reset(builtin_cases()[0].setup, seed=0)
    frame = phone.observe().screenshot.convert("RGB")
    figures: dict[str, float] = {}
    for side in (1344, 768):
        size = (round(frame.width * side / frame.height), side)
        lanczos = median_ms(partial(frame.resize, size, Image.Resampling.LANCZOS), repeat)
        ours = median_ms(partial(downscale, frame, size), repeat)
        figures[f"downscale_{side}_lanczos_ms"] = round(lanczos, 1)
        figures[f"downscale_{side}_ms"] = round(ours, 1)

    def new_client() -> object:
        return openai.OpenAI(api_key="x", base_url="http://127.0.0.1:9/v1", max_retries=0)

    figures["client_build_ms"] = round(median_ms(new_client, repeat), 1)
    # Importing the SDK, in a fresh process each time (the median of three).
    timer = "import time; t = time.perf_counter(); import openai; print(time.perf_counter() - t)"
    imports = [
        float(subprocess.run([sys.executable, "-c", timer], capture_output=True, check=True).stdout)
        for _ in range(3)
    ]
    figures["openai_import_ms"] = round(statistics.median(imports) * 1000, 1)
    clear_clients()
    figures["client_reuse_ms"] = round(
        median_ms(lambda: shared_client("openai", None, 1.0, "x", new_client), repeat), 3
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per request")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--workers", type=int, help="default: the command's (the cores)")
    parser.add_argument("--skip-runs", action="store_true", help="only the CPU figures")
    args = parser.parse_args()
    for name, value in measure_cpu().items():
        print(f"{name:32s} {value:10.3f}", flush=True)
    if args.skip_runs:
        return
    figures = measure(args.episodes, args.latency, tuple(args.levels), workers=args.workers)
    for name, value in figures.items():
        print(f"{name:32s} {value:10.3f}")
    verdict = "ok" if figures["ratio"] <= 1 / 8 else "MISSED"
    print(f"target: ratio <= {1 / 8:.3f} ({verdict})")


if __name__ == "__main__":
    main()
