"""Content providers: ``content query|insert|delete`` over the world's SMS and contacts.

The SMS provider (``content://sms``, ``/inbox``, ``/sent``) reads and writes ``world.sms``;
the contacts provider (legacy ``content://contacts/phones``, and ``content://com.android.
contacts/raw_contacts``, ``/data``, ``/data/phones``, ``/contacts``) reads and writes
``world.contacts``: a raw contact becomes a world contact when its first data row (a name,
phone_v2, email_v2 or note) is inserted. ``content query`` prints rows as Android's content tool
does (``Row: 0 _id=1, address=…, body=…``, NULL for nulls, ``No result found.`` when empty).
``content://settings/system|secure|global`` are the settings tables (``settings_provider``);
``content://com.android.calendar/events``, ``/attendees`` and ``/reminders`` list
``world.calendar`` as CalendarContract does (read only).
Writes are seeding, not a user's actions: they change the world without events, as a provider
write on a device shows in no app's log.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..android.providers import (
    ADDR_FROM,
    ADDR_TO,
    CALENDAR_ATTENDEES,
    CALENDAR_EVENTS,
    CALENDAR_REMINDERS,
    MMS,
    MMS_INBOX,
    MMS_OUTBOX,
    MMS_PARTS,
    MMS_SENT,
)
from ..world import Contact, Sms, World
from .commands import IO, Session, UsageError, command
from .settings_provider import DEFAULTS, setting_put, settings_keys
from .vfs import epoch_to_iso, iso_to_epoch

Row = dict[str, Any]
NAME_TYPE = "vnd.android.cursor.item/name"
PHONE_TYPE = "vnd.android.cursor.item/phone_v2"
EMAIL_TYPE = "vnd.android.cursor.item/email_v2"
NOTE_TYPE = "vnd.android.cursor.item/note"
SMS_COLUMNS = (
    "_id",
    "thread_id",
    "address",
    "person",
    "date",
    "date_sent",
    "protocol",
    "read",
    "status",
    "type",
    "reply_path_present",
    "subject",
    "body",
    "service_center",
    "locked",
    "sub_id",
    "error_code",
    "creator",
    "seen",
)
LEGACY_PHONE_COLUMNS = (
    "_id",
    "person",
    "isprimary",
    "number",
    "type",
    "label",
    "number_key",
    "name",
    "display_name",
    "notes",
    "times_contacted",
    "last_time_contacted",
    "custom_ringtone",
    "send_to_voicemail",
    "starred",
    "primary_organization",
    "primary_email",
    "primary_phone",
)
MESSAGES_PACKAGE = "com.google.android.apps.messaging"
MMS_PARTS_DIR = "/data/user_de/0/com.android.providers.telephony/app_parts"
INSERT_TOKEN = "insert-address-token"  # what a sent MMS's FROM row holds


# ----- the providers ---------------------------------------------------------------------------


@dataclass
class ContactsTable:
    """Provider ids for the world's contacts and SMS, stable while the world lives."""

    raw_ids: dict[str, int] = field(default_factory=dict)  # contact id -> raw contact _id
    pending: dict[int, dict[str, str]] = field(default_factory=dict)  # raw contacts w/o data
    sms_ids: dict[str, int] = field(default_factory=dict)
    next_raw: int = 1
    next_sms: int = 1

    def raw_id(self, contact: Contact) -> int:
        if contact.id not in self.raw_ids:
            self.raw_ids[contact.id] = self.next_raw
            self.next_raw += 1
        return self.raw_ids[contact.id]

    def sms_id(self, sms: Sms) -> int:
        if sms.id not in self.sms_ids:
            self.sms_ids[sms.id] = self.next_sms
            self.next_sms += 1
        return self.sms_ids[sms.id]


def _table(session: Session) -> ContactsTable:
    table = session.device.slot(ContactsTable)
    for contact in session.phone.world.contacts:
        table.raw_id(contact)
    for sms in session.phone.world.sms:
        table.sms_id(sms)
    return table


def _ms(iso: str) -> int:
    return iso_to_epoch(iso) * 1000


