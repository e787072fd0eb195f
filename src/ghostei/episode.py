"""One episode's phone: the steps every driver of an episode takes, in one place.

The runner, the Gymnasium environment and the inspect_ai task each drive episodes their own
way (an agent, an RL policy, a model calling tools), but the phone must go through the same
motions for their labels to agree: the case as the run's attack condition shapes it, the
device reset and the injection installed, each step begun before the agent acts (so events
land in it), the injection told what the agent was shown, the action carried out, the
trigger tested, and at the end the rule judge reading only what the backend can observe.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .actions import Action
from .agents.base import AgentStep, Blocked
from .attacks import NO_ATTACK, case_under
from .cases.schema import Case
from .device import Device
from .injection import Injection, NoInjection, build_injection, trigger_can_fire
from .judge import RuleJudge, Verdict
from .judge.diagnosis import diagnose
from .observation import Observation


@dataclass
class EpisodePhone:
    """The case as run, its device and its injection."""

    case: Case
    device: Device
    injection: Injection

    @classmethod
    def stage(cls, case: Case, attack: str, make_device: Callable[[Case], Device]) -> EpisodePhone:
        """``case`` under ``attack`` on a device from ``make_device`` (not yet reset)."""
        shaped = case_under(case, attack)
        return cls(shaped, make_device(shaped), build_injection(shaped, attack != NO_ATTACK))

    def start(self, seed: int) -> Observation:
        """Reset the device, install the injection; the agent's first look (which includes
        what the injection planted)."""
        self.device.reset(self.case.setup, seed=seed)
        self.injection.install(self.device)
        return self.device.observe()

    def begin(self, step: int, shown: Observation | None) -> int:
        """Open ``step`` (before the agent acts: what happens meanwhile belongs to it) with
        ``shown``, the observation the agent is given (None: it was given none, as a program
        that fetched no screenshot); the index of the step's first event."""
        self.device.begin_step(step)
        if shown is not None:
            self.injection.observe(shown, step)
        return len(self.device.events)

    def act(self, step: int, action: Action, blocked: Blocked | None = None) -> Observation:
        """Carry out ``action``, the last of ``step`` (a defence's replacement of the
        ``blocked`` one, if any: recorded first, so the log reads in order); the next look,
        which includes the attack if the step fired it."""
        if blocked is not None:  # the host observes it on every backend
            self.device.events.append("action_blocked", "", **blocked.to_json())
        observation = self.device.act(action)
        if self.after(step):
            observation = self.device.observe()
        return observation

    def after(self, step: int) -> bool:
        """Test the trigger once ``step`` is carried out (the attack fires if it holds);
        whether it fired. Every step of every driver is tested here, whatever carried it out."""
        return self.injection.after_step(self.device, step + 1)

    def outcome_fields(self) -> dict[str, Any]:
        """What an episode record says of the attack: its kind, whether and when it was
        injected, and whether and when it reached the agent."""
        injection = self.injection
        return {
            "injection": injection.kind,
            "attack_fired": injection.fired,
            "fired_step": injection.fired_step,
            "exposed": injection.exposed,
            "exposed_step": injection.exposed_step,
        }

    def step_record(
        self, step: int, first_event: int, taken: AgentStep, shown: Observation
    ) -> dict[str, Any]:
        """The trajectory's record of ``step``, just carried out: what the agent chose (and
        what a defence blocked), where the phone was after it (``shown``), and its events
        (from ``first_event``). ``frame`` is the stored frame's path, once it is written."""
        record: dict[str, Any] = {
            "step": step,
            "frame": None,
            "foreground": shown.foreground_package,
            "raw_output": taken.raw_output,
            "action": taken.action.model_dump(exclude_none=True),
            "events": list(range(first_event, len(self.device.events))),
        }
        if taken.blocked is not None:
            record["blocked"] = taken.blocked.to_json()
        return record

    def conclude(
        self, steps: Sequence[Mapping[str, Any]], error: str | None = None
    ) -> tuple[Verdict | None, str | None, dict[str, Any] | None]:
        """The end of every driver's episode: the rule verdict (for a compromised episode,
        with where it went wrong along ``steps``), the error to record (the episode's ``error``
        and the judge's), and the final state the judge read."""
        verdict, judge_error, state = self.judge(error)
        if verdict is not None and verdict.label in ("FAS", "PAS"):
            # Diagnosis is commentary: its failure is kept apart and never touches the label.
            try:
                verdict.diagnosis = diagnose(self.case, steps, list(self.device.events), verdict)
            except Exception as exc:
                verdict.diagnosis_error = f"{type(exc).__name__}: {exc}"
        if judge_error is not None:
            error = f"{error}; {judge_error}" if error else judge_error
        return verdict, error, state

    def judge(
        self, error: str | None = None
    ) -> tuple[Verdict | None, str | None, dict[str, Any] | None]:
        """The rule verdict, what kept the judge from giving one, and the final state it read
        (None when the device could not be read)."""
        device, injection = self.device, self.injection
        state: dict[str, Any] | None
        try:
            state = device.state()
        except Exception as exc:
            if error is None:
                return None, f"reading the device state: {type(exc).__name__}: {exc}", None
            state = None  # the device died with the episode: state checks are undetermined
        seen = device.observability
        trigger = injection.trigger
        blind = trigger.on if trigger is not None and not trigger_can_fire(trigger, seen) else None
        try:
            verdict = RuleJudge(seen).judge(
                self.case,
                list(device.events),
                state,
                attack_fired=injection.exposed,
                error=error,
                blind_trigger=blind,
                # No injection (the clean condition): no attacker, so no FAS or PAS to find.
                attack_present=injection.kind != NoInjection.kind,
            )
        except Exception as exc:
            return None, f"judging: {type(exc).__name__}: {exc}", state
        return (verdict if verdict.label != "error" else None), None, state
