"""A local model as a user runs one: t3a and the text-only judge against a llama.cpp server.

Serve a GGUF model first (docs/local-model.md), then:

    python benchmarks/local_model.py --base-url http://127.0.0.1:8012/v1 \\
        --model qwen2.5-coder-0.5b --cases 1-3 --max-steps 5 [--out runs/local]
    python benchmarks/local_model.py --summarise runs/local   # the figures of a done run
    python benchmarks/local_model.py --summarise runs/local --server-log llama-server.log
    python benchmarks/local_model.py --build venv-llama   # times the server's build

It runs ``ghostei run --agent t3a --workers 1 --timeout T`` and ``ghostei judge --text-only``
on that run, as docs/local-model.md says, and prints what a user needs to plan a run: seconds per
step and per judged episode, requests and prompt tokens per request (as the server counted
them), retries, and the labels. Given the server's log (``--server-log``), it also prints how fast
the server read prompts and wrote tokens, the longest prompt and the longest request.
``--build DIR`` makes a virtual environment at DIR and times the install that compiles
llama.cpp, as the manual's command does it. The manual's figures for a local model come from
here.
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
    parser.add_argument("--server-log", type=Path, help="the llama.cpp server's log of the run")
    parser.add_argument("--build", type=Path, help="time the server's build into a venv here")
    args = parser.parse_args()
    if args.build:
        build(args.build)
        return
    if args.summarise:
        summarise(args.summarise, None)
        if args.server_log:
            server_figures(args.server_log)
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
    if args.server_log:
        server_figures(args.server_log)


def build(venv: Path) -> None:
    """Make a venv and time the install that compiles llama.cpp (docs/local-model.md)."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-cache-dir"]
    env = {**os.environ, "CMAKE_ARGS": "-DGGML_NATIVE=OFF"}
    started = time.perf_counter()
    subprocess.run([*pip, "llama-cpp-python[server]"], check=True, env=env)
    took = time.perf_counter() - started
    shown = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "show", "llama-cpp-python"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    version = re.search(r"^Version: (.+)$", shown, re.M)
    print(f"llama-cpp-python {version.group(1) if version else '?'} built and installed")
    print(f"  in {took:.0f} s ({took / 60:.1f} min) on {os.cpu_count()} cores")


# llama.cpp's timings after each request, e.g.
#   prompt eval time = 93811.27 ms / 4521 tokens ( 20.75 ms per token, 48.19 tokens per second)
#          eval time = 4036.61 ms / 57 runs ( 70.82 ms per token, 14.12 tokens per second)
#         total time = 97949.51 ms / 4578 tokens
_TIMING = re.compile(
    r"(prompt eval|\beval|total) time =\s*([\d.]+) ms /\s*(\d+) (?:tokens|runs)"
    r"(?:.*?([\d.]+) tokens per second)?"
)


# Before each request: "Llama.generate: 24 prefix-match hit, remaining 5387 prompt tokens to
# eval": the prompt is both, the first part reused from the request before.
_PROMPT = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens")


def server_figures(log: Path) -> None:
    """How fast the server read prompts and wrote tokens, from its log's timings."""
    found: dict[str, list[tuple[float, int, float | None]]] = {}
    prompts: list[int] = []
    for line in log.read_text(errors="replace").splitlines():
        if m := _PROMPT.search(line):
            prompts.append(int(m.group(1)) + int(m.group(2)))
        m = _TIMING.search(line)
        if m:
            rate = float(m.group(4)) if m.group(4) else None
            found.setdefault(m.group(1), []).append((float(m.group(2)), int(m.group(3)), rate))
    if not found.get("total"):
        print(f"{log}: no request timings (is it the server's log, with its verbose output?)")
        return
    prompt, written, total = found.get("prompt eval", []), found.get("eval", []), found["total"]
    print(f"server ({log}): {len(total)} requests")
    big = [p for p in prompt if p[1] >= 100]  # a prompt mostly cached says little of the rate
    if big:
        rates = [r for _, _, r in big if r is not None]
        print(f"  prompt tokens per second  {min(rates):.0f}-{max(rates):.0f}")
        print(f"  longest prompt evaluated  {max(n for _, n, _ in big):,} tokens")
    if prompts:
        print(f"  longest prompt            {max(prompts):,} tokens (prefix reused included)")
    if written:
        rates = [r for _, _, r in written if r is not None]
        print(f"  tokens written per second {min(rates):.0f}-{max(rates):.0f}")
    print(f"  longest request           {max(ms for ms, _, _ in total) / 1000:.0f} s")


def summarise(out: Path, judge_seconds: float | None) -> None:
    """The figures of the run (and of its LLM judgements) in ``out``."""
    if not (out / "episodes.jsonl").is_file():
        raise SystemExit(f"{out}: no run folder (no episodes.jsonl)")
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