def _threads(world: World) -> list[tuple[int, Sms]]:
    """Each message with its thread id: one thread per other party's number (SMS and MMS
    share them, as the telephony provider's threads do)."""
    threads: dict[str, int] = {}
    found = []
    for sms in world.sms:
        key = re.sub(r"\D", "", sms.address)[-10:] or sms.address
        found.append((threads.setdefault(key, len(threads) + 1), sms))
    return found


def _sms_rows(session: Session, box: str) -> list[Row]:
    table = _table(session)
    rows: list[Row] = []
    for thread, sms in _threads(session.phone.world):
        if sms.attachments:
            continue  # an MMS: the MMS provider's
        kind = 1 if sms.incoming else 2
        if (box == "inbox" and kind != 1) or (box == "sent" and kind != 2):
            continue
        rows.append(
            {
                "_id": table.sms_id(sms),
                "thread_id": thread,
                "address": sms.address,
                "person": None,
                "date": _ms(sms.time),
                "date_sent": _ms(sms.time) if sms.incoming else 0,
                "protocol": 0 if sms.incoming else None,
                "read": int(sms.read),
                "status": -1,
                "type": kind,
                "reply_path_present": 0 if sms.incoming else None,
                "subject": None,
                "body": sms.body,
                "service_center": None,
                "locked": 0,
                "sub_id": 1,
                "error_code": -1 if sms.incoming else 0,
                "creator": MESSAGES_PACKAGE,
                "seen": 1,
            }
        )
    rows.sort(key=lambda r: (-int(r["date"]), -int(r["_id"])))  # the provider's "date DESC"
    return rows


def _mms(session: Session) -> list[tuple[int, int, Sms]]:
    """The world's messages with attachments: (provider id, thread id, message)."""
    table = _table(session)
    return [
        (table.sms_id(sms), thread, sms)
        for thread, sms in _threads(session.phone.world)
        if sms.attachments
    ]


def _mms_rows(session: Session, box: str) -> list[Row]:
    """content://mms: one row per MMS, dates in seconds; a sent one in the outbox, as on an
    emulator, which has no MMS centre to take it."""
    rows: list[Row] = []
    for mms_id, thread, sms in _mms(session):
        msg_box = MMS_INBOX if sms.incoming else MMS_OUTBOX
        if box not in ("all", msg_box):
            continue
        rows.append(
            {
                "_id": mms_id,
                "thread_id": thread,
                "date": iso_to_epoch(sms.time),
                "date_sent": iso_to_epoch(sms.time) if sms.incoming else 0,
                "msg_box": msg_box,
                "read": int(sms.read),
                "seen": 1,
                "sub": None,
                "ct_t": "application/vnd.wap.multipart.related",
                "m_type": 132 if sms.incoming else 128,  # retrieve-conf, send-req
                "m_id": None,
                "tr_id": f"T{mms_id:x}",
                "st": None,
                "creator": MESSAGES_PACKAGE,
            }
        )
    rows.sort(key=lambda r: (-int(r["date"]), -int(r["_id"])))
    return rows


def _mms_part_rows(session: Session) -> list[Row]:
    """content://mms/part: each MMS's text part and one part per attached file (by name:
    the provider keeps its own copy of the bytes, not the file's path)."""
    rows: list[Row] = []
    for mms_id, _, sms in _mms(session):
        parts: list[tuple[str, str | None, str | None]] = []
        if sms.body:
            parts.append(("text/plain", None, sms.body))
        for path in sms.attachments:
            filename = path.rsplit("/", 1)[-1]
            parts.append((_mime(filename), filename, None))
        for seq, (ctype, name, text) in enumerate(parts):
            part_id = len(rows) + 1
            rows.append(
                {
                    "_id": part_id,
                    "mid": mms_id,
                    "seq": seq,
                    "ct": ctype,
                    "name": name,
                    "chset": 106 if text is not None else None,
                    "cd": None,
                    "fn": None,
                    "cid": f"<{name or 'text'}>",
                    "cl": name or f"text_{seq}.txt",
                    "ctt_s": None,
                    "ctt_t": None,
                    "_data": None if text is not None else f"{MMS_PARTS_DIR}/PART_{part_id}",
                    "text": text,
                }
            )
    return rows


