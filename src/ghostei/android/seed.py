"""World data as Android knows it: shell commands that seed it, parsers that read it back.

What a stock device lets adb write and read: contacts (the contacts provider), SMS (incoming
through the emulator console, sent ones through the SMS provider), files in shared storage
(push) and system settings (``settings put``). Everything else an app keeps to itself (mail,
reservations, notes, trades) belongs in the case's AVD snapshot.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from ..world import CalendarEvent, Contact, FileEntry, Settings, Sms
from .providers import (
    MMS_INBOX,
    SMS_COLUMNS,
    Mms,
    as_int,
    calendar_entries,
    mms_recipients,
    mms_sender,
    null,
    parse_rows,
)

# world.Settings field -> (namespace, key, value when on, value when off). Fields with no
# Android setting (Play Store auto-update, Find My Device) are not here: adb cannot see them.
SETTINGS_KEYS: dict[str, tuple[str, str, str, str]] = {
    "wifi": ("global", "wifi_on", "1", "0"),
    "bluetooth": ("global", "bluetooth_on", "1", "0"),
    "airplane_mode": ("global", "airplane_mode_on", "1", "0"),
    "location": ("secure", "location_mode", "3", "0"),
    "mobile_data": ("global", "mobile_data", "1", "0"),
    "do_not_disturb": ("global", "zen_mode", "1", "0"),
    "dark_theme": ("secure", "ui_night_mode", "2", "1"),
    "screen_lock": ("secure", "lockscreen.disabled", "0", "1"),
    "play_protect": ("global", "package_verifier_enable", "1", "0"),
    "install_unknown_apps": ("secure", "install_non_market_apps", "1", "0"),
    "usb_debugging": ("global", "adb_enabled", "1", "0"),
    "backup": ("secure", "backup_enabled", "1", "0"),
}
# world.Settings number fields -> (namespace, key, device units per world unit): the screen
# timeout is seconds in the world and milliseconds in Settings.System.SCREEN_OFF_TIMEOUT.
SETTINGS_NUMBERS: dict[str, tuple[str, str, int]] = {
    "screen_timeout": ("system", "screen_off_timeout", 1000),
}
MAPPED_SETTINGS: tuple[str, ...] = (*SETTINGS_KEYS, *SETTINGS_NUMBERS)  # what adb reads
SPLIT = "__GHOSTEI_SPLIT__"
CONTACT_MIMETYPES = {
    "vnd.android.cursor.item/name": "name",
    "vnd.android.cursor.item/phone_v2": "phone",
    "vnd.android.cursor.item/email_v2": "email",
    "vnd.android.cursor.item/note": "note",
}
SMS_INBOX = "content://sms/inbox"
SMS_SENT = "content://sms/sent"
RAW_CONTACTS = "content://com.android.contacts/raw_contacts"
CONTACT_DATA = "content://com.android.contacts/data"


def q(value: str) -> str:
    """One shell word, quoted for the device's POSIX shell."""
    return shlex.quote(value)


def settings_put(settings: Settings, base: Settings | None = None) -> list[str]:
    """``settings put`` lines for every mapped setting that differs from ``base``."""
    base = base or Settings()
    lines: list[str] = []
    for name, (namespace, key, on, off) in SETTINGS_KEYS.items():
        value = bool(getattr(settings, name))
        if value != bool(getattr(base, name)):
            lines.append(f"settings put {namespace} {key} {on if value else off}")
    for name, (namespace, key, scale) in SETTINGS_NUMBERS.items():
        number = int(getattr(settings, name))
        if number != int(getattr(base, name)):
            lines.append(f"settings put {namespace} {key} {number * scale}")
    return lines


# Files in shared storage, one path a line (``/sdcard/`` with the slash: it is a symlink).
# The marker says shared storage is there to list, so an empty listing means no files;
# folders the shell user may not read (Android/data) are skipped.
FILES_LISTED = "__GHOSTEI_FILES_LISTED__"
FILES_COMMAND = (
    f"ls -d /sdcard/ >/dev/null 2>&1 && echo {FILES_LISTED} && find /sdcard/ -type f 2>/dev/null"
)


def files_from_listing(text: str, known: list[FileEntry]) -> list[FileEntry] | None:
    """The files ``find`` lists: the world's entries still there, and bare entries for new
    ones (a download). None when shared storage could not be listed."""
    lines = [line.strip() for line in text.splitlines()]
    if FILES_LISTED not in lines:
        return None
    listed = dict.fromkeys(line for line in lines if line.startswith("/sdcard/"))
    kept = [f for f in known if f.path in listed]
    have = {f.path for f in kept}
    return kept + [FileEntry(path=path) for path in listed if path not in have]


def settings_get_command() -> str:
    """One shell line that prints every mapped setting, one value a line: the switches,
    then the numbers."""
    keys = [(ns, key) for ns, key, _, _ in SETTINGS_KEYS.values()]
    keys += [(ns, key) for ns, key, _ in SETTINGS_NUMBERS.values()]
    return "; ".join(f"settings get {namespace} {key}" for namespace, key in keys)


def settings_values(output: str) -> dict[str, bool | int]:
    """The mapped settings a device printed (``settings_get_command``), by world name; a
    value that is neither the key's on nor off, or not a number (``null``), is left out."""
    values = [line.strip() for line in output.lstrip("\r\n").splitlines()]
    found: dict[str, bool | int] = {}
    for (name, (_, _, on, off)), value in zip(SETTINGS_KEYS.items(), values, strict=False):
        if value == on or (name == "location" and value in ("1", "2")):  # any location mode
            found[name] = True
        elif value == off:
            found[name] = False
    numbers = values[len(SETTINGS_KEYS) :]
    for (name, (_, _, scale)), value in zip(SETTINGS_NUMBERS.items(), numbers, strict=False):
        if value.isdigit():
            found[name] = int(value) // scale
    return found


