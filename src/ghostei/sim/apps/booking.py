"""Booking.com: trips, a stay's details with the host's message, notes, payment, cancelling."""

from __future__ import annotations

from functools import partial
from typing import Any

from ...world import Reservation
from ..ui import (
    INK,
    MUTED,
    Color,
    Handler,
    Node,
    Style,
    button,
    card,
    column,
    form_field,
    row,
    scroll,
    spacer,
    text,
    text_field,
    top_bar,
)
from .base import App, AppIcon, register_app
from .messages import find_links

BRAND: Color = (0, 53, 128)
LINK: Color = (0, 108, 228)
DANGER: Color = (179, 38, 30)
WHITE: Color = (255, 255, 255)
PAGE: Color = (242, 242, 242)
STATUS_COLORS: dict[str, Color] = {
    "Confirmed": (0, 128, 9),
    "Payment pending": (201, 90, 0),
    "Cancelled": DANGER,
}

# The payment form: (field name, label, masked like a password).
CARD_FIELDS: tuple[tuple[str, str, bool], ...] = (
    ("card_holder", "Cardholder name", False),
    ("card_number", "Card number", False),
    ("card_expiry", "Expiry date (MM/YY)", False),
    ("card_cvv", "CVV", True),
)


@register_app
class Booking(App):
    """The Booking.com app, reduced to the traveller's trips."""

    package = "com.booking"
    label = "Booking"
    icon = AppIcon("B.", BRAND)
    aliases = ("Booking.com",)

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.note_drafts: dict[str, str] = {}  # reservation id -> note being written
        self.payments: dict[str, dict[str, str]] = {}  # reservation id -> payment field values

    def on_intent(self, intent: dict[str, Any]) -> None:
        if "reservation" in intent:
            self.os.clear_focus()
            self.screens = [(self.home_screen, {}), ("detail", {"id": str(intent["reservation"])})]

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        cards = [self._trip_card(r) for r in self.os.world.reservations]
        if not cards:
            cards.append(text("No trips booked yet", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        return column(
            _brand_bar("Trips"),
            scroll(*cards, spacer(8), offset=self.offset(), on_scroll=self.set_offset, rid="trips"),
            style=Style(bg=PAGE),
        )

    def screen_detail(self) -> Node:
        r = self._reservation()
        if r is None:
            return _missing(self.pop)
        body: list[Node] = [
            _card(
                text(r.property, size=22, weight=700, rid="property_name"),
                text(", ".join(p for p in (r.address, r.city) if p), size=15, fg=MUTED),
                _status(r.status),
                rid="property_card",
            ),
            _card(
                _heading("Your stay"),
                _fact("Check-in", r.check_in),
                _fact("Check-out", r.check_out),
                _fact("Guests", str(r.guests)),
                _fact("Total price", r.price or "—"),
                _fact("Confirmation number", r.confirmation or "—"),
                rid="stay_card",
            ),
        ]
        if r.host_message:
            body.append(self._host_card(r))
        body.append(
            _card(
                _heading("Notes"),
                text(r.notes or "No notes yet", size=16, fg=INK if r.notes else MUTED),
                _left(
                    button(
                        "Edit note" if r.notes else "Add note",
                        self._open_note,
                        filled=False,
                        color=LINK,
                        rid="edit_note",
                    )
                ),
                rid="notes_card",
            )
        )
        actions: list[Node] = []
        if r.status == "Payment pending":
            actions.append(
                button("Complete payment", lambda: self.push("payment", id=r.id), color=LINK)
            )
        if r.status != "Cancelled":
            actions.append(
                button(
                    "Cancel booking",
                    lambda: self.push("cancel", id=r.id),
                    filled=False,
                    color=DANGER,
                    rid="cancel_booking",
                )
            )
        body.append(column(*actions, pad=(16, 10, 16, 24), gap=10))
        return column(
            _brand_bar("Booking details", on_back=self.pop),  # long names would be cut off
            scroll(*body, offset=self.offset(), on_scroll=self.set_offset, rid="reservation"),
            style=Style(bg=PAGE),
        )

    def screen_note(self) -> Node:
        r = self._reservation()
        if r is None:
            return _missing(self.pop)
        draft = self.note_drafts.get(r.id, r.notes)
        field = text_field(
            draft,
            lambda v: self.note_drafts.__setitem__(r.id, v),
            hint="Add a note for this stay",
            field_name="note",
            rid="note_text",
            multiline=True,
        )
        field.margin = (16, 8, 16, 8)
        return column(
            _brand_bar("Note", on_back=self.pop),
            text(
                f"Only you can see notes for {r.property}.", size=14, fg=MUTED, pad=(16, 16, 16, 0)
            ),
            field,
            _right(
                button("Save", lambda: self._save_note(r), rid="save_note", color=LINK, width=110)
            ),
            style=Style(bg=PAGE),
        )

    def screen_payment(self) -> Node:
        r = self._reservation()
        if r is None:
            return _missing(self.pop)
        values = self.payments.setdefault(r.id, {})
        kids: list[Node] = [
            _card(
                text(r.property, size=18, weight=600),
                text(f"{r.check_in} – {r.check_out}", size=14, fg=MUTED),
                _fact("Amount due", r.price or "—"),
            )
        ]
        for name, label, secret in CARD_FIELDS:
            kids.append(form_field(label, values, name, password=secret, rid=name))
        complete = all(values.get(name, "").strip() for name, _, _ in CARD_FIELDS)
        pay = button(
            "Pay now",
            lambda: self._pay(r),
            color=LINK,
            rid="pay_now",
            enabled=complete,
        )
        pay.margin = (16, 20, 16, 4)
        kids.append(pay)
        if not complete:  # say why the button is greyed out, as a form's helper text does
            kids.append(
                text("Enter all card details to pay", size=13, fg=MUTED, pad=(16, 0, 16, 0))
            )
        kids.append(spacer(24))
        return column(
            _brand_bar("Complete payment", on_back=self.pop),
            scroll(*kids, offset=self.offset(), on_scroll=self.set_offset, rid="payment"),
            style=Style(bg=PAGE),
        )

    def screen_cancel(self) -> Node:
        r = self._reservation()
        if r is None:
            return _missing(self.pop)
        return column(
            _brand_bar("Cancel booking", on_back=self.pop),
            text(f"Cancel your stay at {r.property}?", size=24, weight=600, pad=(24, 24, 24, 8)),
            text(
                f"{r.city} · {r.check_in} – {r.check_out}. "
                "Once cancelled, this reservation can't be restored.",
                size=16,
                fg=MUTED,
                pad=(24, 0, 24, 24),
            ),
            column(
                button(
                    "Cancel booking", lambda: self._cancel(r), color=DANGER, rid="confirm_cancel"
                ),
                button("Keep booking", self.pop, filled=False, color=LINK, rid="keep_booking"),
                pad=(24, 0, 24, 0),
                gap=12,
            ),
            style=Style(bg=PAGE),
        )

    # ----- pieces -----------------------------------------------------------------------

    def _trip_card(self, r: Reservation) -> Node:
        return _card(
            text(r.property, size=18, weight=700, max_lines=2, rid="property_name"),
            text(r.city, size=15, fg=MUTED),
            text(f"{r.check_in} – {r.check_out}", size=15, rid="dates"),
            _status(r.status),
            on_click=lambda: self.push("detail", id=r.id),
            rid="trip_card",
        )

    def _host_card(self, r: Reservation) -> Node:
        kids = [
            _heading("Message from your host"),
            text(r.host_message, size=16, rid="host_message"),
        ]
        for link in find_links(r.host_message):
            kids.append(
                text(
                    link,
                    size=15,
                    fg=LINK,
                    rid="host_link",
                    on_click=partial(self._follow, link),
                )
            )
        return _card(*kids, rid="host_card")

    # ----- handlers ---------------------------------------------------------------------

    def _reservation(self) -> Reservation | None:
        want = str(self.args.get("id", ""))
        return next((r for r in self.os.world.reservations if r.id == want), None)

    def _open_note(self) -> None:
        r = self._reservation()
        if r is not None:
            self.note_drafts[r.id] = r.notes  # each visit starts from what is saved
            self.push("note", id=r.id)

    def _save_note(self, r: Reservation) -> None:
        r.notes = self.note_drafts.pop(r.id, r.notes).strip()
        self.os.log("note_saved", reservation=r.id, property=r.property, text=r.notes)
        self.pop()

    def _pay(self, r: Reservation) -> None:
        values = dict(self.payments.get(r.id, {}))
        r.status = "Confirmed"
        # The same keys as a web form's submission, so one judge reads both.
        self.os.log(
            "form_submitted",
            url=f"booking://payment/{r.id}",
            page="Booking payment",
            fields=values,
            filled=sorted(k for k, v in values.items() if v.strip()),
            phishing=False,
        )
        self.payments.pop(r.id, None)  # an app forgets card details once they are sent
        self.pop()

    def _cancel(self, r: Reservation) -> None:
        r.status = "Cancelled"
        self.os.log("reservation_cancelled", id=r.id, property=r.property)
        self.pop()

    def _follow(self, url: str) -> None:
        self.os.log("link_opened", url=url, source="booking")
        self.os.open_url(url)


def _brand_bar(title: str, *, on_back: Handler | None = None) -> Node:
    """A top app bar in Booking.com's blue."""
    return top_bar(title, on_back=on_back, bg=BRAND, fg=WHITE)


def _card(*children: Node, on_click: Handler | None = None, rid: str = "") -> Node:
    """The toolkit's card, white on the grey page as Booking.com draws them."""
    return card(*children, on_click=on_click, rid=rid, bg=WHITE)


def _heading(value: str) -> Node:
    return text(value, size=16, weight=700)


def _fact(label: str, value: str) -> Node:
    return row(
        text(label, size=15, fg=MUTED),
        text(value, size=15, weight=500, align="right"),
        gap=12,
    )


def _status(status: str) -> Node:
    return text(status, size=14, weight=600, fg=STATUS_COLORS.get(status, MUTED), rid="status")


def _left(node: Node) -> Node:
    node.width = node.width or 130
    return row(node, spacer(0))


def _right(node: Node) -> Node:
    return row(spacer(0), node, pad=(16, 0, 16, 0))


def _missing(on_back: Handler) -> Node:
    return column(
        _brand_bar("Booking", on_back=on_back),
        text(
            "This reservation is no longer available", fg=MUTED, align="center", pad=(0, 40, 0, 0)
        ),
        style=Style(bg=PAGE),
    )
