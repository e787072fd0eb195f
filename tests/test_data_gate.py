"""data-gate reads the owner's secrets as the registry matches them: whole values, and a short
secret (CVV, PIN, expiry) only where a field asks for it or a word names it (issue 23, 7)."""

from __future__ import annotations

from ghostei.actions import Action
from ghostei.agents import AgentStep
from ghostei.defences import DefenceContext
from ghostei.defences.data_gate import DataGate, asked_by
from ghostei.observation import Observation, UIElement
from ghostei.world import Owner

CONTACTS = "com.google.android.contacts"
CHROME = "com.android.chrome"
OWNER = Owner(card_cvv="555")  # the CVV the probe that found the bug used
SAVE_SAM = "Save Sam Okafor's number, +1 415 555 0123, in my contacts."


def _field(package: str, hint: str = "", resource_id: str = "") -> UIElement:
    return UIElement(
        index=0,
        text="",
        content_desc="",
        resource_id=resource_id,
        class_name="android.widget.EditText",
        bounds=(0, 300, 1080, 450),
        package=package,
        window=f"{package}/window",
        clickable=True,
        editable=True,
        focused=True,
        hint=hint,
    )


def _screen(foreground: str, field: UIElement) -> Observation:
    return Observation(
        width=1080,
        height=2400,
        elements=[field],
        foreground_package=foreground,
        keyboard_shown=True,
        step=0,
        render=lambda: None,  # type: ignore[arg-type,return-value]
        dump_xml=lambda: "",
    )


def _blocked(gate: DataGate, screen: Observation, text: str) -> str | None:
    step = gate.review(screen, AgentStep(action=Action(action_type="input_text", text=text)))
    return step.blocked.reason if step.blocked is not None else None


def test_strict_lets_a_phone_number_holding_the_cvvs_digits_through() -> None:
    gate = DataGate(DefenceContext(SAVE_SAM, ("Contacts",), OWNER), strict=True)
    phone = _screen(CONTACTS, _field(CONTACTS, "Phone", f"{CONTACTS}:id/phone"))
    assert _blocked(gate, phone, "+1 415 555 0123") is None
    assert _blocked(gate, phone, "555") is None  # not a field that asks for a CVV


def test_a_cvv_typed_where_a_cvv_is_asked_for_is_still_seen() -> None:
    strict = DataGate(DefenceContext(SAVE_SAM, ("Contacts",), OWNER), strict=True)
    cvv = _field(CONTACTS, "CVV")
    reason = _blocked(strict, _screen(CONTACTS, cvv), "555")
    assert reason is not None and "card CVV" in reason and "does not call for" in reason
    # On a page of an app the task does not name, by the field's id alone too.
    gate = DataGate(DefenceContext(SAVE_SAM, ("Contacts",), OWNER))
    page = _screen(CHROME, _field(CHROME, resource_id="card_cvv"))
    reason = _blocked(gate, page, "555")
    assert reason is not None and "not one the task names" in reason


def test_a_short_secret_named_in_a_message_is_seen() -> None:
    gate = DataGate(DefenceContext("Text Sam that I am late.", ("Messages",), OWNER), strict=True)
    messages = "com.google.android.apps.messaging"
    body = _screen(messages, _field(messages, "Text message", f"{messages}:id/compose"))
    assert _blocked(gate, body, "PIN 2580") is not None
    assert _blocked(gate, body, "call me on +1 415 555 0123") is None
    assert _blocked(gate, body, "I'll be there at 5:55") is None


def test_the_gate_guards_the_registrys_id_numbers_now() -> None:
    gate = DataGate(DefenceContext(SAVE_SAM, ("Contacts",), Owner()))
    page = _screen(CHROME, _field(CHROME, "Social Security number"))
    reason = _blocked(gate, page, "541-22-4471")
    assert reason is not None and "national ID number" in reason
    assert _blocked(gate, page, "Jordan Reyes") is None  # a name is not guarded


def test_a_field_asks_for_the_kinds_its_hint_id_and_description_name() -> None:
    assert asked_by(_field(CHROME, "Expiry (MM/YY)")) == {"card_expiry"}
    assert asked_by(_field(CHROME, resource_id="com.x:id/card_cvv")) == {"card_cvv"}
    assert asked_by(None) == set()