def parse_settings(output: str, current: Settings) -> Settings:
    """``current`` with the values the device printed (``null`` keeps the current value)."""
    return Settings.model_validate({**current.model_dump(), **settings_values(output)})


def raw_contact_insert() -> str:
    """A new raw contact on the device's local account."""
    return f"content insert --uri {RAW_CONTACTS} --bind account_type:n: --bind account_name:n:"


def raw_contact_ids() -> str:
    """Lists raw contact ids (to learn the one just inserted)."""
    return f"content query --uri {RAW_CONTACTS} --projection _id"


def contact_data_inserts(raw_id: int, contact: Contact) -> list[str]:
    """The data rows of a contact: name, then phone, email and note when present."""
    rows = [("vnd.android.cursor.item/name", contact.name)]
    if contact.phone:
        rows.append(("vnd.android.cursor.item/phone_v2", contact.phone))
    if contact.email:
        rows.append(("vnd.android.cursor.item/email_v2", contact.email))
    if contact.note:
        rows.append(("vnd.android.cursor.item/note", contact.note))
    lines = [
        f"content insert --uri {CONTACT_DATA} --bind raw_contact_id:i:{raw_id} "
        f"--bind mimetype:s:{mime} --bind {q('data1:s:' + value)}"
        for mime, value in rows
    ]
    if contact.favorite:
        lines.append(
            f"content update --uri {RAW_CONTACTS} --bind starred:i:1 --where {q(f'_id={raw_id}')}"
        )
    return lines


def sms_sent_insert(sms: Sms) -> str:
    """An outgoing message written to the SMS provider."""
    return (
        f"content insert --uri {SMS_SENT} --bind {q('address:s:' + sms.address)} "
        f"--bind {q('body:s:' + sms.body)}"
    )


def calendar_from_rows(text: str, known: Iterable[CalendarEvent]) -> list[CalendarEvent]:
    """Calendar events from the calendar provider's rows (``events.calendar_entries``). As
    with contacts, ids are the world's where a known event has the same title, and
    ``cal<row id>`` for events the world had not."""
    by_title = {e.title.casefold(): e for e in known}
    found: list[CalendarEvent] = []
    for row_id, fields in calendar_entries(text).items():
        base = by_title.get(str(fields["title"]).casefold())
        event_id = base.id if base is not None else f"cal{row_id}"
        found.append(CalendarEvent(id=event_id, **fields))
    return found


def contacts_from_rows(text: str, known: Iterable[Contact]) -> list[Contact]:
    """Contacts from ``content query --uri content://com.android.contacts/data``.

    Data rows (name, phone, email, note) are grouped by raw contact. Ids are the world's where
    a known contact has the same name (so a case's checks by id still address it), and
    ``a<raw id>`` for contacts the world had not.
    """
    by_name = {c.name.casefold(): c for c in known}
    fields: dict[str, dict[str, Any]] = {}
    for row in parse_rows(text):
        raw = null(row.get("raw_contact_id"))
        entry = fields.setdefault(raw, {"name": null(row.get("display_name"))})
        name = CONTACT_MIMETYPES.get(null(row.get("mimetype")))
        if name is not None:
            entry.setdefault(name, null(row.get("data1")))
        entry["favorite"] = entry.get("favorite", False) or null(row.get("starred")) == "1"
    contacts: list[Contact] = []
    for raw, values in fields.items():
        if not values.get("name"):
            continue
        base = by_name.get(str(values["name"]).casefold())
        # The device's rows are the truth: a field without a row was emptied.
        update = {"phone": "", "email": "", "note": ""}
        update.update({k: v for k, v in values.items() if k != "name"})
        if base is not None:
            contacts.append(base.model_copy(update=update))
        else:
            contacts.append(Contact(id=f"a{raw}", **values))
    return contacts


def sms_from_rows(
    inbox: str,
    sent: str,
    mms: Iterable[Mms] = (),
    addresses: Mapping[str, str] | None = None,
) -> list[Sms]:
    """The device's messages, oldest first: inbox rows incoming, sent rows outgoing, and the
    MMS (``addresses``: each one's address rows) with their attachments' file names."""
    messages: list[tuple[int, Sms]] = []
    for m in mms:
        rows = (addresses or {}).get(m.id, "")
        incoming = m.box == MMS_INBOX
        address = mms_sender(rows) if incoming else next(iter(mms_recipients(rows)), "")
        sms = Sms(
            id=("mmsin" if incoming else "mmsout") + m.id,
            address=address,
            body=m.body,
            time=_iso(m.date * 1000),
            incoming=incoming,
            read=m.read,
            attachments=list(m.attachments),
        )
        messages.append((m.date * 1000, sms))
    for text, incoming in ((inbox, True), (sent, False)):
        for row in parse_rows(text, SMS_COLUMNS):
            date = as_int(null(row.get("date")))
            messages.append(
                (
                    date,
                    Sms(
                        id=("in" if incoming else "out") + null(row.get("_id")),
                        address=null(row.get("address")),
                        body=null(row.get("body")),
                        time=_iso(date),
                        incoming=incoming,
                        read=null(row.get("read")) != "0",
                    ),
                )
            )
    messages.sort(key=lambda m: m[0])
    return [sms for _, sms in messages]


def _iso(millis: int) -> str:
    if millis <= 0:
        return ""
    return datetime.fromtimestamp(millis / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
