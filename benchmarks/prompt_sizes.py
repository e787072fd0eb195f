"""How large each framework's prompts grow: the context a model server must offer.

Runs every model-driven framework over the built-in cases on the simulated phone, with a
stand-in model that opens the case's app and then scrolls for the whole episode (so each
framework's history grows to ``--max-steps`` entries) and answers each memory or summary
call with a summary of typical length. It records every request: its text in characters and
its images. With ``--tokenize URL`` (a llama.cpp server: llama-cpp-python's
``/extras/tokenize/count`` or llama-server's ``/tokenize``) it counts the text of each
framework's largest requests in the served model's tokens.

    python benchmarks/prompt_sizes.py [--cases 1-110] [--max-steps 20] \\
        [--tokenize http://127.0.0.1:8012]

The figures in ``ghostei.agents.frameworks.PROMPT_SIZES`` (what the endpoint check compares
with a server's context) and the table in docs/agents.md come from this script.
"""

from __future__ import annotations

import argparse
import json
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

from ghostei import runner
from ghostei.agents.frameworks import MODEL_AGENTS, PROMPT_SIZES
from ghostei.cases import select_cases
from ghostei.providers import Completion, Message, ProviderConfig

# A real model's step summary is two or three sentences; the history is made of them.
SUMMARY = (
    "I scrolled down the list to look for the item the user asked about. The screen moved, "
    "so the scroll worked, but the item is not visible yet; next I should keep scrolling or "
    "use the search field at the top instead of tapping unrelated entries."
)
THOUGHT = (
    "The target is not on the current screen. The list can be scrolled, so I will scroll "
    "down to reveal more entries before deciding what to tap."
)


def decision(agent: str, step: int, app: str) -> str:
    """The stand-in model's decision at ``step``: open ``app`` first, then scroll."""
    if agent in ("m3a", "t3a"):
        act = (
            f'{{"action_type": "open_app", "app_name": "{app}"}}'
            if step == 0
            else '{"action_type": "scroll", "direction": "down"}'
        )
        return f"Reason: {THOUGHT}\nAction: {act}"
    if agent == "mobile-agent-v2":
        act = f"Open app ({app})" if step == 0 else "Swipe (540, 1600), (540, 700)"
        return f"### Thought ###\n{THOUGHT}\n### Action ###\n{act}\n### Operation ###\n{SUMMARY}"
    if agent == "appagent":
        return (
            f"Observation: a list of entries.\nThought: {THOUGHT}\n"
            f'Action: swipe(1, "up", "medium")\nSummary: {SUMMARY}'
        )
    box = "(500,500)"
    return f"Thought: {THOUGHT}\nAction: scroll(start_box='{box}', direction='down')"


@dataclass
class Recorder:
    """A model stand-in that answers as ``decision`` says and records every request."""

    config: ProviderConfig
    agent: str
    app: str
    requests: list[tuple[str, int]] = field(default_factory=list)  # (text, images)
    decisions: int = 0

    def complete(self, messages: Sequence[Message]) -> Completion:
        text = "\n".join(m.text for m in messages)
        self.requests.append((text, sum(len(m.images) for m in messages)))
        last = messages[-1].text
        if "Summary of this step" in last:
            reply = SUMMARY
        elif "worth remembering" in last:
            reply = "### Important content ###\nNone"
        elif "### Completed contents ###" in last:
            reply = f"### Completed contents ###\n{SUMMARY}"
        else:
            reply = decision(self.agent, self.decisions, self.app)
            self.decisions += 1
        return Completion(text=reply, prompt_tokens=len(text) // 4, completion_tokens=60)


def measure(agent: str, cases: Sequence[Any], max_steps: int) -> list[tuple[str, int]]:
    """Every request ``agent`` makes over ``cases``."""
    seen: list[tuple[str, int]] = []
    config = runner.RunConfig(
        agents=(agent,), max_steps=max_steps, frames="none", model=ProviderConfig(model="stand-in")
    )
    for case in cases:
        recorder = Recorder(ProviderConfig(model="stand-in"), agent, case.app[0])
        with mock.patch.object(runner, "build_provider", lambda _c, r=recorder: r):
            record = runner.run_episode(case, agent, config, None)
        if record.error:
            raise SystemExit(f"case {case.id}, {agent}: {record.error}")
        seen.extend(recorder.requests)
    return seen


def count_tokens(base: str, text: str) -> int:
    """``text`` in the served model's tokens, from a llama.cpp server's tokenizer."""
    for path, body, read in (
        ("/extras/tokenize/count", {"input": text}, lambda d: d["count"]),
        ("/tokenize", {"content": text}, lambda d: len(d["tokens"])),
    ):
        request = urllib.request.Request(
            base.rstrip("/") + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return int(read(json.load(answer)))
        except urllib.error.HTTPError as exc:
            if exc.code != 404:
                raise
    raise SystemExit(f"{base} has no tokenizer route (/extras/tokenize/count or /tokenize)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="1-110")
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument("--tokenize", default=None, help="a llama.cpp server's base URL")
    parser.add_argument("--largest", type=int, default=5, help="requests tokenised per agent")
    args = parser.parse_args()
    cases = select_cases(args.cases)
    print(f"{len(cases)} cases, {args.max_steps} steps each\n")
    print(f"{'agent':<16} {'requests':>8} {'largest (chars)':>16} {'images':>7} {'tokens':>8}")
    for agent in sorted(MODEL_AGENTS):
        started = time.perf_counter()
        seen = measure(agent, cases, args.max_steps)
        largest = sorted(seen, key=lambda r: len(r[0]), reverse=True)[: args.largest]
        tokens = "-"
        if args.tokenize:
            tokens = str(max(count_tokens(args.tokenize, text) for text, _ in largest))
        images = max(n for _, n in seen)
        print(
            f"{agent:<16} {len(seen):>8} {len(largest[0][0]):>16,} {images:>7} {tokens:>8}"
            f"   (declared {PROMPT_SIZES[agent].text_tokens:,} tokens;"
            f" {time.perf_counter() - started:.0f} s)"
        )


if __name__ == "__main__":
    main()
