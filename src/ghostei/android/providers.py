"""What an Android device's content providers and package manager say, parsed.

``content query`` prints rows as ``Row: N col=value, col=value`` (``NULL`` for a null, ``No
result found.`` for none); these are their parsers, and the columns and URIs the backend reads:
the SMS provider, the MMS provider (messages, their parts, their addresses), the calendar
(events and their guests), and ``pm list packages``. The event reader (:mod:`.events`), the
final state (:mod:`.seed`, :mod:`.device`) and the served phone's providers share them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

# The columns of Android's SMS provider, so a body holding ", x=" is not split there.
SMS_COLUMNS = frozenset(
    (
        *("_id", "thread_id", "address", "person", "date", "date_sent", "protocol", "read"),
        *("status", "type", "reply_path_present", "subject", "body", "service_center"),
        *("locked", "sub_id", "error_code", "creator", "seen"),
    )
)


CALENDAR_EVENTS = "content://com.android.calendar/events"
CALENDAR_ATTENDEES = "content://com.android.calendar/attendees"
CALENDAR_REMINDERS = "content://com.android.calendar/reminders"
ATTENDEE_COLUMNS = ("_id", "event_id", "attendeeEmail", "attendeeName")
ATTENDEES_MARK = "__GHOSTEI_ATTENDEES__"  # between the two queries' outputs
CALENDAR_PACKAGE = "com.google.android.calendar"
SETTINGS_PACKAGE = "com.android.settings"
CALENDAR_COLUMNS = (
    *("_id", "calendar_id", "title", "dtstart", "dtend", "eventLocation", "description"),
    *("allDay", "deleted", "eventTimezone", "hasAlarm"),
)


# The MMS provider: a message with an attachment is an MMS, not a row of content://sms.
MMS = "content://mms"
MMS_PARTS = "content://mms/part"
MMS_PARTS_MARK = "__GHOSTEI_MMS_PARTS__"  # between the messages' rows and their parts' rows
MMS_COLUMNS = (
    *("_id", "thread_id", "date", "date_sent", "msg_box", "read", "seen", "sub", "ct_t"),
    *("m_type", "m_id", "tr_id", "st", "creator"),
)
PART_COLUMNS = (
    *("_id", "mid", "seq", "ct", "name", "chset", "cd", "fn", "cid", "cl", "ctt_s", "ctt_t"),
    *("_data", "text"),
)
ADDR_COLUMNS = ("_id", "msg_id", "contact_id", "address", "type", "charset")
MMS_INBOX, MMS_SENT, MMS_OUTBOX = "1", "2", "4"  # msg_box values
ADDR_FROM, ADDR_TO = "137", "151"  # an address row's type (PduHeaders FROM, TO)


def mms_addr_uri(message_id: str) -> str:
    """The provider's URI of one message's addresses."""
    return f"{MMS}/{message_id}/addr"


@dataclass(frozen=True)
class Mms:
    """An MMS as the provider holds it: its box, time, text and attachments' names."""

    id: str
    box: str
    date: int  # seconds since the epoch (the MMS provider's unit)
    read: bool
    body: str
    attachments: tuple[str, ...]


def mms_details_command(message_id: str) -> str:
    """One shell line printing a message's address rows, MMS_PARTS_MARK, its parts."""
    where = shlex.quote(f"mid={message_id}")
    return (
        f"content query --uri {mms_addr_uri(message_id)}; echo {MMS_PARTS_MARK}; "
        f"content query --uri {MMS_PARTS} --where {where}"
    )


def mms_messages(rows_text: str, parts_text: str = "") -> list[Mms]:
    """The MMS of ``content query`` of :data:`MMS` with their parts (of
    :data:`MMS_PARTS`): each with its text parts joined and its other parts' file names (a
    part keeps the name, not the path the file had on the phone)."""
    parts: dict[str, list[dict[str, str]]] = {}
    for part in parse_rows(parts_text, PART_COLUMNS):
        parts.setdefault(null(part.get("mid")), []).append(part)
    found = []
    for row in parse_rows(rows_text, MMS_COLUMNS):
        mine = sorted(parts.get(null(row.get("_id")), []), key=lambda p: as_int(p.get("seq")))
        body = "\n".join(null(p.get("text")) for p in mine if null(p.get("ct")) == "text/plain")
        files = tuple(
            null(p.get("name")) or null(p.get("cl"))
            for p in mine
            if null(p.get("ct")) not in ("text/plain", "application/smil")
        )
        found.append(
            Mms(
                null(row.get("_id")),
                null(row.get("msg_box")),
                as_int(null(row.get("date"))),
                null(row.get("read")) != "0",
                body,
                files,
            )
        )
    return found


