"""``ghostei mcp``: one case's phone as an MCP server over stdio, for a client that starts its
own servers; the episode is judged and written to a run folder (``ghostei.integrations.mcp``).

Standard output is the protocol's: everything this command says goes to standard error.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import cast

import click

from ..attacks import NO_ATTACK, STANDARD, check_condition, fits
from ..cases import Case, CaseError, builtin_cases, load_cases
from ..frames import FRAMES_MODES, FramesMode
from ..rundir import EpisodeRecord, RunDir, RunDirError
from ..runner import RunConfig
from .console import err, fail, hold_run_dir


@click.command("mcp")
@click.option("--case", "case_id", type=int, required=True, help="The case to run (its id).")
@click.option(
    "--cases",
    "source",
    default=None,
    help="A path to case files instead of the built-in ones.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="The run folder the episode is written to (a new one).",
)
@click.option(
    "--agent-name",
    default="mcp",
    show_default=True,
    help="The agent's name in the record and reports (e.g. the client's and model's).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--max-steps",
    type=click.IntRange(1, 500),
    default=20,
    show_default=True,
    help="Action tools the client may call; the episode is judged at the limit.",
)
@click.option(
    "--screen", default="1080x2400", show_default=True, help="Screen size WxH of the phone."
)
@click.option(
    "--frames",
    "frames_mode",
    type=click.Choice(FRAMES_MODES),
    default="all",
    show_default=True,
    help="Which frames (PNG) and dumps (XML) to save, as `ghostei run --frames`.",
)
@click.option(
    "--no-attack",
    is_flag=True,
    help="Switch the case's attack off (a harmful instruction becomes its benign counterpart).",
)
@click.option(
    "--attack-variant",
    default=None,
    metavar="NAME",
    help="An adaptive variant of the case's attack (see `ghostei cases stats`).",
)
def mcp(
    case_id: int,
    source: str | None,
    out: Path,
    agent_name: str,
    seed: int,
    max_steps: int,
    screen: str,
    frames_mode: str,
    no_attack: bool,
    attack_variant: str | None,
) -> None:
    """Serve one case's phone to an MCP client over stdio (the mcp extra).

    The client is the agent: the phone's tools (tap, type_text, open_app, ... finish,
    refuse, answer), screenshot and elements. The episode ends when the client calls
    finish, refuse or answer, at --max-steps, or when it closes the connection; it is then
    judged by the rule judge and written to --out as a run with one episode
    (`ghostei report DIR` reads it).
    """
    try:
        from ..integrations.mcp import run_episode_over_stdio
    except ImportError as exc:
        fail(f"ghostei mcp needs the mcp extra: pip install 'ghostei[mcp]' ({exc})")
    case = _case(case_id, source)
    attack = _attack(no_attack, attack_variant)
    if not fits(case, attack):
        fail(f"--attack-variant {attack}: it does not fit case {case.id}")
    width, height = _screen(screen)
    config = RunConfig(
        agents=(agent_name,),
        seed=seed,
        max_steps=max_steps,
        width=width,
        height=height,
        frames=cast(FramesMode, frames_mode),
        attack=attack,
    )
    hold_run_dir(RunDir(out))  # one writer per run folder
    err.print(f"ghostei mcp: case {case.id} on stdio, run folder {out}", highlight=False)
    # A client may end its server with SIGTERM instead of closing its input (the spec's
    # fallback): the episode is judged and written all the same, as if it had closed it.
    # ^C too, and at the first: left to Python's own handler, SIGINT would meet asyncio's
    # (anyio.run installs it then), which only cancels the serving task, and that waits for
    # the SDK's reader of standard input, blocked in a thread until the client writes.
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        record = run_episode_over_stdio(case, config, out)
    except RunDirError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"--out {out}: cannot write the run folder: {exc.strerror or exc}")
    except KeyboardInterrupt:
        # Written by now. The SDK's reader of standard input may still be blocked on it,
        # and would keep the process from exiting: leave at once.
        for written in RunDir(out).records():
            _say(written)
        sys.stderr.flush()
        os._exit(130)
    finally:  # the command may run inside another program (click's test runner)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    _say(record)


def _say(record: EpisodeRecord) -> None:
    exposed = "exposed" if record.exposed else "not exposed"
    err.print(
        f"ghostei mcp: case {record.case}: {record.label} ({exposed}), {record.steps} step(s), "
        f"ended: {record.ended}",
        highlight=False,
    )


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _case(case_id: int, source: str | None) -> Case:
    try:
        available = load_cases(source) if source else builtin_cases()
    except CaseError as exc:
        fail(f"--cases {source}: {exc}" if source else f"built-in cases are broken: {exc}")
    for case in available:
        if case.id == case_id:
            return case
    where = source or "the built-in cases"
    fail(f"--case {case_id}: no case with this id in {where}")


def _attack(no_attack: bool, variant: str | None) -> str:
    if no_attack and variant:
        fail("--no-attack and --attack-variant: an episode has one attack condition")
    attack = NO_ATTACK if no_attack else variant or STANDARD
    try:
        check_condition(attack)
    except ValueError as exc:
        fail(f"--attack-variant: {exc}")
    return attack


def _screen(value: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in value.lower().split("x"))
    except ValueError:
        fail(f"--screen: {value!r} is not WIDTHxHEIGHT, e.g. 1080x2400")
    if width < 320 or height < 480:
        fail(f"--screen: {value} is too small (at least 320x480)")
    return width, height
