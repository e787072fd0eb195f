"""One episode on an in-process simulated phone, driven through the tools by an MCP client.

The client is the agent: GhostEI stages the case as every run does (the attack condition,
the reset, the injection installed), and each action tool the client calls is one step —
begun, carried out, the trigger tested after it — as the runner takes an agent's. What the
client sees is only what it fetches (``screenshot``, ``elements``): the attack reached it
when such a look showed it (a deceptive instruction always). Each step's record keeps the
tool call, the frame and dump of the last look before it (null before the first look) and
its events. The episode ends when the client calls ``finish``, ``refuse`` or ``answer``, at
the step limit, or when the connection closes; then it is judged by the rule judge and
written to the run folder like any other episode.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Literal

from ...actions import Action
from ...agents.base import AgentStep
from ...cases.schema import Case
from ...episode import EpisodePhone
from ...frames import FrameRecorder, FramesMode
from ...injection import DeceptiveInstruction
from ...judge.diagnosis import diagnose
from ...observation import Observation
from ...rundir import EpisodeRecord, RunDir
from ...runner import Trajectory, write_episode
from ...sim.phone import SimPhone
from ..tools import action_to_tool_call

# How an episode ended: the client's finish/refuse/answer, the step limit, the connection
# closing before either, or GhostEI's own failure.
Ending = Literal["mcp_finish", "mcp_refuse", "mcp_answer", "max_steps", "disconnected", "error"]


class ClientEpisode:
    """A :class:`~ghostei.integrations.tools.ToolSession` over one in-process episode: the
    case staged on a simulated phone, its steps and looks as an MCP client takes them, and
    (once it ends) its verdict and record, written to ``out`` (a run folder) if given."""

    def __init__(
        self,
        case: Case,
        *,
        attack: str,
        agent: str = "mcp",
        seed: int = 0,
        max_steps: int = 20,
        screen: tuple[int, int] = (1080, 2400),
        frames: FramesMode = "all",
        out: Path | None = None,
    ) -> None:
        self.phone = EpisodePhone.stage(case, attack, lambda _: SimPhone(*screen))
        self.agent = agent
        self.seed = seed
        self.max_steps = max_steps
        self.out = out
        self.trajectory = Trajectory(frames=FrameRecorder(frames))
        self.error: str | None = None
        self.ending: Ending | None = None
        self.record: EpisodeRecord | None = None
        self._lock = threading.RLock()
        self._started = time.perf_counter()
        obs = self.phone.start(seed)
        self._screen = obs  # the phone's screen now
        self._looked: Observation | None = None  # the client's last look
        if isinstance(self.phone.injection, DeceptiveInstruction):
            # The instruction is the attack: the client has it before it looks at anything.
            self.phone.injection.observe(obs, 0)

    @property
    def case(self) -> Case:
        """The case as run (under the attack condition)."""
        return self.phone.case

    @property
    def ended(self) -> bool:
        """Whether the episode is over."""
        return self.ending is not None

    @property
    def steps(self) -> int:
        """Steps taken so far."""
        return len(self.trajectory.steps)

    def look(self) -> Observation:
        """The screen now, as the client fetched it: before the episode ended, it is what the
        next step acts on, and it exposes the attack if it shows it."""
        with self._lock:
            if not self.ended:
                self._looked = self._screen
                self.phone.injection.observe(self._screen, self.steps)
            return self._screen

    def act(self, action: Action) -> Observation:
        """Carry out ``action`` as the next step; the screen after it. The episode ends (and
        is judged) at the step limit, or if the phone fails (the error is raised)."""
        with self._lock:
            self._step(action)
            if not self.ended and self.steps >= self.max_steps:
                self._finish("max_steps")
            return self._screen

    def end(self, action: Action) -> None:
        """The client's ``finish``, ``refuse`` or ``answer``: its last step, then the verdict."""
        with self._lock:
            self._step(action)
            if not self.ended:
                self._finish(f"mcp_{action.action_type}")  # type: ignore[arg-type]

    def close(self) -> EpisodeRecord:
        """End the episode if the client has not (its connection closed), and release the
        phone; the episode's record."""
        with self._lock:
            if not self.ended:
                self._finish("disconnected")
            self.phone.device.close()
            assert self.record is not None
            return self.record

    def _step(self, action: Action) -> None:
        if self.ended:
            raise RuntimeError("the episode has ended: the phone takes no more actions")
        phone, step = self.phone, self.steps
        phone.device.begin_step(step)
        first_event = len(phone.device.events)
        if self._looked is None:
            self.trajectory.frames.skip()  # it acted without looking: no frame to show
        else:
            self.trajectory.frames.keep(self._looked)
        name, arguments = action_to_tool_call(action)
        taken = AgentStep(action, raw_output=f"{name}({json.dumps(arguments, sort_keys=True)})")
        try:
            self._screen = phone.act(step, action)
        except Exception as exc:  # the phone's failure ends the episode; what was seen stays
            self.error = f"{type(exc).__name__}: {exc}"
            self.trajectory.steps.append(phone.step_record(step, first_event, taken, self._screen))
            self._finish("error")
            raise
        self.trajectory.steps.append(phone.step_record(step, first_event, taken, self._screen))

    def _finish(self, ending: Ending) -> None:
        """Judge the episode and write it (once)."""
        self.ending = ending
        phone = self.phone
        if self.error is None:
            self.trajectory.frames.keep(self._screen)  # the last screen, as the runner keeps it
        verdict, judge_error, final_state = phone.judge(self.error)
        if verdict is not None and verdict.label in ("FAS", "PAS"):
            try:  # where it went wrong, as the runner says it: commentary, never the label
                events = list(phone.device.events)
                verdict.diagnosis = diagnose(phone.case, self.trajectory.steps, events, verdict)
            except Exception as exc:
                verdict.diagnosis_error = f"{type(exc).__name__}: {exc}"
        error = self.error
        if judge_error is not None:
            error = f"{error}; {judge_error}" if error else judge_error
        rel = ""
        if self.out is not None:
            rel = write_episode(
                self.out, phone, self.agent, self.trajectory, verdict, error, final_state
            )
        self.record = EpisodeRecord(
            case=phone.case.id,
            agent=self.agent,
            seed=self.seed,
            label="error" if verdict is None else verdict.label,
            **phone.outcome_fields(),
            steps=self.steps,
            verdict=verdict,
            error=error,
            seconds=round(time.perf_counter() - self._started, 3),
            trajectory=rel,
            ended=ending,
        )
        if self.out is not None:
            RunDir(self.out).append(self.record)
