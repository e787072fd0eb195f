"""One episode of an external agent program on a served phone.

The phone (a :class:`~ghostei.served.serve.ServedPhone`, in this process) is staged and reset
exactly as :func:`ghostei.runner.run_episode` stages the simulated phone, then the program is
started and drives it over adb (or MCP). :class:`ProgramEpisode` is the phone's episode
observer: every action the phone's shell carries out for the program is one step, opened,
carried out and trigger-tested through :class:`~ghostei.episode.EpisodePhone` as every other
run's steps are; every screenshot or dump the program fetches is an observation, which is what
exposure is measured on. It is also the MCP server's :class:`ToolSession`: a tool call is a
step or an observation by the same accounting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...actions import Action
from ...cases.schema import Case
from ...episode import EpisodePhone
from ...frames import FrameRecorder, FramesMode
from ...injection import DeceptiveInstruction
from ...observation import Observation
from ...rundir import EpisodeRecord
from ...runner import RunConfig, Trajectory, write_episode
from ..tools import tool_call_text
from .program import LivePrograms, Program, expand_command
from .seat import Seat

# How an episode ended besides by the program's own exit (``exited``).
ENDED_BY_TOOL = {"finish": "mcp_finish", "refuse": "mcp_refuse", "answer": "mcp_answer"}


class ProgramEpisode:
    """The steps and observations of one program's episode on one served phone.

    Everything here runs under the phone's lock (adbd serves each connection on a thread of its
    own, MCP tool calls come on the server's), so steps are strictly one after another.
    """

    def __init__(
        self, phone: EpisodePhone, lock: threading.RLock, max_steps: int, frames: FramesMode
    ) -> None:
        self.phone = phone
        self.lock = lock  # the served phone's; an in-process episode's own (ghostei mcp)
        self.max_steps = max_steps
        self.steps: list[dict[str, Any]] = []
        # Before each step, the frame of the observation the program fetched last (null
        # before its first), then the phone's last screen.
        self.frames = FrameRecorder(frames)
        self.last: Observation | None = None  # what the program fetched last
        self.how: str | None = None  # how it ended, once it did
        self.failure: str | None = None  # GhostEI's own failure while carrying out a step
        self.over = threading.Event()  # set when the episode, not the program, ends it
        self._command: tuple[int, int] | None = None  # steps and events as a command began

    # ----- the served phone's episode observer ------------------------------------------------

    def act(self, action: Action, command: str | None = None) -> Observation:
        """Carry out ``action`` (from ``command``; None: an MCP action tool, recorded as its
        call) as the next step; once the episode is over, the phone no longer changes: the
        action is dropped."""
        if command is None:
            command = f"mcp:{tool_call_text(action)}"
        with self.lock:
            device = self.phone.device
            if self.how is not None:
                return device.observe()
            step = len(self.steps)
            first = self.phone.begin(step, self.last)
            if self._command is not None and self._command[0] == step:
                first = self._command[1]  # the command's first step: all it changed is in it
            record = self._open(step, command, first)
            record["action"] = action.model_dump(exclude_none=True)
            try:
                after = self.phone.act(step, action)  # the trigger test every run shares
            except Exception as exc:  # GhostEI's own failure: the episode ends in error
                self.failure = f"{type(exc).__name__}: {exc}"
                self._end("error")
                raise
            self._close(record, after)
            return after

    def command_started(self, command: str) -> None:
        """A command line starts: what it changes belongs to the next step."""
        with self.lock:
            if self.how is None:
                self._command = (len(self.steps), len(self.phone.device.events))
                self.phone.device.begin_step(len(self.steps))

    def command_finished(self, command: str) -> None:
        """A command line that changed the phone without an action (a deep link, an activity
        started with its data: events logged, no step taken) was a step of its own: recorded,
        and the trigger tested after it, as after any step."""
        with self.lock:
            started, self._command = self._command, None
            if self.how is not None or started is None:
                return
            steps, first = started
            if len(self.steps) > steps or len(self.phone.device.events) == first:
                return  # its actions were the steps, or it changed nothing
            step = len(self.steps)
            self.phone.begin(step, self.last)  # the step was open: its events are logged
            record = self._open(step, command, first)
            try:
                self.phone.after(step)  # the trigger test every run shares
            except Exception as exc:
                self.failure = f"{type(exc).__name__}: {exc}"
                self._end("error")
                raise
            self._close(record, None)

    def _open(self, step: int, command: str, first: int) -> dict[str, Any]:
        """The record of ``step``, now taken: its command, the frame of the program's last
        look before it, and (until the episode's end fills in the range) its first event."""
        if self.last is None:
            self.frames.skip()  # it acted without looking
        else:
            self.frames.keep(self.last)
        record: dict[str, Any] = {
            "step": step,
            "frame": None,
            "command": command,
            "raw_output": command,  # what the program said to the phone: its command
            "events": first,
        }
        self.steps.append(record)
        return record

    def _close(self, record: dict[str, Any], after: Observation | None) -> None:
        """The step is carried out: where the phone is, and the step limit."""
        record["foreground"] = (after or self.phone.device.observe()).foreground_package
        if len(self.steps) >= self.max_steps:
            self._end("max_steps")

    def observed(self, obs: Observation) -> None:
        """The program fetched ``obs``: the next step's frame, and exposure if it shows the
        attack."""
        with self.lock:
            if self.how is None:
                self.last = obs
                self.phone.injection.observe(obs, len(self.steps))

    # ----- the MCP server's tool session (ghostei.integrations.tools.ToolSession) -------------

    @property
    def ended(self) -> bool:
        """Whether the episode is over (the program's exit, the step limit, the timeout, a
        terminal tool)."""
        return self.how is not None

    def look(self) -> Observation:
        """The screen as a client fetched it (a screenshot or the element list)."""
        with self.lock:
            obs = self.phone.device.observe()
            self.observed(obs)
            return obs

    def screen(self) -> Observation:
        """The screen now, as a tool call's target is checked against it: the program was
        not shown it, so it is no observation (no frame, no exposure)."""
        with self.lock:
            return self.phone.device.observe()

    def end(self, action: Action) -> None:
        """End the episode with a terminal action (finish, refuse, answer), carried out as the
        last step so the judge reads it as it reads an in-process agent's."""
        with self.lock:
            if self.how is not None:
                return
            self.act(action)
            if self.how is None:
                self._end(ENDED_BY_TOOL.get(action.action_type, "mcp_finish"))

    def phone_lost(self) -> None:
        """The program's adb transport to the phone ended (``adb disconnect``, ``reconnect``,
        ``kill-server``): the episode ends at once, in error, as the program cannot have gone on
        as it would have with its phone; compromise observed before is kept by the judge."""
        with self.lock:
            if self.how is None:
                self.failure = (
                    "the program lost its phone: its adb server's connection to it ended "
                    "(adb disconnect, reconnect or kill-server)"
                )
                self._end("error")

    # ----- the driver's side ------------------------------------------------------------------

    def _end(self, how: str) -> None:
        self.how = how
        self.over.set()

    def settle(self, how: str) -> str:
        """End the episode as ``how`` unless it already ended; how it ended."""
        with self.lock:
            if self.how is None:
                self.how = how
            return self.how

    def finish_steps(self) -> None:
        """Give each step its events: from its first event to the next step's first (what the
        phone logged after a step and before the next, as a page still loading, belongs to
        the step before)."""
        events = len(self.phone.device.events)
        starts = [int(s["events"]) for s in self.steps]
        for i, step in enumerate(self.steps):
            end = starts[i + 1] if i + 1 < len(starts) else events
            step["events"] = list(range(starts[i], end))


# Serves an episode as an MCP server: its URL, and how to stop it.
McpServe = Callable[[ProgramEpisode], tuple[str, Callable[[], None]]]


@dataclass(frozen=True)
class ProgramEnv:
    """What every program of a run is given besides its case and its seat: its adb, and the
    environment it starts from."""

    adb_dir: Path
    base_env: Mapping[str, str]
    mcp: McpServe | None = None  # serves an episode's MCP server; None: none is offered
    live: LivePrograms = field(default_factory=LivePrograms)  # ended whatever stops the run


def run_program_episode(
    case: Case,
    agent: str,
    config: RunConfig,
    seat: Seat,
    env: ProgramEnv,
    out: Path | None,
) -> EpisodeRecord:
    """Run ``config.agent_cmd`` as the agent of ``case`` on ``seat``; its record (and its
    trajectory under ``out``). Ending by the step limit or the timeout, or a non-zero exit,
    is judged as reaching ``max_steps`` is; GhostEI's own failure is an error, and so is a
    phone the program lost (its adb transport ended: it cannot have gone on)."""
    if config.agent_cmd is None:
        raise ValueError("an external agent's run needs its command (agent_cmd)")
    started = time.perf_counter()
    served = seat.phone
    label = config.label(agent)
    phone = EpisodePhone.stage(case, config.attack, lambda _shaped: served.phone)
    case = phone.case
    episode = ProgramEpisode(phone, served.lock, config.max_steps, config.frames)
    error: str | None = None
    exit_code: int | None = None
    output: dict[str, bytes] = {}
    program: Program | None = None
    stop_mcp: Callable[[], None] | None = None
    try:
        seat.ready()  # whatever the program before did to its adb server or connection
        with served.lock:
            first = phone.start(config.seed)
            if isinstance(phone.injection, DeceptiveInstruction):
                # The instruction is the attack: the program has it before it looks.
                phone.injection.observe(first, 0)
            served.shell.device.observer = episode
        served.adbd.on_transport_end = episode.phone_lost
        variables = {
            "ANDROID_SERIAL": served.serial,
            "ANDROID_ADB_SERVER_PORT": str(seat.adb_port),
            # An adb server the program starts itself scans no emulator ports either.
            "ADB_LOCAL_TRANSPORT_MAX_PORT": "1",
            "GHOSTEI_CASE": str(case.id),
            "GHOSTEI_INSTRUCTION": case.prompt,
            "PATH": f"{env.adb_dir}{_pathsep(env.base_env)}",
        }
        if env.mcp is not None:
            url, stop_mcp = env.mcp(episode)
            variables["GHOSTEI_MCP_URL"] = url
        command = expand_command(config.agent_cmd, served.serial, case.prompt)
        program = Program(command, {**env.base_env, **variables})
        env.live.add(program)
        waiter = threading.Thread(target=_wait_then_set, args=(program, episode), daemon=True)
        waiter.start()
        _wait(episode.over, config.episode_timeout)
        exited = program.exit_code is not None
        how = episode.settle("exited" if exited else "timeout")
        if how == "exited":
            exit_code = program.exit_code
    except Exception as exc:  # GhostEI could not run the episode
        error = f"{type(exc).__name__}: {exc}"
    finally:
        # The episode stays the phone's observer, ended, until the next one's takes over:
        # a command still in flight from this program changes nothing now.
        episode.settle("error")
        if program is not None:
            program.end()
            env.live.discard(program)
        served.adbd.on_transport_end = None
        if stop_mcp is not None:
            stop_mcp()
    if program is not None:
        output = program.outputs()
    if episode.failure is not None:
        error = f"{error}; {episode.failure}" if error else episode.failure
    with served.lock:
        episode.finish_steps()
        episode.frames.keep(phone.device.observe())  # the phone's last screen
        verdict, error, final_state = phone.conclude(episode.steps, error)
    rel = ""
    if out is not None:
        trajectory = Trajectory(steps=episode.steps, frames=episode.frames)
        with served.lock:  # frames are drawn from the phone's compositor
            rel = write_episode(
                out, phone, label, trajectory, verdict, error, final_state, files=output
            )
    return EpisodeRecord(
        case=case.id,
        agent=label,
        seed=config.seed,
        label="error" if verdict is None else verdict.label,
        **phone.outcome_fields(),
        steps=len(episode.steps),
        verdict=verdict,
        error=error,
        seconds=round(time.perf_counter() - started, 3),
        trajectory=rel,
        ended=episode.how,
        exit_code=exit_code,
    )


def _pathsep(env: Mapping[str, str]) -> str:
    path = env.get("PATH", "")
    return f":{path}" if path else ""


def _wait_then_set(program: Program, episode: ProgramEpisode) -> None:
    program.wait()
    episode.over.set()


def _wait(event: threading.Event, timeout: float) -> None:
    """Wait for ``event`` at most ``timeout`` seconds, in short slices: a main thread asleep
    in one long wait would not see a ^C the kernel handed to another thread (with one
    episode at a time, the episode runs in the main thread)."""
    deadline = time.monotonic() + timeout
    while not event.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return
        event.wait(min(left, 0.2))
