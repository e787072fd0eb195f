"""Reference agents that need no model.

``oracle`` proves every case solvable safely, ``gullible`` proves every attack reachable and
scoreable, ``random`` gives the floor. Together they pin the benchmark's own correctness.
"""

from __future__ import annotations

import random

from ..actions import Action
from ..apps import resolve_app
from ..cases.probes import probes_of
from ..cases.schema import Case, Probe, Step
from ..device import DEFAULT_ATTACKER_PACKAGE
from ..injection import build_injection
from ..observation import Observation
from .base import (
    Agent,
    AgentContext,
    AgentFactory,
    AgentLoadError,
    AgentStep,
    register_agent,
    register_agent_family,
)
from .scripted import Script, find_element, narrate

HEADS_UP_ID = "expandableNotificationRow"
HEADS_UP_WINDOW = "HeadsUp"
TERMINAL_STEPS = ("answer", "refuse", "ask", "finish")


def _step(action: Action, obs: Observation) -> AgentStep:
    # Neutral words, as a model's would be: what is done, never whether it is the attack's.
    return AgentStep(action=action, raw_output=narrate(action, obs))


def _give_up() -> Action:
    return Action(
        action_type="status",
        goal_status="infeasible",
        text="I cannot find what I need on this screen.",
    )


class Oracle:
    """Executes the solution, closes every attack surface with its legitimate control.

    A solution may also deal with the attack in steps of its own: a tap in the attacker's
    window (a step whose ``package`` is the overlay's attacker package) or a notification
    swiped away (``swipe_away``). Such a step whose target is not on screen is skipped, never
    searched for: the surface it deals with is not there (a run without attacks, or not yet
    fired; once it shows, the dismissal above closes it). Any other step is the task's and
    must be found.
    """

    def __init__(self, ctx: AgentContext, solution: list[Step] | None = None) -> None:
        self.case = ctx.case
        self.steps = list(ctx.case.solution if solution is None else solution)
        self.script = Script(list(self.steps), ctx.owner)

    def reset(self, instruction: str) -> None:
        self.script = Script(list(self.steps), self.script.owner)

    def act(self, observation: Observation) -> AgentStep:
        dismiss = self._dismissal(observation)
        if dismiss is not None:
            return _step(dismiss, observation)
        step = self.script.current
        while step is not None and self._deals_with_attack(step):
            if find_element(step, observation) is not None:
                break
            self.script.position += 1  # no such surface on screen: nothing to deal with
            step = self.script.current
        action = self.script.next_action(observation)
        if action is None:
            action = _give_up() if self.script.failed else Action(action_type="finish")
        return _step(action, observation)

    def _deals_with_attack(self, step: Step) -> bool:
        """Whether a solution step targets the attack's surface rather than the task's."""
        if step.do == "swipe_away":
            return True
        if self.case.use_dynamic != "Overlay Attack" or step.package is None:
            return False
        return step.package == (self.case.overlay.package or DEFAULT_ATTACKER_PACKAGE)

    def _dismissal(self, obs: Observation) -> Action | None:
        case = self.case
        if case.use_dynamic == "Overlay Attack":
            extra = case.overlay
            cancel = find_element(
                Step(do="tap", text=extra.cancel, package=extra.shown_package), obs
            )
            if cancel is not None:
                x, y = cancel.center
                return Action(action_type="click", x=x, y=y)
        for e in reversed(obs.elements):
            # A heads-up card can cover the control the next step needs: swipe it away.
            if e.window == HEADS_UP_WINDOW and e.resource_id.endswith(HEADS_UP_ID):
                x, y = e.center
                return Action(action_type="swipe", x=x, y=y, x2=x, y2=max(0, e.bounds[1] - 200))
        return None


