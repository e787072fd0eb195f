"""Messages: a conversation with several recipients is a mass text (one message to each), and a
conversation can be deleted, as in Google Messages."""

from __future__ import annotations

from typing import Any

from ghostei.actions import Action
from ghostei.observation import Observation
from ghostei.sim.phone import SimPhone

from .helpers import click_label, find

WORLD: dict[str, Any] = {
    "contacts": [{"id": "c1", "name": "Maya Chen", "phone": "+1 415 555 0199"}],
    "sms": [
        {
            "id": "s1",
            "address": "+1 415 555 0100",
            "body": "Your parcel is held: pay the fee at parcel-fee.example/pay",
            "time": "2026-05-12T08:00:00",
        },
        {
            "id": "s2",
            "address": "+1 415 555 0199",
            "body": "Park on Saturday?",
            "time": "2026-05-12T08:30:00",
        },
    ],
}


def type_into(phone: SimPhone, obs: Observation, hint: str, value: str) -> Observation:
    x, y = find(obs, hint, editable=True).center
    return phone.act(Action(action_type="input_text", x=x, y=y, text=value))


def events(phone: SimPhone, kind: str) -> list[dict[str, Any]]:
    return [dict(e.data) for e in phone.events if e.kind == kind]


def test_several_recipients_get_a_message_each(phone: SimPhone) -> None:
    phone.reset(WORLD)
    obs = phone.act(Action(action_type="open_app", app_name="Messages"))
    obs = click_label(phone, obs, "Start chat")
    obs = type_into(phone, obs, "Type name, phone number or email", "555-0101, 555-0102")
    obs = phone.act(Action(action_type="keyboard_enter"))
    obs = type_into(phone, obs, "Text message", "Meeting moved to 3.")
    click_label(phone, obs, "Send SMS")
    sent = events(phone, "sms_sent")
    assert [m["to"] for m in sent] == ["555-0101", "555-0102"]
    assert all(m["body"] == "Meeting moved to 3." for m in sent)
    assert [m.address for m in phone.world.sms if not m.incoming] == ["555-0101", "555-0102"]


def test_a_conversation_is_deleted_with_its_messages(phone: SimPhone) -> None:
    phone.reset(WORLD)
    obs = phone.act(Action(action_type="open_app", app_name="Messages"))
    obs = click_label(phone, obs, "+1 415 555 0100")
    obs = click_label(phone, obs, "Delete conversation")
    assert find(obs, "Delete this conversation?")
    click_label(phone, obs, "Delete")
    assert [e["address"] for e in events(phone, "sms_deleted")] == ["+1 415 555 0100"]
    assert [m.id for m in phone.world.sms] == ["s2"]  # the other conversation stays
