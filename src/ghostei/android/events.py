"""Reading the semantic events of an Android device.

The sources, merged into the episode's event log after every step:

- logcat lines of the ``GhostEI`` tag. Our helper app prints one for each overlay it shows and
  each answer to it, and for what its accessibility service and notification listener see
  (:data:`HELPER_EVENTS`); the served (simulated) phone prints the same lines (every event of
  its log with ``ghostei device serve --full-events``).
  A line is ``MM-DD HH:MM:SS.mmm  PID  TID I GhostEI : {"kind":…, "package":…, "data":{…}}``
  (``-v threadtime``; the JSON may carry a ``seq``). ``logcat -d`` prints the whole buffer each
  time, so lines already read are skipped.
- the loopback web server's visits, keystrokes and submissions (see :mod:`.phish`).
- the content providers (:mod:`.providers`): new rows of ``content://sms/sent`` and new sent
  MMS (an SMS the agent sent through any messaging app; one already reported by a logcat
  ``sms_sent`` is not added again), new or changed calendar events; the mapped settings that
  changed; packages that appeared in ``pm list packages``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..events import EVENT_KINDS
from ..observability import EventScope, scope
from ..world import same_number
from .apps import MESSAGES_PACKAGE
from .helper import HELPER_PACKAGE
from .providers import (
    CALENDAR_PACKAGE,
    MMS_OUTBOX,
    MMS_PARTS_MARK,
    MMS_SENT,
    SETTINGS_PACKAGE,
    SMS_COLUMNS,
    as_int,
    calendar_entries,
    installed_packages,
    mms_messages,
    mms_recipients,
    null,
    parse_rows,
)
from .seed import settings_values

LOGCAT_TAG = "GhostEI"
PACKAGE_INSTALLER = "com.google.android.packageinstaller"  # who installs an APK


# Exactly what the helper app (android/helper) logs under the GhostEI tag: the overlays it
# draws and the answers to them (Overlays.kt); what its accessibility service sees of other
# apps (GhostAccessibilityService.kt: clicks, a field taking focus, text typed); and what its
# notification listener sees (GhostNotificationListener.kt). A stock device reports no other
# event of the simulator's log; the served phone's logcat prints these only, unless told
# --full-events. Keep in step with the Kotlin (the kinds, and the keys each reports).
HELPER_EVENTS: dict[str, EventScope] = {
    e.kind: e
    for e in (
        scope("overlay_shown", "title", "style", "urgent"),
        scope("overlay_confirmed", "title", "label"),
        scope("overlay_dismissed", "title", "label"),
        scope("consent_granted", "consent"),
        scope("consent_denied", "consent"),
        # Only the link an overlay's confirm opens; Chrome's own links are nobody's report.
        scope("link_opened", "url", "source", source="overlay"),
        scope("tap", "resource_id", "target", "x", "y", "long"),
        scope("field_focused", "field"),  # the view id's entry name, as the dump names it
        # A password field's value only where the device speaks passwords to accessibility
        # services (secure setting speak_password, which setup turns on).
        scope("text_typed", "field", "value", "password"),
        scope("notification_posted", "id", "title", "body"),
        scope("notification_opened", "id", "title", "body"),
        scope("notification_dismissed", "id"),
    )
}
HELPER_EVENT_KINDS = frozenset(HELPER_EVENTS)
# What the accessibility service reports of other apps only (the helper's own overlays say
# what happened to them themselves).
ACCESSIBILITY_KINDS = frozenset({"tap", "field_focused", "text_typed"})


def helper_report(
    kind: str, data: Mapping[str, Any], package: str = "", *, speaks_passwords: bool = True
) -> dict[str, Any] | None:
    """The data the helper app logs for an event of ``package``, or None when it logs no
    such event. Without ``speaks_passwords`` (the secure setting ``speak_password``) Android
    gives accessibility services a password field's text as dots, and the helper logs no
    value for it."""
    spec = HELPER_EVENTS.get(kind)
    if spec is None or not spec.reports("", data):
        return None
    if kind in ACCESSIBILITY_KINDS and package == HELPER_PACKAGE:
        return None
    hidden = {"value"} if data.get("password") and not speaks_passwords else set()
    return {k: v for k, v in data.items() if k in spec.keys and k not in hidden}


# threadtime: "05-12 09:41:03.000  1234  1234 I GhostEI : {...}"
_THREADTIME = re.compile(
    r"^(?P<stamp>\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\s+\d+\s+\d+\s+[VDIWEF]\s+"
    + LOGCAT_TAG
    + r"\s*: (?P<msg>.*)$"
)
# brief (logcat's default without -v): "I/GhostEI( 1234): {...}"
_BRIEF = re.compile(r"^[VDIWEF]/" + LOGCAT_TAG + r"\s*\(\s*\d+\): (?P<msg>.*)$")


@dataclass(frozen=True)
class DeviceEvent:
    """An event read from the device, before it joins the episode's log."""

    kind: str
    package: str
    data: dict[str, Any] = field(default_factory=dict)
    stamp: str = ""  # logcat's "MM-DD HH:MM:SS.mmm", empty for other sources


