"""What an MCP client's step costs: the gullible agent's actions replayed through the phone's
MCP server, against the same agent in process (prints figures).

    python benchmarks/bench_mcp.py [--cases 1-16] [--screen 540x1200]

For each case, the gullible agent runs in process (``run_episode``); then its actions are
replayed as tool calls by the SDK's own client, a look before each step (``screenshot``, a
PNG, or ``elements``, the element list), over streamable HTTP (``serve_http``, the server a
``ghostei run --agent-cmd`` program is offered) and over stdio (``ghostei mcp``, a server
process per episode, its start included). Prints ms per step of each path, whether every
label agrees with the in-process one, and the stdio server's start (process start to the
first answer). The client runs in this process; the HTTP server in a thread beside it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from ghostei.actions import Action
from ghostei.cases import select_cases
from ghostei.integrations.mcp import ClientEpisode, serve_http
from ghostei.integrations.tools import action_to_tool_call
from ghostei.rundir import RunDir
from ghostei.runner import RunConfig, run_episode


async def replay(client: Client, actions: list[Action], look: str) -> None:
    for action in actions:
        await client.call_tool(look, {})
        name, arguments = action_to_tool_call(action)
        result = await client.call_tool(name, arguments)
        if result.is_error:
            raise RuntimeError(f"{name}({arguments}): {result.content}")


async def session(
    server: str | StdioServerParameters,
    actions: list[Action],
    look: str,
    starts: list[float] | None,
) -> None:
    """Connect to ``server`` and replay ``actions``; the time to connect goes to ``starts``."""
    started = time.perf_counter()
    async with Client(server) as client:
        if starts is not None:
            starts.append(time.perf_counter() - started)
        await replay(client, actions, look)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", default="1-16")
    parser.add_argument("--screen", default="540x1200")
    args = parser.parse_args()
    width, height = (int(v) for v in args.screen.split("x"))
    totals = {"in process": 0.0, "http+screenshot": 0.0, "http+elements": 0.0, "stdio": 0.0}
    starts: list[float] = []
    steps = 0
    agree = True
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        root = Path(tmp)
        for case in select_cases(args.cases):
            config = RunConfig(agents=("gullible",), width=width, height=height, frames="none")
            started = time.perf_counter()
            record = run_episode(case, "gullible", config, root / "inproc")
            totals["in process"] += time.perf_counter() - started
            doc = json.loads((root / "inproc" / record.trajectory / "trajectory.json").read_text())
            actions = [Action.model_validate(s["action"]) for s in doc["steps"]]
            try:
                [action_to_tool_call(a) for a in actions]
            except ValueError:
                continue  # an action no tool does
            steps += len(actions)
            labels = [record.label]
            for look in ("screenshot", "elements"):
                started = time.perf_counter()
                episode = ClientEpisode(
                    case, attack="standard", screen=(width, height), frames="none"
                )
                with serve_http(episode) as handle:
                    anyio.run(session, handle.url, actions, look, None)
                labels.append(episode.close().label)
                totals[f"http+{look}"] += time.perf_counter() - started
            out = root / f"stdio-{case.id}"
            command = ["mcp", "--case", str(case.id), "--out", str(out), "--frames", "none"]
            server = StdioServerParameters(
                command=sys.executable, args=["-m", "ghostei", *command, "--screen", args.screen]
            )
            started = time.perf_counter()
            anyio.run(session, server, actions, "screenshot", starts)
            totals["stdio"] += time.perf_counter() - started
            labels.append(RunDir(out).records()[0].label)
            agree = agree and len(set(labels)) == 1
            print(f"case {case.id}: {len(actions)} steps, labels {labels}", flush=True)
    print(f"{steps} steps over {len(starts)} cases, screen {args.screen}")
    for path, seconds in totals.items():
        print(f"  {path:16} {1000 * seconds / steps:7.1f} ms per step")
    served = totals["stdio"] - sum(starts)
    print(f"  stdio, started   {1000 * served / steps:7.1f} ms per step (its start left out)")
    print(f"  a stdio server's start: {sum(starts) / len(starts):.2f} s on average")
    print(f"every label agrees with the in-process agent's: {agree}")


if __name__ == "__main__":
    main()
