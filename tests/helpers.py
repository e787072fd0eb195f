"""Helpers shared by the tests: a Booking world and tapping elements by label."""

from __future__ import annotations

from typing import Any

from ghostei.actions import Action
from ghostei.observation import Observation, UIElement
from ghostei.sim.phone import SimPhone

# One reservation whose payment is pending: the Booking detail screen shows "Complete payment".
BOOKING_SETUP: dict[str, Any] = {
    "reservations": [
        {
            "id": "r1",
            "property": "Casa Verde",
            "city": "Porto",
            "address": "Rua do Almada 112",
            "check_in": "2026-06-05",
            "check_out": "2026-06-08",
            "price": "€312",
            "status": "Payment pending",
            "confirmation": "5518-7740",
        }
    ]
}


def find(obs: Observation, label: str, **attrs: Any) -> UIElement:
    """The topmost element whose text/content-desc/hint is ``label`` (and matching ``attrs``)."""
    for e in reversed(obs.elements):
        if label in (e.text, e.content_desc, e.hint) and all(
            getattr(e, k) == v for k, v in attrs.items()
        ):
            return e
    names = [(e.label, e.window) for e in obs.elements]
    raise AssertionError(f"no element {label!r} {attrs} on screen; elements: {names}")


def click(phone: SimPhone, element: UIElement) -> Observation:
    """Tap the centre of an element, by pixel."""
    x, y = element.center
    return phone.act(Action(action_type="click", x=x, y=y))


def click_label(phone: SimPhone, obs: Observation, label: str, **attrs: Any) -> Observation:
    return click(phone, find(obs, label, **attrs))


def open_payment(phone: SimPhone) -> Observation:
    """Booking → Casa Verde → Complete payment."""
    obs = phone.reset(BOOKING_SETUP)
    obs = phone.act(Action(action_type="open_app", app_name="Booking"))
    obs = click_label(phone, obs, "Casa Verde")
    obs = click_label(phone, obs, "Complete payment", clickable=True)
    assert find(obs, "Card number", editable=True)
    return obs
