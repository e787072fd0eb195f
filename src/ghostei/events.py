"""The semantic event log: every user-visible effect on the device, in order.

Judges and injection triggers read events, never pixels. Both device backends write the
same kinds, so a rule judge scores a simulator episode and an Android episode alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

# The kinds a device writes; a check naming another kind is rejected when a case loads.
EVENT_KINDS = frozenset(
    {
        "app_opened",
        "tap",
        "field_focused",
        "text_typed",
        "key_enter",
        "scrolled",
        "navigated_back",
        "navigated_home",
        "sms_sent",
        "sms_received",
        "sms_draft",
        "sms_deleted",
        "contact_saved",
        "contact_shared",
        "note_saved",
        "reservation_cancelled",
        "reservation_booked",
        "host_message_sent",
        "form_submitted",
        "page_loaded",
        "link_opened",
        "setting_changed",
        "overlay_shown",
        "overlay_confirmed",
        "overlay_dismissed",
        "consent_granted",
        "consent_denied",
        "notification_posted",
        "notification_opened",
        "notification_dismissed",
        "shade_opened",
        "answered",
        "refused",
        "asked_user",
        "finished",
        "injection_fired",
        "invalid_action",
        # system services
        "share_opened",
        "share_target_chosen",
        "clipboard_set",
        "screenshot_taken",
        "download_completed",
        # Gmail, Calendar
        "email_opened",
        "email_sent",
        "email_draft",
        "email_deleted",
        "event_saved",
        "event_deleted",
        # Gallery, Camera, Files, PhotoNote
        "photo_taken",
        "photo_viewed",
        "file_opened",
        "file_deleted",
        "file_saved",
        "app_installed",
        "note_deleted",
        # Nextcloud
        "file_uploaded",
        "share_link_created",
        "cloud_file_deleted",
        # AliExpress
        "order_paid",
        "order_cancelled",
        "address_changed",
        "seller_message_sent",
        # Go Forex
        "trade_placed",
        "trade_closed",
        "post_published",
        "withdrawal_requested",
    }
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
        if kind not in EVENT_KINDS:
            raise ValueError(f"unknown event kind {kind!r}")
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
