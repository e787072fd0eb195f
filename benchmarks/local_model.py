"""A local model as a user runs one: t3a and the text-only judge against a llama.cpp server.

Serve a GGUF model first (docs/local-model.md), then:

    python benchmarks/local_model.py --base-url http://127.0.0.1:8012/v1 \\
        --model qwen2.5-coder-0.5b --cases 1-3 --max-steps 5 [--out runs/local]
    python benchmarks/local_model.py --summarise runs/local   # the figures of a done run

It runs ``ghostei run --agent t3a --workers 1 --timeout T`` and ``ghostei judge --text-only``
on that run, as docs/local-model.md says, and prints what a user needs to plan a run: seconds per
step and per judged episode, requests and prompt tokens per request (as the server counted
them), retries, and the labels. The manual's figures for a local model come from here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path


def ghostei(*args: str, ok: tuple[int, ...] = (0,)) -> float:
    """Run the CLI, echoing its output; the seconds it took."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ghostei", *args], check=False)
    if done.returncode not in ok:
        raise SystemExit(f"ghostei {args[0]} exited {done.returncode}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url")
    parser.add_argument("--model")
    parser.add_argument("--cases", default="1-3")
    parser.add_argument("--max-steps", default="5")
    parser.add_argument("--timeout", default="900")
    parser.add_argument("--out", type=Path, default=Path("runs") / "local-model")
    parser.add_argument("--summarise", type=Path, help="only print the figures of this run")
    args = parser.parse_args()
    if args.summarise:
        summarise(args.summarise, None)
        return
    if not (args.base_url and args.model):
        parser.error("--base-url and --model are needed to run")
    model = ["--model", args.model, "--base-url", args.base_url, "--timeout", args.timeout]
    ghostei(
        *("run", "--agent", "t3a", "--cases", args.cases, "--max-steps", args.max_steps),
        *("--workers", "1", "--out", str(args.out), *model),
    )
    # Exit 1 is a judge error on some episode: a model too small to answer is a result too.
    judge_seconds = ghostei(
        "judge", str(args.out), "--text-only", "--workers", "1", *model, ok=(0, 1)
    )
    summarise(args.out, judge_seconds)


def summarise(out: Path, judge_seconds: float | None) -> None:
    """The figures of the run (and of its LLM judgements) in ``out``."""
    records = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    steps = sum(r["steps"] for r in records)
    seconds = sum(r["seconds"] for r in records)
    requests = sum(r["usage"].get("requests", 0) for r in records)
    completions = sum(r["usage"].get("completions", 0) for r in records)
    prompt = sum(r["usage"].get("prompt_tokens", 0) for r in records)
    print(f"\nt3a: {len(records)} episodes, {steps} steps in {seconds:.0f} s")
    print(f"  seconds per step          {seconds / max(steps, 1):.0f}")
    for r in records:
        print(f"    case {r['case']}: {r['seconds'] / max(r['steps'], 1):.0f} s per step")
    print(f"  requests                  {requests} ({requests - completions} retried)")
    print(f"  prompt tokens per request {prompt / max(completions, 1):,.0f} (mean)")
    print(f"  labels                    {[r['label'] for r in records]}")
    path = out / "judgements" / "llm.jsonl"
    judged = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
    if not judged:
        return
    took = f" in {judge_seconds:.0f} s" if judge_seconds is not None else ""
    print(f"judge --text-only: {len(judged)} episodes{took}")
    usage = [j["usage"] for j in judged]
    print(f"  requests                  {sum(u.get('requests', 0) for u in usage)}")
    prompts = [u.get("prompt_tokens", 0) for u in usage]
    mean, most = statistics.mean(prompts), max(prompts)
    print(f"  prompt tokens per episode {mean:,.0f} (mean), {most:,} (max)")
    print(f"  labels                    {[j['verdict']['label'] for j in judged]}")


if __name__ == "__main__":
    main()