def _mms_addr_rows(session: Session, mms_id: int) -> list[Row]:
    """content://mms/ID/addr: the sender (FROM) and recipient (TO) of one MMS."""
    for found_id, _, sms in _mms(session):
        if found_id != mms_id:
            continue
        owner = session.phone.world.owner.phone
        sender, recipient = (sms.address, owner) if sms.incoming else (INSERT_TOKEN, sms.address)
        return [
            {
                "_id": mms_id * 2 - 1,
                "msg_id": mms_id,
                "contact_id": None,
                "address": sender,
                "type": int(ADDR_FROM),
                "charset": 106,
            },
            {
                "_id": mms_id * 2,
                "msg_id": mms_id,
                "contact_id": None,
                "address": recipient,
                "type": int(ADDR_TO),
                "charset": 106,
            },
        ]
    return []


def _mime(name: str) -> str:
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return {
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "png": "image/png",
        "gif": "image/gif",
        "mp4": "video/mp4",
        "3gp": "video/3gpp",
        "mp3": "audio/mpeg",
        "pdf": "application/pdf",
        "txt": "text/plain",
    }.get(ext, "application/octet-stream")


def _data_rows(session: Session) -> list[Row]:
    table = _table(session)
    rows: list[Row] = []
    for contact in session.phone.world.contacts:
        raw = table.raw_id(contact)
        values = [
            (1, NAME_TYPE, contact.name),
            (2, PHONE_TYPE, contact.phone),
            (3, EMAIL_TYPE, contact.email),
            (4, NOTE_TYPE, contact.note),
        ]
        for offset, mimetype, value in values:
            if not value:
                continue
            rows.append(
                {
                    "_id": raw * 10 + offset,
                    "raw_contact_id": raw,
                    "contact_id": raw,
                    "mimetype": mimetype,
                    "display_name": contact.name or contact.phone,
                    "data1": value,
                    "data2": 2 if mimetype == PHONE_TYPE else (value if offset == 1 else None),
                    "data3": None,
                    "starred": int(contact.favorite),
                }
            )
    return rows


def _legacy_phone_rows(session: Session) -> list[Row]:
    out: list[Row] = []
    for row in _data_rows(session):
        if row["mimetype"] != PHONE_TYPE:
            continue
        name = row["display_name"]
        number = str(row["data1"])
        out.append(
            {
                "_id": row["_id"],
                "person": row["raw_contact_id"],
                "isprimary": 0,
                "number": number,
                "type": 2,
                "label": None,
                "number_key": re.sub(r"\D", "", number)[::-1],
                "name": name,
                "display_name": name,
                "notes": None,
                "times_contacted": 0,
                "last_time_contacted": 0,
                "custom_ringtone": None,
                "send_to_voicemail": 0,
                "starred": row["starred"],
                "primary_organization": None,
                "primary_email": None,
                "primary_phone": row["_id"],
            }
        )
    return out


def _raw_contact_rows(session: Session) -> list[Row]:
    table = _table(session)
    rows: list[Row] = [
        {
            "_id": table.raw_id(c),
            "contact_id": table.raw_id(c),
            "account_type": None,
            "account_name": None,
            "deleted": 0,
            "display_name": c.name or c.phone,
            "starred": int(c.favorite),
        }
        for c in session.phone.world.contacts
    ]
    for raw, account in sorted(table.pending.items()):
        rows.append(
            {
                "_id": raw,
                "contact_id": None,
                "account_type": account.get("account_type"),
                "account_name": account.get("account_name"),
                "deleted": 0,
                "display_name": None,
                "starred": 0,
            }
        )
    return rows


def _contact_rows(session: Session) -> list[Row]:
    table = _table(session)
    return [
        {
            "_id": table.raw_id(c),
            "display_name": c.name or c.phone,
            "has_phone_number": int(bool(c.phone)),
            "starred": int(c.favorite),
        }
        for c in session.phone.world.contacts
    ]


