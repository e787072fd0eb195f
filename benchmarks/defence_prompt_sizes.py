"""What each prompt and observation defence adds to the requests a model receives.

Runs T3A and M3A over built-in cases with the stand-in model of ``prompt_sizes.py`` (its
``Recorder`` and ``measure``: open the case's app, then scroll to the end of the episode),
once without a defence and once behind each defence that acts at the prompt or the
observation, and compares request by request: the mean and largest number of characters a
defence adds to a request's text. The stand-in decides by step count alone, so both runs make
the same requests in the same order. Images are not counted (provenance changes pixels, not
their number). With ``--tokenize URL`` (a llama.cpp server, as in ``prompt_sizes.py``) the
mean is also given in the served model's tokens, over up to ``--sample`` request pairs.

    python benchmarks/defence_prompt_sizes.py [--cases 1-5] [--max-steps 20] \\
        [--tokenize http://127.0.0.1:8012] [--defence NAME ...]
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Sequence
from unittest import mock

from prompt_sizes import count_tokens, measure  # this folder is on sys.path when run

from ghostei import runner
from ghostei.cases import select_cases
from ghostei.defences import catalogue

AGENTS = ("t3a", "m3a")


def requests_with(
    agent: str, cases: Sequence[object], max_steps: int, defence: str | None
) -> list[str]:
    """The text of every request ``agent`` makes over ``cases`` behind ``defence``."""
    if defence is None:
        return [text for text, _ in measure(agent, cases, max_steps)]
    # ``measure`` builds its own RunConfig: give it the defence through the constructor.
    config = functools.partial(runner.RunConfig, defences=(defence,))
    with mock.patch.object(runner, "RunConfig", config):
        return [text for text, _ in measure(agent, cases, max_steps)]


def sample(pairs: Sequence[tuple[str, str]], n: int) -> list[tuple[str, str]]:
    """Up to ``n`` pairs spread evenly over ``pairs``."""
    if len(pairs) <= n:
        return list(pairs)
    return [pairs[i * len(pairs) // n] for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="1-5")
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument(
        "--defence",
        action="append",
        default=None,
        help="a defence spec to measure (repeatable; default: every prompt/observation one)",
    )
    parser.add_argument("--tokenize", default=None, help="a llama.cpp server's base URL")
    parser.add_argument("--sample", type=int, default=20, help="request pairs tokenised")
    args = parser.parse_args()
    defences = args.defence or [
        str(entry["name"]) for entry in catalogue() if entry["point"] in ("prompt", "observation")
    ]
    cases = select_cases(args.cases)
    print(f"{len(cases)} cases ({args.cases}), {args.max_steps} steps each\n")
    tokens_head = f" {'+tokens':>8}" if args.tokenize else ""
    print(
        f"{'agent':<6} {'defence':<24} {'requests':>8} {'base chars':>11} "
        f"{'+chars mean':>12} {'+chars max':>11} {'+%':>6}{tokens_head}"
    )
    for agent in AGENTS:
        started = time.perf_counter()
        base = requests_with(agent, cases, args.max_steps, None)
        base_mean = sum(map(len, base)) / len(base)
        for defence in defences:
            seen = requests_with(agent, cases, args.max_steps, defence)
            if len(seen) != len(base):
                raise SystemExit(f"{agent}+{defence}: {len(seen)} requests, not {len(base)}")
            added = [len(d) - len(b) for b, d in zip(base, seen, strict=True)]
            mean = sum(added) / len(added)
            tokens = ""
            if args.tokenize:
                pairs = sample(list(zip(base, seen, strict=True)), args.sample)
                extra = [
                    count_tokens(args.tokenize, d) - count_tokens(args.tokenize, b)
                    for b, d in pairs
                ]
                tokens = f" {sum(extra) / len(extra):>8.0f}"
            print(
                f"{agent:<6} {defence:<24} {len(seen):>8} {base_mean:>11,.0f} {mean:>12,.0f} "
                f"{max(added):>11,} {100 * mean / base_mean:>5.1f}%{tokens}"
            )
        print(f"       ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