def mms_recipients(text: str) -> list[str]:
    """The TO addresses among a message's address rows."""
    return [
        null(r.get("address"))
        for r in parse_rows(text, ADDR_COLUMNS)
        if null(r.get("type")) == ADDR_TO
    ]


def mms_sender(text: str) -> str:
    """The FROM address among a message's address rows."""
    return next(
        (
            null(r.get("address"))
            for r in parse_rows(text, ADDR_COLUMNS)
            if null(r.get("type")) == ADDR_FROM
        ),
        "",
    )


def calendar_entries(text: str) -> dict[str, dict[str, Any]]:
    """The calendar's events by row ``_id`` (deleted rows left out), each as an
    ``event_saved`` event's data (a world ``CalendarEvent``'s fields but its id), from the
    events' rows, ATTENDEES_MARK, then their attendees' rows."""
    events_text, _, attendees_text = text.partition(ATTENDEES_MARK)
    guests: dict[str, list[str]] = {}
    for row in parse_rows(attendees_text, ATTENDEE_COLUMNS):
        guests.setdefault(row.get("event_id", ""), []).append(null(row.get("attendeeEmail")))
    return {
        row.get("_id", ""): _saved(row, sorted(guests.get(row.get("_id", ""), [])))
        for row in parse_rows(events_text, CALENDAR_COLUMNS)
        if null(row.get("deleted")) != "1"
    }


def _saved(row: Mapping[str, str], guests: list[str]) -> dict[str, Any]:
    """An ``event_saved`` event's data from a calendar row and its guests' addresses."""

    def when(column: str) -> str:
        ms = null(row.get(column))
        if not ms.lstrip("-").isdigit():
            return ""
        moment = datetime.fromtimestamp(int(ms) // 1000, UTC).replace(tzinfo=None)
        return moment.isoformat(timespec="minutes")

    return {
        "title": null(row.get("title")),
        "start": when("dtstart"),
        "end": when("dtend"),
        "location": null(row.get("eventLocation")),
        "description": null(row.get("description")),
        "all_day": null(row.get("allDay")) == "1",
        "attendees": guests,
    }


def parse_rows(text: str, columns: Iterable[str] | None = None) -> list[dict[str, str]]:
    """The rows ``content query`` prints: ``Row: 0 _id=1, address=…, body=…``.

    Android joins ``key=value`` pairs with ``", "`` without quoting, so a value may itself hold
    ``", x="``; with ``columns`` given, only known column names start a new pair.
    """
    known = frozenset(columns) if columns is not None else None
    texts: list[str] = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        m = re.match(r"^Row: \d+ (.*)$", line)
        if m is not None:
            texts.append(m.group(1))
        elif texts:
            texts[-1] += "\n" + line  # a value with a line break (an SMS body)
    return [_row(t, known) for t in texts]


def _row(text: str, known: frozenset[str] | None) -> dict[str, str]:
    row: dict[str, str] = {}
    last = ""
    for part in re.split(r", (?=[A-Za-z_][A-Za-z0-9_]*=)", text):
        key, sep, value = part.partition("=")
        if sep and (known is None or key in known):
            row[key] = value
            last = key
        elif last:
            row[last] += ", " + part
    return row


def null(value: str | None) -> str:
    """``content query`` prints a missing value as ``NULL``."""
    return "" if value is None or value == "NULL" else value


def installed_packages(text: str) -> set[str] | None:
    """The packages of ``pm list packages``, or None when it listed none (no answer)."""
    found = {
        line.strip()[len("package:") :]
        for line in text.splitlines()
        if line.strip().startswith("package:")
    }
    return found or None


def as_int(value: str | None) -> int:
    """A column's integer, 0 when it holds none."""
    try:
        return int(value or 0)
    except ValueError:
        return 0