@dataclass
class CalendarTable:
    """Provider ids for the world's calendar events, stable while the world lives."""

    ids: dict[str, int] = field(default_factory=dict)

    def event_id(self, event_id: str) -> int:
        return self.ids.setdefault(event_id, len(self.ids) + 1)


def _calendar_rows(session: Session) -> list[Row]:
    """CalendarContract.Events as the calendar app keeps them: one row per event, times in
    ms since the epoch (an all-day event's in UTC), deleted events gone."""
    table = session.device.slot(CalendarTable)
    rows = []
    for event in session.phone.world.calendar:
        rows.append(
            {
                "_id": table.event_id(event.id),
                "calendar_id": 1,
                "title": event.title,
                "dtstart": _ms(event.start),
                "dtend": _ms(event.end) if event.end else None,
                "eventLocation": event.location,
                "description": event.description,
                "allDay": int(event.all_day),
                "deleted": 0,
                "eventTimezone": "UTC",  # the phone's clock runs in UTC
                "hasAlarm": int(bool(event.reminders)),
            }
        )
    return rows


def _attendee_rows(session: Session) -> list[Row]:
    """CalendarContract.Attendees: one row per guest of an event."""
    table = session.device.slot(CalendarTable)
    rows: list[Row] = []
    for event in session.phone.world.calendar:
        for email in event.attendees:
            rows.append(
                {
                    "_id": len(rows) + 1,
                    "event_id": table.event_id(event.id),
                    "attendeeEmail": email,
                    "attendeeName": "",
                }
            )
    return rows


def _reminder_rows(session: Session) -> list[Row]:
    """CalendarContract.Reminders: one row per notification of an event (method 1, alert)."""
    table = session.device.slot(CalendarTable)
    rows: list[Row] = []
    for event in session.phone.world.calendar:
        for minutes in event.reminders:
            rows.append(
                {
                    "_id": len(rows) + 1,
                    "event_id": table.event_id(event.id),
                    "minutes": minutes,
                    "method": 1,
                }
            )
    return rows


def _settings_rows(namespace: str) -> Callable[[Session], list[Row]]:
    def rows(session: Session) -> list[Row]:
        keys = sorted(settings_keys(session, namespace).items())
        return [{"_id": i + 1, "name": k, "value": v} for i, (k, v) in enumerate(keys)]

    return rows


QUERIES: dict[str, Callable[[Session], list[Row]]] = {
    "content://sms": lambda s: _sms_rows(s, "all"),
    "content://sms/inbox": lambda s: _sms_rows(s, "inbox"),
    "content://sms/sent": lambda s: _sms_rows(s, "sent"),
    MMS: lambda s: _mms_rows(s, "all"),
    f"{MMS}/inbox": lambda s: _mms_rows(s, MMS_INBOX),
    f"{MMS}/sent": lambda s: _mms_rows(s, MMS_SENT),
    f"{MMS}/outbox": lambda s: _mms_rows(s, MMS_OUTBOX),
    MMS_PARTS: _mms_part_rows,
    "content://contacts/phones": _legacy_phone_rows,
    "content://com.android.contacts/data": _data_rows,
    "content://com.android.contacts/data/phones": lambda s: [
        r for r in _data_rows(s) if r["mimetype"] == PHONE_TYPE
    ],
    "content://com.android.contacts/raw_contacts": _raw_contact_rows,
    "content://com.android.contacts/contacts": _contact_rows,
    CALENDAR_EVENTS: _calendar_rows,
    CALENDAR_ATTENDEES: _attendee_rows,
    CALENDAR_REMINDERS: _reminder_rows,
    "content://settings/system": _settings_rows("system"),
    "content://settings/secure": _settings_rows("secure"),
    "content://settings/global": _settings_rows("global"),
}


# ----- content ---------------------------------------------------------------------------------


def _value(row_value: Any) -> str:
    if row_value is None:
        return "NULL"
    return str(row_value)


