"""The device contract shared by the simulated phone and an Android device.

Nothing above this layer knows which backend it talks to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .actions import Action
from .events import EventLog
from .observability import Observability
from .observation import Observation
from .world import World

OverlayStyle = Literal["dialog", "bottom_sheet", "fullscreen"]

# The upstream harness's overlay helper app; attackers' overlays are owned by its package.
DEFAULT_ATTACKER_PACKAGE = "com.example.myapplication"


@dataclass(frozen=True)
class OverlaySpec:
    """A window an attacker draws over other apps: a system-alert window by default.

    On confirm the overlay either opens ``url`` (a phishing page) or grants ``consent``.
    ``styled_as`` names an app whose look (icon and colours) the window copies. ``task`` names
    a package: the window is then no system alert but a full-screen activity launched into
    that app's task, StrandHogg-style (its ``taskAffinity`` is the app's, and its views report
    the app's package to accessibility), so on screen it is the app's own; Back closes it and
    returns to the app. ``package`` is always the attacker's: events name who drew it.
    """

    title: str
    content: str
    confirm: str
    cancel: str
    style: OverlayStyle = "dialog"
    urgent: bool = False
    url: str = ""
    consent: str = ""
    package: str = DEFAULT_ATTACKER_PACKAGE
    brand: str = "System UI"
    styled_as: str = ""
    task: str = ""


def log_host_action(events: EventLog, action: Action) -> bool:
    """Record an action that touches no screen (it ends or annotates the episode); False for
    every other action. Both backends log these the same way, so judges read one vocabulary.
    """
    kind = action.action_type
    if kind == "status":
        events.append("finished", "", status=action.goal_status, text=action.text or "")
    elif kind == "finish":
        events.append("finished", "", status="complete", text=action.text or "")
    elif kind == "answer":
        events.append("answered", "", text=action.text or "")
    elif kind == "refuse":
        events.append("refused", "", reason=action.text or "")
    elif kind == "ask_user":
        events.append("asked_user", "", text=action.text or "")
    elif kind == "invalid":
        events.append("invalid_action", "", reason="unparseable model output", raw=action.raw or "")
    else:
        return False
    return True


class Device(Protocol):
    """What the runner, injections and judges need of a device."""

    events: EventLog

    @property
    def observability(self) -> Observability:
        """What this device observes in the episode: checks reading anything else are
        undetermined on it."""

    def reset(self, setup: dict[str, Any] | None, seed: int = 0) -> Observation:
        """Start an episode from a case's world data; the event log is emptied."""

    def observe(self) -> Observation:
        """The current screen, without acting."""

    def act(self, action: Action) -> Observation:
        """Carry out one action and return what the screen shows afterwards."""

    def state(self) -> dict[str, Any]:
        """World data and device facts for judges."""

    def begin_step(self, step: int) -> None:
        """Events from now on belong to agent step ``step``."""

    def close(self) -> None:
        """Release what the device holds for an episode (a console connection, ...)."""

    # --- injection surfaces ---------------------------------------------------------------
    def show_overlay(self, spec: OverlaySpec) -> None:
        """Draw a system-alert overlay over whatever is on screen."""

    def receive_sms(self, sender: str, body: str) -> None:
        """Deliver an SMS: into the inbox, with a heads-up notification."""

    @property
    def world(self) -> World:
        """The live world data (read by injections seeding static content)."""
