"""Executing UI-grounded steps (a case's ``solution`` or ``attack_solution``) on what is shown.

Steps name elements by what a person sees (text, content-desc, hint); the executor finds the
element on the current screen and turns the step into a pixel-targeted canonical action, so
scripted episodes go through the same hit-testing as a model's taps.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from ..actions import Action, Direction
from ..cases.schema import Step
from ..observation import Observation, UIElement
from ..world import Owner

_DIRECTIONS: dict[str, Direction] = {"up": "up", "down": "down", "left": "left", "right": "right"}
SEARCH_SCROLLS = 3  # scrolls down, then as many up, to find an element off screen


def find_element(step: Step, obs: Observation) -> UIElement | None:
    """The topmost element matching a step's target, or None."""
    for e in reversed(obs.elements):
        if step.package is not None and e.package != step.package:
            continue
        if step.do == "type" and not e.editable:
            continue
        if step.text is not None and step.text.casefold() not in (
            e.text.casefold(),
            e.content_desc.casefold(),
        ):
            continue
        if step.contains is not None:
            needle = step.contains.casefold()
            if needle not in e.text.casefold() and needle not in e.content_desc.casefold():
                continue
        if step.desc is not None and step.desc.casefold() != e.content_desc.casefold():
            continue
        if step.hint is not None and step.hint.casefold() not in (
            e.hint.casefold(),
            e.content_desc.casefold(),
        ):
            continue
        return e
    return None


def fill(template: str, owner: Owner) -> str:
    """Resolve ``{owner.field}`` placeholders; other braces are left as they are."""
    out: list[str] = []
    for literal, name, _spec, _conv in string.Formatter().parse(
        template.replace("{{", "\0").replace("}}", "\1")
    ):
        out.append(literal)
        if name is None:
            continue
        head, _, attr = name.partition(".")
        if head == "owner" and attr in Owner.model_fields:
            out.append(str(getattr(owner, attr)))
        else:
            out.append("{" + name + "}")
    return "".join(out).replace("\0", "{").replace("\1", "}")


@dataclass
class Script:
    """A cursor over steps that yields one action per observation."""

    steps: list[Step]
    owner: Owner
    position: int = 0
    searching: int = 0  # scrolls made while looking for the current step's target
    failed: bool = False

    @property
    def done(self) -> bool:
        return self.failed or self.position >= len(self.steps)

    @property
    def current(self) -> Step | None:
        return None if self.done else self.steps[self.position]

    def last_app(self) -> str | None:
        """The app the script most recently opened (to return to after a detour)."""
        for step in reversed(self.steps[: self.position]):
            if step.do == "open_app":
                return step.value
        return None

    def next_action(self, obs: Observation) -> Action | None:
        """The action for the current step, or None when the script is over."""
        step = self.current
        if step is None:
            return None
        if step.do in ("tap", "type", "swipe_away"):
            element = find_element(step, obs)
            if element is None:
                return self._search(obs)
            self.searching = 0
            self.position += 1
            x, y = element.center
            if step.do == "tap":
                return Action(action_type="click", x=x, y=y)
            if step.do == "swipe_away":
                return Action(
                    action_type="swipe", x=x, y=y, x2=x, y2=max(0, element.bounds[1] - 200)
                )
            return Action(
                action_type="input_text", x=x, y=y, text=fill(step.value or "", self.owner)
            )
        self.position += 1
        if step.do == "shade":  # pull the notification shade down from the status bar
            return Action(
                action_type="swipe", x=obs.width // 2, y=5, x2=obs.width // 2, y2=obs.height // 2
            )
        return _untargeted(step, self.owner)

    def _search(self, obs: Observation) -> Action | None:
        self.searching += 1
        if self.searching <= SEARCH_SCROLLS:
            return Action(action_type="scroll", direction="down")
        if self.searching <= 2 * SEARCH_SCROLLS:
            return Action(action_type="scroll", direction="up")
        self.failed = True
        return None


def _untargeted(step: Step, owner: Owner) -> Action:
    value = fill(step.value, owner) if step.value is not None else None
    match step.do:
        case "open_app":
            return Action(action_type="open_app", app_name=value)
        case "enter":
            return Action(action_type="keyboard_enter")
        case "scroll":
            return Action(
                action_type="scroll",
                direction=_DIRECTIONS.get(value or "", "down"),
            )
        case "back":
            return Action(action_type="navigate_back")
        case "home":
            return Action(action_type="navigate_home")
        case "wait":
            return Action(action_type="wait")
        case "answer":
            return Action(action_type="answer", text=value)
        case "refuse":
            return Action(
                action_type="refuse", text=value or "I won't do that: it could harm someone."
            )
        case _:
            return Action(action_type="finish", text=value)
