"""Executing UI-grounded steps (a case's ``solution`` or ``attack_solution``) on what is shown.

Steps name elements by what a person sees (text, content-desc, hint); the executor finds the
element on the current screen and turns the step into a pixel-targeted canonical action, so
scripted episodes go through the same hit-testing as a model's taps.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..actions import Action, Direction
from ..cases.schema import Step
from ..observation import Observation, UIElement
from ..world import Owner, fill_owner

_DIRECTIONS: dict[str, Direction] = {"up": "up", "down": "down", "left": "left", "right": "right"}
SEARCH_SCROLLS = 3  # scrolls down, then as many up, to find an element off screen
# Then Back, and the search again, this many times: an app resumes where it was left (the
# thread an attacker's message opened), and the element is a screen up.
SEARCH_BACKS = 2


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


@dataclass
class Script:
    """A cursor over steps that yields one action per observation."""

    steps: list[Step]
    owner: Owner
    # Times to go Back and search again when a step's target is not found: a task's steps
    # resume in an app left on another screen; an attack's surface that is gone stays gone.
    search_backs: int = SEARCH_BACKS
    position: int = 0
    searching: int = 0  # scrolls made while looking for the current step's target
    backs: int = 0  # times gone back while looking for it
    back_first: bool = False  # back in an app after a detour: go Back before scrolling
    failed: bool = False

    @property
    def done(self) -> bool:
        return self.failed or self.position >= len(self.steps)

    @property
    def current(self) -> Step | None:
        return None if self.done else self.steps[self.position]

    def reopen(self) -> Action | None:
        """The action that opens again the app the script last opened (to come back to the
        task after a detour); None when it opened none yet."""
        opened = self._opened()
        return None if opened is None else _untargeted(self.steps[opened], self.owner)

    def retrace(self) -> None:
        """Take the steps since the app was last opened again: the detour left the app on
        another screen (its own, perhaps: an SMS's thread in Messages), so the task's place
        in it must be found again, going Back before scrolling to find each step."""
        opened = self._opened()
        if opened is not None:
            self.position = opened + 1
            self.searching = self.backs = 0
            self.back_first = True

    def _opened(self) -> int | None:
        opened = [i for i, s in enumerate(self.steps[: self.position]) if s.do == "open_app"]
        return opened[-1] if opened else None

    def next_action(self, obs: Observation) -> Action | None:
        """The action for the current step, or None when the script is over."""
        step = self.current
        if step is None:
            return None
        if step.do in ("tap", "type", "swipe_away"):
            element = find_element(step, obs)
            if element is None:
                return self._search(obs)
            self.searching = self.backs = 0
            self.back_first = False
            self.position += 1
            x, y = element.center
            if step.do == "tap":
                return Action(action_type="click", x=x, y=y)
            if step.do == "swipe_away":
                return Action(
                    action_type="swipe", x=x, y=y, x2=x, y2=max(0, element.bounds[1] - 200)
                )
            return Action(
                action_type="input_text", x=x, y=y, text=fill_owner(step.value or "", self.owner)
            )
        self.position += 1
        if step.do == "shade":  # pull the notification shade down from the status bar
            return Action(
                action_type="swipe", x=obs.width // 2, y=5, x2=obs.width // 2, y2=obs.height // 2
            )
        return _untargeted(step, self.owner)

    def _search(self, obs: Observation) -> Action | None:
        if self.back_first and self.backs < self.search_backs:
            self.backs += 1
            return Action(action_type="navigate_back")
        self.searching += 1
        if self.searching <= SEARCH_SCROLLS:
            return Action(action_type="scroll", direction="down")
        if self.searching <= 2 * SEARCH_SCROLLS:
            return Action(action_type="scroll", direction="up")
        if self.backs < self.search_backs:
            self.backs += 1
            self.searching = 0
            return Action(action_type="navigate_back")
        self.failed = True
        return None


def _untargeted(step: Step, owner: Owner) -> Action:
    value = fill_owner(step.value, owner) if step.value is not None else None
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
        case "ask":
            return Action(action_type="ask_user", text=value)
        case "refuse":
            return Action(
                action_type="refuse", text=value or "I won't do that: it could harm someone."
            )
        case _:
            return Action(action_type="finish", text=value)


_VERBS = {
    "click": "Tapping",
    "long_press": "Long-pressing",
    "double_tap": "Double-tapping",
    "swipe": "Swiping away",
    "drag": "Dragging",
}
_PLAIN = {
    "keyboard_enter": "Pressing Enter.",
    "navigate_back": "Going back.",
    "navigate_home": "Going to the home screen.",
    "wait": "Waiting.",
}


def narrate(action: Action, obs: Observation) -> str:
    """What a reference agent says of ``action``, in the neutral words a model would use:
    what it does and to which element ('Tapping "Verify".'), never why. A judge reads these
    words as it reads a model's, so they must not give away which steps are the attack's."""
    kind = action.action_type
    if kind in _VERBS:
        return f"{_VERBS[kind]} {_named(action, obs)}."
    if kind == "input_text":
        return f'Typing "{action.text}" into {_named(action, obs)}.'
    if kind == "scroll":
        return f"Scrolling {action.direction} to look for the next item."
    if kind == "open_app":
        return f"Opening {action.app_name}."
    return _PLAIN.get(kind) or action.text or "Done."


def _named(action: Action, obs: Observation) -> str:
    element = obs.target(action)
    label = element.label if element is not None else ""
    return f'"{label}"' if label else "the screen"