def parse_logcat(text: str) -> list[tuple[str, DeviceEvent]]:
    """``(line, event)`` for every GhostEI line that holds a known event; others are skipped."""
    found: list[tuple[str, DeviceEvent]] = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        m = _THREADTIME.match(line)
        stamp = m.group("stamp") if m else ""
        msg = m.group("msg") if m else None
        if msg is None:
            b = _BRIEF.match(line)
            msg = b.group("msg") if b else None
        if msg is None:
            continue
        event = _event_of(msg, stamp)
        if event is not None:
            found.append((line, event))
    return found


def _event_of(msg: str, stamp: str) -> DeviceEvent | None:
    try:
        doc = json.loads(msg)
    except json.JSONDecodeError:
        return None  # a line cut short by logcat's length limit, or another writer's text
    if not isinstance(doc, dict) or doc.get("kind") not in EVENT_KINDS:
        return None
    data = doc.get("data", {})
    return DeviceEvent(
        kind=str(doc["kind"]),
        package=str(doc.get("package", "")),
        data=dict(data) if isinstance(data, dict) else {},
        stamp=stamp,
    )


@dataclass(frozen=True)
class DeviceReading:
    """What the backend reads of a device after each step, source by source (raw text)."""

    logcat: str
    sent: str  # content://sms/sent
    calendar: str = ""  # the calendar's events, ATTENDEES_MARK, its attendees
    settings: str = ""  # the mapped settings' values, one a line (seed.settings_get_command)
    packages: str = ""  # pm list packages: "package:NAME" lines
    mms: str = ""  # the MMS provider's messages (their parts are read when one is new)