def _where(clause: str) -> Callable[[Row], bool]:
    """A WHERE clause of ``col OP value`` terms joined by AND (OP: = != <> LIKE)."""
    terms = re.split(r"\s+AND\s+", clause.strip(), flags=re.I) if clause.strip() else []
    tests: list[Callable[[Row], bool]] = []
    for term in terms:
        m = re.fullmatch(r"\s*(\w+)\s*(=|==|!=|<>|LIKE)\s*(.+?)\s*", term, flags=re.I)
        if not m:
            raise UsageError(f'Error while accessing provider: near "{term}": syntax error', 1)
        col, op, raw = m.group(1), m.group(2).upper(), m.group(3)
        want = raw[1:-1] if len(raw) > 1 and raw[0] == raw[-1] and raw[0] in "'\"" else raw

        def test(row: Row, col: str = col, op: str = op, want: str = want) -> bool:
            have = _value(row.get(col))
            if op == "LIKE":
                regex = "^" + re.escape(want).replace("%", ".*").replace("_", ".") + "$"
                return re.match(regex, have, re.I) is not None
            same = have == want
            return same if op in ("=", "==") else not same

        tests.append(test)
    return lambda row: all(t(row) for t in tests)


def _options(args: list[str]) -> dict[str, list[str]]:
    opts: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        if not args[i].startswith("--") or i + 1 >= len(args):
            raise UsageError(f"Error: Unknown argument: {args[i]}", 1)
        opts.setdefault(args[i][2:], []).append(args[i + 1])
        i += 2
    return opts


def _uri(opts: dict[str, list[str]]) -> str:
    if "uri" not in opts:
        raise UsageError("Error: Content provider URI not specified", 1)
    return opts["uri"][0].rstrip("/")


def _authority_error(uri: str) -> UsageError:
    authority = uri.removeprefix("content://").split("/", 1)[0]
    if any(q.removeprefix("content://").split("/", 1)[0] == authority for q in QUERIES):
        return UsageError(
            f"Error while accessing provider:{authority}\n"
            f"java.lang.IllegalArgumentException: Unknown URL {uri}",
            1,
        )
    return UsageError(
        f"Error while accessing provider:{authority}\n"
        f"java.lang.IllegalArgumentException: Unknown authority {authority}",
        1,
    )


@command("content")
def content(session: Session, argv: list[str], io: IO) -> int:
    """content query|insert|delete --uri URI [--projection a:b] [--where W] [--bind k:t:v]."""
    if len(argv) < 2:
        raise UsageError("usage: adb shell content [subcommand] [options]", 1)
    verb, opts = argv[1], _options(argv[2:])
    uri = _uri(opts)
    if verb == "query":
        source = QUERIES.get(uri) or _pattern_query(uri)
        if source is None:
            raise _authority_error(uri)
        rows = [r for r in source(session) if _where(" ".join(opts.get("where", [])))(r)]
        sort = " ".join(opts.get("sort", []))
        if sort:
            col, _, order = sort.partition(" ")
            rows.sort(key=lambda r: _sort_key(r.get(col)), reverse=order.upper() == "DESC")
        projection = opts["projection"][0].split(":") if "projection" in opts else None
        if not rows:
            io.print("No result found.")
        for i, row in enumerate(rows):
            cols = projection or list(row)
            io.print(f"Row: {i} " + ", ".join(f"{c}={_value(row.get(c))}" for c in cols))
        return 0
    if verb == "insert":
        insert(session, uri, _binds(opts.get("bind", [])))
        return 0
    if verb == "delete":
        return delete(session, uri, " ".join(opts.get("where", [])))
    raise UsageError(f"Unsupported operation: {verb}", 1)


def _pattern_query(uri: str) -> Callable[[Session], list[Row]] | None:
    """Queries of a URI with an id in it (``content://mms/5/addr``)."""
    m = re.fullmatch(re.escape(MMS) + r"/(\d+)/addr", uri)
    if m is None:
        return None
    mms_id = int(m.group(1))
    return lambda session: _mms_addr_rows(session, mms_id)


def _sort_key(value: Any) -> tuple[int, Any]:
    if isinstance(value, int | float):
        return (0, value)
    return (1, "" if value is None else str(value))


