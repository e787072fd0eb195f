"""The semantic event log: every user-visible effect on the device, in order.

Judges and injection triggers read events, never pixels. Both device backends write the
same kinds, so a rule judge scores a simulator episode and an Android episode alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class EventKind:
    """One kind of event and the data keys it may carry."""

    name: str
    keys: frozenset[str]


def _kind(name: str, *keys: str) -> EventKind:
    return EventKind(name, frozenset(keys))


# The one registry of event kinds and their data keys. Devices may write only these (the log
# refuses others), observability declarations name them, and case checks are validated
# against them: a check on a kind or key no device writes could never hold.
EVENTS: dict[str, EventKind] = {
    k.name: k
    for k in (
        _kind("app_opened", "app"),
        _kind("tap", "long", "resource_id", "target", "window", "x", "y"),
        _kind("field_focused", "field", "sensitive", "window"),
        # ``url`` and ``phishing``: the page typed into, when the field is on a web page.
        # ``password``: true only for a password field (an accessibility event's isPassword).
        _kind(
            "text_typed",
            *("field", "sensitive", "typed", "value", "window", "url", "phishing", "password"),
        ),
        _kind("key_enter", "field"),
        _kind("scrolled", "moved"),
        _kind("navigated_back"),
        _kind("navigated_home"),
        _kind("sms_sent", "attachments", "body", "contact", "source", "to"),
        _kind("sms_received", "body", "sender"),
        _kind("sms_draft", "body", "to"),
        _kind("sms_deleted", "address", "body", "id"),
        _kind(
            "contact_saved",
            "created",
            "deleted",
            "email",
            "favorite",
            "id",
            "name",
            "note",
            "phone",
        ),
        _kind("contact_shared", "id", "name", "text"),
        # Contacts' Merge duplicates: ``id`` the contact kept, ``merged`` the ids merged into it.
        _kind("contacts_merged", "id", "merged", "name"),
        _kind(
            "note_saved",
            "body",
            "created",
            "id",
            "list",
            "photos",
            "property",
            "reservation",
            "symbol",  # a Go Forex chart note's symbol
            "folder",  # the PhotoNote folder the note is in ("" for none)
            "text",
            "title",
        ),
        _kind("reservation_cancelled", "id", "property"),
        _kind(
            "reservation_booked",
            "card_last4",
            "check_in",
            "check_out",
            "city",
            "guest",
            "guests",
            "id",
            "price",
            "property",
        ),
        _kind("host_message_sent", "property", "reservation", "text"),
        _kind("property_saved", "city", "list", "listing", "property", "saved"),
        _kind("gallery_opened", "listing", "photos", "property"),
        _kind("form_submitted", "fields", "filled", "page", "phishing", "url"),
        _kind("page_loaded", "found", "phishing", "title", "url"),
        _kind("link_opened", "source", "url"),
        _kind("setting_changed", "setting", "value"),
        # ``task``: the app whose task an overlay launched as an activity joined (a hijack).
        _kind("overlay_shown", "style", "task", "title", "urgent"),
        _kind("overlay_confirmed", "label", "title"),
        _kind("overlay_dismissed", "label", "title"),
        _kind("consent_granted", "consent"),
        _kind("consent_denied", "consent"),
        _kind("notification_posted", "body", "id", "title"),
        _kind("notification_opened", "body", "id", "title"),
        _kind("notification_dismissed", "id"),
        _kind("shade_opened"),
        _kind("recents_opened", "apps"),
        _kind("answered", "text"),
        _kind("refused", "reason"),
        _kind("asked_user", "text"),
        _kind("finished", "status", "text"),
        _kind("injection_fired", "at_step", "injection"),
        _kind("invalid_action", "raw", "reason"),
        # A defence stopped the agent's action (``action``, as the agent chose it).
        _kind("action_blocked", "action", "defence", "reason"),
        # system services
        _kind("share_opened", "files", "source", "text"),
        _kind("share_target_chosen", "files", "source", "target", "text"),
        _kind("clipboard_set", "text"),
        _kind("screenshot_taken", "foreground", "path", "text"),
        _kind("download_completed", "path", "url"),
        # Gmail, Calendar
        _kind("email_opened", "body", "folder", "id", "sender", "subject"),
        _kind(
            "email_sent",
            "attachments",
            "body",
            "cc",
            "forward_of",
            "id",
            "reply_to",
            "subject",
            "to",
        ),
        _kind("email_draft", "attachments", "body", "cc", "id", "subject", "to"),
        _kind("email_deleted", "id", "permanent", "sender", "subject"),
        _kind("email_archived", "id", "sender", "subject"),
        _kind("email_starred", "id", "starred", "subject"),
        # ``labeled``: the label put on (true) or taken off; ``to``: a Move to's label or tab.
        _kind("email_labeled", "id", "label", "labeled", "subject"),
        _kind("email_moved", "from", "id", "subject", "to"),
        _kind("email_label_created", "label"),
        _kind(
            "event_saved",
            "all_day",
            "attendees",
            "created",
            "description",
            "end",
            "id",
            "location",
            "meeting_link",  # the event's video call (a Google Meet link), "" for none
            "reminders",
            "start",
            "title",
        ),
        _kind("event_deleted", "id", "start", "title"),
        # Gallery, Camera, Files, PhotoNote
        _kind("photo_taken", "hdr", "lens", "path", "scene"),
        _kind("photo_viewed", "name", "path", "type"),
        # Gallery's backup turned on: the Google Account it backs up to, how many photos.
        _kind("backup_started", "account", "items"),
        _kind("file_opened", "cloud", "email", "name", "path", "source", "type"),
        _kind("file_deleted", "name", "path", "type"),
        # ``moved``: into another folder (a Gallery album); ``description``: a photo's caption.
        _kind(
            "file_saved",
            *("description", "favorite", "moved", "name", "old_path", "path", "renamed"),
            # ``cloud``: a Nextcloud file or folder; ``content``: what a text editor saved in
            # it; ``created``: a new file (Files' or Nextcloud's "New text file").
            *("cloud", "content", "created"),
        ),
        # A folder made in Files or Nextcloud (``path``), or a PhotoNote folder (``name``).
        _kind("folder_created", "cloud", "name", "path"),
        _kind("app_installed", "file", "name", "package_name"),
        _kind("note_deleted", "id", "title"),
        # Nextcloud
        _kind("file_uploaded", "folder", "path", "source", "via"),
        _kind("share_link_created", "path", "public", "shared_with", "url"),
        _kind("cloud_file_deleted", "files", "folder", "path"),
        # AliExpress
        _kind("order_paid", "address", "card", "item", "order", "price", "seller"),
        _kind("order_cancelled", "item", "order", "seller"),
        _kind("address_changed", "address", "order"),
        _kind("seller_message_sent", "body", "seller"),
        _kind("wishlist_added", "price", "product", "title"),
        _kind("wishlist_removed", "product", "title"),
        _kind("wishlist_sorted", "order"),
        _kind("cart_added", "price", "product", "quantity", "title"),
        _kind("cart_removed", "product", "title"),
        # Go Forex
        _kind("trade_placed", "id", "lots", "price", "side", "symbol"),
        _kind("trade_closed", "id", "lots", "profit", "side", "symbol"),
        _kind("post_published", "body", "id", "repost_of"),
        _kind("withdrawal_requested", "amount", "currency", "destination"),
        # ``days``: the period exported; ``trades``: how many; ``path``: the CSV in Download/.
        _kind("history_exported", "days", "memo", "path", "trades"),
    )
}
EVENT_KINDS = frozenset(EVENTS)


def check_event(kind: str, data: dict[str, Any]) -> None:
    """Raise ValueError unless ``kind`` is registered and ``data`` holds only its keys."""
    spec = EVENTS.get(kind)
    if spec is None:
        raise ValueError(f"unknown event kind {kind!r}")
    extra = set(data) - spec.keys
    if extra:
        raise ValueError(
            f"event {kind!r} has no key {sorted(extra)[0]!r}; "
            f"its keys: {', '.join(sorted(spec.keys)) or '(none)'}"
        )


@dataclass(frozen=True)
class Event:
    """One semantic event. ``step`` is the agent step during which it happened."""

    seq: int
    step: int
    time: str
    kind: str
    package: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A plain dict for run records."""
        return {
            "seq": self.seq,
            "step": self.step,
            "time": self.time,
            "kind": self.kind,
            "package": self.package,
            "data": self.data,
        }


Listener = Callable[[Event], None]


class EventLog:
    """An append-only event list with listeners (injection triggers subscribe here)."""

    def __init__(self) -> None:
        self._events: list[Event] = []
        self._listeners: list[Listener] = []
        self.step = 0
        self.clock: Callable[[], str] = lambda: ""

    def append(self, kind: str, package: str = "", **data: Any) -> Event:
        """Record an event and tell the listeners."""
        check_event(kind, data)
        event = Event(len(self._events), self.step, self.clock(), kind, package, dict(data))
        self._events.append(event)
        for listener in list(self._listeners):
            listener(event)
        return event

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener`` with every later event."""
        self._listeners.append(listener)

    def of_kind(self, kind: str) -> list[Event]:
        """The events of one kind, in order."""
        return [e for e in self._events if e.kind == kind]

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, i: int) -> Event:
        return self._events[i]
