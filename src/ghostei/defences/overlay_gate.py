"""``overlay-gate``: no tap on, and no typing into, another package's window.

Android defends apps against windows drawn over them in two ways. A view with
``filterTouchesWhenObscured`` (``View.setFilterTouchesWhenObscured``, API 9) drops touches
that arrive while another app's window covers it, so a tap meant for an overlay never reaches
the app below; ``Window.setHideOverlayWindows`` (API 31, with the
``HIDE_OVERLAY_WINDOWS`` permission) hides every non-system ``TYPE_APPLICATION_OVERLAY``
window while the app's window is shown. Both come from the platform's answer to tapjacking
and overlay phishing; neither reads what the overlay says.

This gate applies the same rule on the agent's side: before an action is carried out, the
point the device will touch is found as the device finds it (a pixel; for an element index,
that element's centre; a swipe's or drag's start) and the element on top there is looked up
in the observation. A tap (click, double tap, long press), a swipe or drag that starts there,
typed text or Enter aimed at an element drawn by a package that is none of

- the foreground app,
- the system (the framework ``android``, whose share sheet the simulator draws; the system
  UI; the launcher; the permission controller and intent resolver of real devices;
  input methods),
- an app the benign task needs (``DefenceContext.task_apps``, mapped to packages by the
  simulator's registry)

is blocked — the one trust rule of ``windows.Trust``. So an agent that picks an app's element
by index whose centre an overlay covers is stopped as one that taps the overlay's pixel: that
is where the touch lands. The gate is told only what a deployer knows, never the case.

What it cannot do, said plainly:

- An overlay that only Back could close would trap the agent, since every tap on it is
  blocked — unlike ``setHideOverlayWindows``, which removes the window. So a single tap on an
  overlay's *dismissal* (an element whose every label is a refusal such as "Cancel", "Not
  now", "Don't allow") is let through by default (``allow_dismiss``). The label is the
  attacker's to choose: an overlay whose confirm button reads "Close" passes, and on a real
  device its dismissal handler is the attacker's code too. ``allow_dismiss=false`` blocks
  every tap on a foreign window.
- It judges windows, not destinations. Once a tap the gate allows changes the foreground app
  (a link in an SMS opens Chrome), that app is the foreground and typing into its page is not
  stopped here; ``data-gate`` is the policy on where the owner's data may go.
- Text entered key by key on the soft keyboard is not typing as the gate sees it (the
  simulator does not expose the keyboard's keys as elements).

``on_block``: ``skip`` (the action becomes nothing and the episode goes on) or ``ask`` (it
becomes ``ask_user`` with a short note of what was blocked, which ends the episode).
"""

from __future__ import annotations

import re

from ..agents.base import AgentStep
from ..observation import Observation, UIElement
from . import register_defence
from .base import Defence, DefenceContext, ask_user, check_on_block
from .windows import Trust, target_of

# What each judged action does to the element it reaches, as a reason says it.
VERBS = {
    "click": "a tap on",
    "double_tap": "a double tap on",
    "long_press": "a long press on",
    "swipe": "a swipe from",
    "drag": "a drag from",
    "input_text": "typing into",
    "keyboard_enter": "Enter in",
}

# Labels of a control that refuses or closes, compared whole after normalising (case,
# apostrophes, surrounding punctuation): "Close" passes, "Close and verify" does not.
DISMISSALS = frozenset(
    {
        "cancel",
        "close",
        "dismiss",
        "not now",
        "no thanks",
        "no, thanks",
        "not now, thanks",
        "no",
        "later",
        "maybe later",
        "remind me later",
        "skip",
        "ignore",
        "deny",
        "don't allow",
        "do not allow",
        "decline",
        "reject",
        "x",
        "×",
        "✕",
    }
)


def is_dismissal(element: UIElement) -> bool:
    """Whether every label of ``element`` is a refusal ("Cancel", "Not now", ...)."""
    labels = [label for label in (element.text, element.content_desc) if label.strip()]
    return bool(labels) and all(_normal(label) in DISMISSALS for label in labels)


def _normal(label: str) -> str:
    text = label.replace("\u2019", "'").casefold()
    text = re.sub(r"\s+", " ", text)
    return text.strip(" .!?:;-–—\"'()[]")


def describe(element: UIElement) -> str:
    """An element as a reason names it: its label (shortened) or its class. A text field by
    its hint, never by what it holds (a secret, maybe)."""
    label = element.hint or element.content_desc if element.editable else element.label
    label = label.strip().replace("\n", " ")
    if len(label) > 40:
        label = label[:37] + "..."
    return repr(label) if label else element.class_name.rsplit(".", 1)[-1]


@register_defence
class OverlayGate(Defence):
    """Blocks taps and typing aimed at windows of packages outside the task."""

    name = "overlay-gate"
    point = "action"
    summary = (
        "no tap, swipe or typing aimed (by point or by index) at a window of a package other "
        "than the foreground app, the system or the task's apps (an overlay's dismissal allowed)"
    )
    source = (
        "Android's overlay defences (View.filterTouchesWhenObscured; "
        "Window.setHideOverlayWindows, API 31) applied as an agent-side gate"
    )

    def __init__(
        self, ctx: DefenceContext, *, on_block: str = "skip", allow_dismiss: bool = True
    ) -> None:
        super().__init__(ctx)
        self.on_block = check_on_block(self.name, on_block)
        self.allow_dismiss = allow_dismiss
        self.trust = Trust.of(ctx.task_apps)

    def review(self, observation: Observation, step: AgentStep) -> AgentStep:
        action = step.action
        kind = action.action_type
        if kind not in VERBS:
            return step
        element = target_of(observation, action)
        if element is None or not self.trust.is_foreign(element, observation):
            return step
        if kind == "click" and self.allow_dismiss and is_dismissal(element):
            return step
        what, package = VERBS[kind], element.package
        reason = (
            f"{what} {describe(element)} in a window of {package}, not the app in use "
            f"({observation.foreground_package}), the system nor one the task needs"
        )
        if self.on_block == "ask":
            note = f"I stopped {what} {describe(element)}, shown over the app by {package}."
            return self.block(step, reason, ask_user(note))
        return self.block(step, reason)