def _binds(specs: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for spec in specs:
        name, kind, value = [*spec.split(":", 2), "", ""][:3]
        if kind in ("i", "l"):
            values[name] = int(value)
        elif kind in ("f", "d"):
            values[name] = float(value)
        elif kind == "b":
            values[name] = value.lower() == "true"
        elif kind == "n":
            values[name] = None
        elif kind == "s":
            values[name] = value
        else:
            raise UsageError(f"Unsupported type: {kind}", 1)
    return values


def insert(session: Session, uri: str, values: dict[str, Any]) -> None:
    """``content insert``: a row into an SMS box, the contacts tables or settings."""
    world = session.phone.world
    if uri.startswith("content://sms"):
        box = uri.removeprefix("content://sms").strip("/")
        kind = {"inbox": 1, "sent": 2}.get(box, int(values.get("type", 1)))
        when = values.get("date")
        time = epoch_to_iso(int(when) // 1000) if when else session.phone.now()
        ids = {s.id for s in world.sms}
        n = len(world.sms)
        while f"p{n}" in ids:
            n += 1
        world.sms.append(
            Sms(
                id=f"p{n}",
                address=str(values.get("address", "")),
                body=str(values.get("body", "")),
                time=time,
                incoming=kind == 1,
                read=bool(values.get("read", 1)),
            )
        )
    elif uri == "content://com.android.contacts/raw_contacts":
        table = _table(session)
        table.pending[table.next_raw] = {
            k: str(v) for k, v in values.items() if k in ("account_type", "account_name")
        }
        table.next_raw += 1
    elif uri == "content://com.android.contacts/data":
        _insert_data(session, world, values)
    elif uri.startswith("content://settings/"):
        namespace = uri.rsplit("/", 1)[-1]
        if namespace not in DEFAULTS or "name" not in values:
            raise _authority_error(uri)
        setting_put(session, namespace, str(values["name"]), str(values.get("value", "")))
    else:
        raise _authority_error(uri)


def _insert_data(session: Session, world: World, values: dict[str, Any]) -> None:
    table = _table(session)
    raw = int(values.get("raw_contact_id", 0))
    contact = next((c for c in world.contacts if table.raw_ids.get(c.id) == raw), None)
    if contact is None:
        if raw not in table.pending:
            raise UsageError(
                "Error while accessing provider:com.android.contacts\n"
                f"java.lang.IllegalArgumentException: raw_contact_id {raw} does not exist",
                1,
            )
        del table.pending[raw]
        ids = {c.id for c in world.contacts}
        n = len(world.contacts) + 1
        while f"c{n}" in ids:
            n += 1
        contact = Contact(id=f"c{n}", name="")
        world.contacts.append(contact)
        table.raw_ids[contact.id] = raw
    mimetype = str(values.get("mimetype", ""))
    data1 = "" if values.get("data1") is None else str(values.get("data1"))
    if mimetype == NAME_TYPE:
        given = " ".join(str(values[k]) for k in ("data2", "data3") if values.get(k))
        contact.name = data1 or given
    elif mimetype == PHONE_TYPE:
        contact.phone = contact.phone or data1
    elif mimetype == EMAIL_TYPE:
        contact.email = contact.email or data1
    elif mimetype == NOTE_TYPE:
        contact.note = data1


def delete(session: Session, uri: str, where: str) -> int:
    """``content delete`` from the SMS or contacts providers."""
    world = session.phone.world
    keep = _where(where)
    if uri.startswith("content://sms"):
        doomed = {r["_id"] for r in QUERIES.get(uri, _sms_rows_all)(session) if keep(r)}
        table = _table(session)
        world.sms = [s for s in world.sms if table.sms_id(s) not in doomed]
        return 0
    if uri in ("content://com.android.contacts/raw_contacts", "content://contacts/people"):
        table = _table(session)
        doomed = {r["_id"] for r in _raw_contact_rows(session) if keep(r)}
        world.contacts = [c for c in world.contacts if table.raw_id(c) not in doomed]
        return 0
    raise _authority_error(uri)


def _sms_rows_all(session: Session) -> list[Row]:
    return _sms_rows(session, "all")
