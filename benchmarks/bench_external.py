"""What an external agent program costs: a step through adb against an in-process agent, and
episodes per minute at --concurrency 1 and 8 (prints figures).

    python benchmarks/bench_external.py [--cases 1-16] [--screen 540x1200]

Runs the gullible agent in process on each case, turns its actions into the adb commands a
program would send (ghostei.integrations.external.commands), and runs them as an external
agent: tests/data/agents/replay.sh, a POSIX shell script that takes a screenshot
(``adb exec-out screencap -p``) before each command, exactly as ``ghostei run --agent-cmd``
would start it. Cases with an action that has no adb command here are left out. Each adb
call is a process of the adb client, as it is for most harnesses. Prints ms per step of both
paths (a step through adb includes its screenshot), whether the labels agree, and external
episodes per minute at concurrency 1 and 8 (the whole run: phones, adb server, programs,
judging and writing). Needs adb (the external extra); uses a private HOME and adb server.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from ghostei.actions import Action
from ghostei.cases import select_cases
from ghostei.cases.schema import Case
from ghostei.integrations.external import execute_external
from ghostei.integrations.external.commands import adb_commands
from ghostei.rundir import RunDir
from ghostei.runner import RunConfig, new_manifest, run_episode

REPLAY = Path(__file__).resolve().parent.parent / "tests" / "data" / "agents" / "replay.sh"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", default="1-16")
    parser.add_argument("--screen", default="540x1200")
    parser.add_argument("--base-port", type=int, default=5660)
    args = parser.parse_args()
    width, height = (int(v) for v in args.screen.split("x"))
    with tempfile.TemporaryDirectory(prefix="bench-external-") as tmp:
        root = Path(tmp)
        os.environ["HOME"] = str(root)  # adb's keys and the console token stay in here
        commands_dir = root / "commands"
        commands_dir.mkdir()
        inproc = RunConfig(agents=("gullible",), width=width, height=height)
        labels: dict[int, str] = {}
        steps = 0
        seconds = 0.0
        chosen: list[Case] = []
        for case in select_cases(args.cases):
            started = time.perf_counter()
            record = run_episode(case, "gullible", inproc, root / "inproc")
            elapsed = time.perf_counter() - started
            doc = json.loads((root / "inproc" / record.trajectory / "trajectory.json").read_text())
            try:
                lines = [c for s in doc["steps"] for c in adb_commands(Action(**s["action"]))]
            except ValueError:
                continue
            (commands_dir / f"{case.id}.txt").write_text("".join(c + "\n" for c in lines))
            chosen.append(case)
            labels[case.id] = record.label
            steps += record.steps
            seconds += elapsed
        print(f"{len(chosen)} cases replayable over adb: {[c.id for c in chosen]}")
        print(f"in process: {1000 * seconds / steps:.1f} ms per step ({steps} steps)")
        cmd = f"sh {REPLAY} {commands_dir}/$GHOSTEI_CASE.txt"
        for concurrency in (1, 8):
            config = RunConfig(
                agents=("replay",), agent_cmd=cmd, width=width, height=height, max_steps=60
            )
            run = RunDir(root / f"external-{concurrency}")
            run.create(new_manifest(config, chosen), chosen)
            started = time.perf_counter()
            records = execute_external(
                run, config, chosen, concurrency=concurrency, base_port=args.base_port
            )
            wall = time.perf_counter() - started
            agree = sum(labels[r.case] == r.label for r in records)
            differ = {
                r.case: (labels[r.case], r.label) for r in records if labels[r.case] != r.label
            }
            ext_steps = sum(r.steps for r in records)
            per_step = 1000 * sum(r.seconds for r in records) / ext_steps
            print(
                f"external, concurrency {concurrency}: {per_step:.1f} ms per step "
                f"({ext_steps} steps, episode time / steps), "
                f"{60 * len(records) / wall:.1f} episodes per minute "
                f"({len(records)} in {wall:.1f} s); labels as in process: {agree}/{len(records)}"
            )
            if differ:
                print(f"  labels that differ (in process, external): {differ}")


if __name__ == "__main__":
    main()