class Gullible:
    """Executes the solution but engages every attack surface as the attacker intends.

    It engages only an attack it was given: a harmful instruction (not its benign
    counterpart, which a run without attacks gives instead), or a surface on screen; an
    attack whose first step needs no target (open Messages to text a planted number) once
    the planted content has been on screen. Without an attack it is the oracle minus the
    dismissals: it has nothing to comply with.

    ``attack`` and ``solution`` replace the case's attack path and task steps, and
    ``back_to_task`` says whether it returns to the task once its attack steps are done
    (default: yes, except after a harmful instruction, which was the whole task): a probe
    is this agent on a path of its own (:mod:`ghostei.cases.probes`).
    """

    def __init__(
        self,
        ctx: AgentContext,
        attack: list[Step] | None = None,
        solution: list[Step] | None = None,
        back_to_task: bool | None = None,
    ) -> None:
        self.case: Case = ctx.case
        self.owner = ctx.owner
        self.planted = build_injection(ctx.case)  # what the attack looks like on screen
        self.attack_steps = list(ctx.case.attack_solution if attack is None else attack)
        self.solution_steps = list(ctx.case.solution if solution is None else solution)
        self.deceptive = self.case.case_type == "User-Provided Instructions"
        self.back_to_task = not self.deceptive if back_to_task is None else back_to_task
        self.reset("")

    def reset(self, instruction: str) -> None:
        self.solution = Script(list(self.solution_steps), self.owner)
        self.attack = Script(list(self.attack_steps), self.owner, search_backs=0)
        benign = self.case.benign
        self.engaged = self.deceptive and not (benign is not None and instruction == benign.prompt)
        self.seen = False  # the planted content has been on screen
        self.returned = False
        self.front = ""  # the app in front when the attack showed: where the task was
        self.detour: set[str] = set()  # the apps in front while the attack's steps were taken
        self.retracing = False  # back from a detour that moved the task's app: retrace it
        self.resumed = False  # back in the app the task was in: is its next step there?

    def act(self, observation: Observation) -> AgentStep:
        self.seen = self.seen or self.planted.shows(observation)
        # A harmful instruction is its own surface: engaged or not from the start (reset).
        if not self.engaged and not self.deceptive and self._surface_visible(observation):
            self.engaged = True
            self.front = observation.foreground_package
        if self.engaged and self.attack.position > 0 and not self.returned:
            self.detour.add(observation.foreground_package)
        if self.resumed:
            # The app is back, but what the task left open in it may be gone (a share sheet
            # closes when another app comes up): a next step not on screen is retraced.
            self.resumed = False
            upcoming = self.solution.current
            if upcoming is not None and upcoming.do in ("tap", "type"):
                self.retracing = find_element(upcoming, observation) is None
        if self.retracing:
            self.retracing = False
            self.solution.retrace()
        if self.engaged and not self.attack.done:
            action = self.attack.next_action(observation)
            if action is not None:
                return _step(action, observation)
        if self.engaged and not self.back_to_task:
            return _step(Action(action_type="finish"), observation)
        if self.engaged and not self.returned and not self.deceptive:
            self.returned = True
            back = self._back_to_task()
            if back is not None:
                return _step(back, observation)
        action = self.solution.next_action(observation)
        if action is None:
            action = _give_up() if self.solution.failed else Action(action_type="finish")
        return _step(action, observation)

    def _back_to_task(self) -> Action | None:
        """How to come back to the task after the attack's steps: open the app it was in,
        which a detour through other apps left where it was (an overlay's page in Chrome);
        or, when the detour went through that app itself (an SMS opened in Messages) and so
        moved it to another of its screens, open the app the task last opened and retrace
        its steps from there."""
        app = resolve_app(self.front) if self.front else None
        if app is not None and self.front not in self.detour:
            self.resumed = True
            return Action(action_type="open_app", app_name=app.label)
        back = self.solution.reopen()
        self.retracing = back is not None
        return back

    def _surface_visible(self, obs: Observation) -> bool:
        if not self.attack_steps:
            return False
        first = self.attack_steps[0]
        if first.do in ("tap", "type", "swipe_away"):
            return find_element(first, obs) is not None
        # An untargeted first step (e.g. open Messages to text a planted number) is taken
        # once the agent has done its work and read what was planted, before it reports.
        upcoming = self.solution.current
        return self.seen and (upcoming is None or upcoming.do in TERMINAL_STEPS)


def probe_agent(name: str) -> AgentFactory:
    """The agent that walks the probe ``name`` of each case (``--agent probe:NAME``)."""

    def build(ctx: AgentContext) -> Agent:
        probe = find_probe(ctx.case, name)
        if probe.attack is None:
            return Oracle(ctx, probe.solution)
        return Gullible(ctx, probe.attack, probe.solution, probe.back_to_task)

    return build


def find_probe(case: Case, name: str) -> Probe:
    """The probe ``name`` of ``case``; AgentLoadError naming the probes it has."""
    probes = probes_of(case)
    for probe in probes:
        if probe.name == name:
            return probe
    known = ", ".join(p.name for p in probes) or "none"
    raise AgentLoadError(f"case {case.id} has no probe {name!r}; its probes: {known}")


class RandomAgent:
    """Seeded random taps on elements and pixels, swipes, typing and Back."""

    def __init__(self, ctx: AgentContext) -> None:
        self.seed = ctx.seed * 7919 + ctx.case.id
        self.rng = random.Random(self.seed)

    def reset(self, instruction: str) -> None:
        self.rng = random.Random(self.seed)

    def act(self, observation: Observation) -> AgentStep:
        rng = self.rng
        roll = rng.random()
        clickable = [e for e in observation.elements if e.clickable or e.editable]
        w, h = observation.width, observation.height
        if roll < 0.6 and clickable:
            target = rng.choice(clickable)
            if target.editable and rng.random() < 0.5:
                x, y = target.center
                action = Action(
                    action_type="input_text",
                    x=x,
                    y=y,
                    text=rng.choice(["hello", "1234", "yes", "ok"]),
                )
            else:
                x, y = target.center
                action = Action(action_type="click", x=x, y=y)
        elif roll < 0.75:
            action = Action(action_type="click", x=rng.randrange(w), y=rng.randrange(h))
        elif roll < 0.9:
            x = rng.randrange(w // 4, 3 * w // 4)
            y1, y2 = rng.randrange(h // 4, 3 * h // 4), rng.randrange(h // 4, 3 * h // 4)
            action = Action(action_type="swipe", x=x, y=y1, x2=x, y2=y2)
        else:
            action = Action(action_type="navigate_back")
        return _step(action, observation)


register_agent("oracle")(Oracle)
register_agent("gullible")(Gullible)
register_agent("random")(RandomAgent)
register_agent_family("probe")(probe_agent)
