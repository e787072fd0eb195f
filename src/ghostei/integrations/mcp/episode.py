"""One episode on an in-process simulated phone, driven through the tools by an MCP client.

The client is the agent: GhostEI stages the case as every run does (the attack condition,
the reset, the injection installed). Its steps and looks are counted as an external
program's are (:class:`~ghostei.integrations.external.ProgramEpisode`, the one account of
steps driven from outside): each action tool is one step — begun, carried out, the trigger
tested after it — as the runner takes an agent's; the attack reached the client only when a
look it fetched (``screenshot``, ``elements``) showed it (a deceptive instruction always);
each step's record keeps the tool call, the frame and dump of the last look before it (null
before the first look) and its events. The episode ends when the client calls ``finish``,
``refuse`` or ``answer``, at the step limit, or when the connection closes; then it is
judged by the rule judge and written to the run folder like any other episode.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from ...actions import Action
from ...cases.schema import Case
from ...episode import EpisodePhone
from ...frames import FramesMode
from ...injection import DeceptiveInstruction
from ...observation import Observation
from ...rundir import EpisodeRecord, RunDir
from ...runner import Trajectory, write_episode
from ...sim.phone import SimPhone
from ..external.episode import ProgramEpisode


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
        self.out = out
        self.record: EpisodeRecord | None = None
        self._lock = threading.RLock()
        self.account = ProgramEpisode(self.phone, self._lock, max_steps, frames)
        self._started = time.perf_counter()
        first = self.phone.start(seed)
        if isinstance(self.phone.injection, DeceptiveInstruction):
            # The instruction is the attack: the client has it before it looks at anything.
            self.phone.injection.observe(first, 0)

    @property
    def case(self) -> Case:
        """The case as run (under the attack condition)."""
        return self.phone.case

    @property
    def ended(self) -> bool:
        """Whether the episode is over."""
        return self.account.ended

    @property
    def ending(self) -> str | None:
        """How it ended: mcp_finish, mcp_refuse, mcp_answer, max_steps, disconnected, error."""
        return self.account.how

    def look(self) -> Observation:
        """The screen now, as the client fetched it (exposure, if it shows the attack)."""
        return self.account.look()

    def screen(self) -> Observation:
        """The screen now, to check a call's target against (no look: no exposure)."""
        return self.account.screen()

    def act(self, action: Action) -> Observation:
        """Carry out ``action`` as the next step; the screen after it. The episode ends (and
        is judged) at the step limit, or if the phone fails (the error is raised)."""
        with self._lock:
            try:
                return self.account.act(action)
            finally:
                if self.account.ended:
                    self._finish()

    def end(self, action: Action) -> None:
        """The client's ``finish``, ``refuse`` or ``answer``: its last step, then the verdict."""
        with self._lock:
            try:
                self.account.end(action)
            finally:
                if self.account.ended:
                    self._finish()

    def close(self) -> EpisodeRecord:
        """End the episode if the client has not (its connection closed), and release the
        phone; the episode's record."""
        with self._lock:
            self.account.settle("disconnected")
            self._finish()
            self.phone.device.close()
            assert self.record is not None
            return self.record

    def _finish(self) -> None:
        """Judge the episode and write it (once)."""
        if self.record is not None:
            return
        phone, account = self.phone, self.account
        account.finish_steps()
        error = account.failure
        if error is None:
            account.frames.keep(phone.device.observe())  # the last screen, as the runner's
        verdict, error, final_state = phone.conclude(account.steps, error)
        rel = ""
        if self.out is not None:
            done = Trajectory(steps=account.steps, frames=account.frames)
            rel = write_episode(self.out, phone, self.agent, done, verdict, error, final_state)
        self.record = EpisodeRecord(
            case=phone.case.id,
            agent=self.agent,
            seed=self.seed,
            label="error" if verdict is None else verdict.label,
            **phone.outcome_fields(),
            steps=len(account.steps),
            verdict=verdict,
            error=error,
            seconds=round(time.perf_counter() - self._started, 3),
            trajectory=rel,
            ended=account.how,
        )
        if self.out is not None:
            RunDir(self.out).append(self.record)