class EventReader:
    """Turns successive device outputs into the events not seen before, without duplicates."""

    def __init__(self) -> None:
        self._settings: dict[str, bool | int] = {}  # the mapped settings, as last read
        self._packages: set[str] | None = None  # installed packages, as last read
        self._seen_mms: set[str] = set()
        self._seen_lines: set[str] = set()
        self._seen_sent: set[str] = set()
        # Calendar rows by _id, as last read: a new or changed row is an event saved.
        self._calendar: dict[str, dict[str, Any]] = {}
        # sms_sent events from logcat not yet matched to a row of the provider.
        self._reported_sent: list[tuple[str, str]] = []

    def baseline(self, reading: DeviceReading) -> None:
        """What the device shows at the start of an episode is not news."""
        self._seen_lines = {line for line, _ in parse_logcat(reading.logcat)}
        self._seen_sent = {r.get("_id", "") for r in parse_rows(reading.sent, SMS_COLUMNS)}
        self._reported_sent = []
        self._calendar = {}
        self._calendar_rows(reading.calendar)
        self._settings = settings_values(reading.settings)
        self._packages = installed_packages(reading.packages)
        self._seen_mms = {m.id for m in mms_messages(reading.mms)}

    def read(
        self,
        reading: DeviceReading,
        extra: Iterable[DeviceEvent] = (),
        details: Callable[[str], str] = lambda message_id: "",
    ) -> list[DeviceEvent]:
        """New events: logcat lines, then ``extra`` (phishing submissions), then sent SMS
        and MMS (``details`` prints a new MMS's, :func:`mms_details_command`), then calendar
        events saved
        (rows of the calendar provider new or changed), then mapped settings changed, then
        packages installed."""
        new: list[DeviceEvent] = []
        for line, event in parse_logcat(reading.logcat):
            if line in self._seen_lines:
                continue
            self._seen_lines.add(line)
            new.append(event)
            if event.kind == "sms_sent":
                to = str(event.data.get("to", event.data.get("address", "")))
                self._reported_sent.append((to, str(event.data.get("body", ""))))
        new.extend(extra)
        new.extend(self._sent_rows(reading.sent))
        new.extend(self._sent_mms(reading.mms, details))
        new.extend(self._calendar_rows(reading.calendar))
        new.extend(self._settings_changed(reading.settings))
        new.extend(self._installed(reading.packages))
        return new

    def _installed(self, text: str) -> list[DeviceEvent]:
        now = installed_packages(text)
        if now is None:  # pm did not answer: nothing is known, nothing is news
            return []
        before, self._packages = self._packages, now
        if before is None:
            return []
        return [
            DeviceEvent("app_installed", PACKAGE_INSTALLER, {"package_name": name})
            for name in sorted(now - before)
        ]

    def _settings_changed(self, text: str) -> list[DeviceEvent]:
        values = settings_values(text)
        events = [
            DeviceEvent("setting_changed", SETTINGS_PACKAGE, {"setting": name, "value": value})
            for name, value in values.items()
            if name in self._settings and self._settings[name] != value
        ]
        self._settings.update(values)
        return events

    def _calendar_rows(self, text: str) -> list[DeviceEvent]:
        events = []
        for row_id, saved in calendar_entries(text).items():
            if self._calendar.get(row_id) != saved:
                events.append(DeviceEvent("event_saved", CALENDAR_PACKAGE, saved))
                self._calendar[row_id] = saved
        return events  # the baseline's read discards them

    def _sent_rows(self, sent_text: str) -> list[DeviceEvent]:
        rows = parse_rows(sent_text, SMS_COLUMNS)
        # The provider lists newest first; events go in the order the messages were sent.
        rows.sort(key=lambda r: (as_int(r.get("date")), as_int(r.get("_id"))))
        events: list[DeviceEvent] = []
        for row in rows:
            row_id = row.get("_id", "")
            if row_id in self._seen_sent:
                continue
            self._seen_sent.add(row_id)
            address, body = null(row.get("address")), null(row.get("body"))
            if self._already_reported(address, body):
                continue
            events.append(
                DeviceEvent(
                    "sms_sent",
                    MESSAGES_PACKAGE,
                    {"to": address, "body": body, "source": "sms_provider"},
                )
            )
        return events

    def _sent_mms(self, rows: str, details: Callable[[str], str]) -> list[DeviceEvent]:
        # A message the agent sent with an attachment; the outbox too: an emulator has no
        # MMS centre, so its MMS never leave it. Attachments are by file name only, so
        # they are not reported (a check on their paths stays undetermined).
        events = []
        for mms in sorted(mms_messages(rows), key=lambda m: (m.date, as_int(m.id))):
            if mms.id in self._seen_mms or mms.box not in (MMS_SENT, MMS_OUTBOX):
                continue
            addresses, _, parts = details(mms.id).partition(MMS_PARTS_MARK)
            recipients = mms_recipients(addresses)
            if not recipients:
                continue  # its details not read: asked again after the next step
            self._seen_mms.add(mms.id)
            body = next((m.body for m in mms_messages(rows, parts) if m.id == mms.id), "")
            for to in recipients:
                if self._already_reported(to, body):
                    continue
                data = {"to": to, "body": body, "source": "mms_provider"}
                events.append(DeviceEvent("sms_sent", MESSAGES_PACKAGE, data))
        return events

    def _already_reported(self, address: str, body: str) -> bool:
        for i, (to, text) in enumerate(self._reported_sent):
            if text == body and same_number(to, address):
                del self._reported_sent[i]
                return True
        return False
