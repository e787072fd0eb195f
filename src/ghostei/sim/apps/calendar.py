"""Google Calendar: a schedule grouped by day, event details (an event's video call joined
from them), create/edit, delete and share.

Times are ISO local strings (``2026-05-14T14:00``); an all-day event's start is its date.
"""

from __future__ import annotations

import hashlib
import re
from datetime import date, datetime, time, timedelta
from functools import partial
from typing import Any

from ...world import CalendarEvent
from ..ui import (
    INK,
    MUTED,
    SCRIM_BG,
    Color,
    Node,
    Style,
    TextHandler,
    button,
    card,
    column,
    icon_button,
    input_dialog,
    list_row,
    radio_row,
    row,
    scroll,
    spacer,
    text,
    text_field,
    top_bar,
)
from .base import App, AppIcon, SharePayload, register_app
from .gmail import body_links

BLUE: Color = (26, 115, 232)
DANGER: Color = (179, 38, 30)
PAGE: Color = (255, 255, 255)
CHIP: Color = (3, 155, 229)
EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")

# The edit form: (field name, label, hint). The label is also the field's content-desc.
FORM: tuple[tuple[str, str, str], ...] = (
    ("title", "Title", "Add title"),
    ("date", "Date", "YYYY-MM-DD"),
    ("start", "Start time", "HH:MM"),
    ("end", "End time", "HH:MM"),
    ("guests", "Guests", "Add guests (emails, comma-separated)"),
    ("location", "Location", "Add location"),
    ("description", "Description", "Add description"),
)
# The notifications "Add notification" offers, in minutes before the start, as Google
# Calendar lists them (its "Custom…" left out).
NOTIFICATION_CHOICES: tuple[int, ...] = (5, 10, 15, 30, 60, 1440)


@register_app
class Calendar(App):
    """Google Calendar, one calendar, in schedule view."""

    label = "Calendar"
    icon = AppIcon("31", BLUE)

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.form: dict[str, str] = {}  # the edit screen's fields, by field name
        self.reminders: list[int] = []  # the edit screen's notifications, minutes before
        self.meeting = ""  # the edit screen's video call (a Meet link), "" for none
        self.error = ""  # why Save refused, shown on the edit screen

    def on_intent(self, intent: dict[str, Any]) -> None:
        if "event" in intent:
            self.os.clear_focus()
            self.screens = [(self.home_screen, {}), ("detail", {"id": str(intent["event"])})]

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        today = datetime.fromisoformat(self.os.now()).date()
        by_day: dict[date, list[CalendarEvent]] = {}
        for event in sorted(self.os.world.calendar, key=lambda e: _start(e)):
            by_day.setdefault(_start(event).date(), []).append(event)
        rows: list[Node] = []
        for day, events in by_day.items():
            label = day.strftime("%a, %b %-d")
            if day == today:
                label = f"Today · {label}"
            rows.append(
                text(
                    label,
                    size=14,
                    weight=600,
                    fg=BLUE if day == today else MUTED,
                    pad=(16, 14, 16, 4),
                    rid="day_header",
                )
            )
            rows += [self._chip(e) for e in events]
        if not rows:
            rows.append(text("Nothing planned", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        return column(
            top_bar(today.strftime("%B %Y")),
            scroll(
                *rows, spacer(16), offset=self.offset(), on_scroll=self.set_offset, rid="schedule"
            ),
            row(
                spacer(0),
                button(
                    "Create",
                    self._create,
                    rid="floating_action_button",
                    width=120,
                    desc="Create new event",
                    color=BLUE,
                ),
                pad=(16, 8, 16, 16),
            ),
            style=Style(bg=PAGE),
        )

    def screen_detail(self) -> Node:
        event = self._event(str(self.args["id"]))
        if event is None:  # deleted meanwhile, or a stale deep link
            return column(
                top_bar("", on_back=self.pop),
                text("This event no longer exists", fg=MUTED, align="center", pad=(0, 40, 0, 0)),
                style=Style(bg=PAGE),
            )
        kids: list[Node] = [
            text(event.title, size=24, pad=(16, 8, 16, 4), rid="title"),
            text(_when(event), size=16, fg=MUTED, pad=(16, 0, 16, 8), rid="time"),
        ]
        if event.meeting_link:
            kids.append(self._conference(event))
        if event.location:
            kids.append(_fact("Location", event.location, "location"))
        if event.reminders:
            kids.append(
                _fact(
                    "Notifications" if len(event.reminders) > 1 else "Notification",
                    "\n".join(notification_label(m) for m in event.reminders),
                    "notifications",
                )
            )
        if event.attendees:
            kids.append(
                _fact(
                    f"{len(event.attendees)} guest{'s' if len(event.attendees) > 1 else ''}",
                    "\n".join(event.attendees),
                    "attendees",
                )
            )
        if event.description:
            kids.append(_fact("Description", event.description, "description"))
            for link in body_links(event.description):
                kids.append(
                    text(
                        link,
                        size=15,
                        fg=BLUE,
                        pad=(16, 2, 16, 6),
                        rid="description_link",
                        on_click=partial(self._follow, link),
                    )
                )
        if self.args.get("confirm"):
            kids.append(
                card(
                    text("Delete this event?", size=18, weight=600, rid="alertTitle"),
                    row(
                        button(
                            "Cancel",
                            lambda: self._ask_delete(event, False),
                            filled=False,
                            rid="cancel_delete",
                        ),
                        button(
                            "Delete",
                            lambda: self._delete(event),
                            color=DANGER,
                            rid="confirm_delete",
                        ),
                        gap=10,
                    ),
                    rid="delete_dialog",
                )
            )
        else:
            kids.append(
                row(
                    button("Edit", lambda: self._edit(event), rid="edit", color=BLUE),
                    button(
                        "Share", lambda: self._share(event), filled=False, rid="share", color=BLUE
                    ),
                    button(
                        "Delete",
                        lambda: self._ask_delete(event, True),
                        filled=False,
                        rid="delete",
                        color=DANGER,
                    ),
                    pad=(16, 16, 16, 24),
                    gap=8,
                )
            )
        return column(
            top_bar("", on_back=self.pop),
            scroll(*kids, offset=self.offset(), on_scroll=self.set_offset, rid="event_info"),
            style=Style(bg=PAGE),
        )

    def screen_edit(self) -> Node:
        fields: list[Node] = []
        for name, label, hint in FORM:
            field = text_field(
                self.form.get(name, ""),
                self._setter(name),
                hint=hint,
                label=label,
                field_name=name,
                rid=name,
                sensitive=name == "guests",  # others' addresses are personal data
                multiline=name == "description",
            )
            fields.append(column(text(label, size=14, fg=MUTED), field, gap=4, pad=(16, 6, 16, 6)))
            if name == "end":  # notifications follow the time, as in Google Calendar's editor
                fields.append(self._notifications())
            if name == "guests":  # and video conferencing follows the guests
                fields.append(self._conferencing())
        if self.error:
            fields.insert(0, text(self.error, size=14, fg=DANGER, pad=(16, 8, 16, 0), rid="error"))
        editing = bool(self.args.get("id"))
        return column(
            top_bar(
                "Edit event" if editing else "New event",
                on_back=self.pop,
                actions=[button("Save", self._save, rid="save", width=84, color=BLUE)],
            ),
            scroll(
                *fields,
                spacer(16),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="edit_event",
            ),
            style=Style(bg=PAGE),
        )

    def screen_notification(self) -> Node:
        """Add notification: a single-choice dialog over the editor; a choice closes it."""
        choices = [
            radio_row(notification_label(m), m in self.reminders, partial(self._notify, m), inset=0)
            for m in NOTIFICATION_CHOICES
        ]
        panel = input_dialog(
            "Notification",
            column(*choices),
            [button("Cancel", self.pop, filled=False, rid="button2", width=110, color=BLUE)],
        )
        return column(spacer(), panel, spacer(), style=Style(bg=SCRIM_BG))

    # ----- pieces -----------------------------------------------------------------------

    def _notifications(self) -> Node:
        """The editor's notifications: one row each (with its remove button), then "Add
        notification"."""
        rows: list[Node] = []
        for minutes in self.reminders:
            label = notification_label(minutes)
            remove = icon_button(
                "x", f"Remove {label} notification", partial(self._unnotify, minutes)
            )
            remove.rid = "remove_notification"
            rows.append(
                row(
                    text(label, size=16, rid="notification_text", pad=(0, 12, 0, 0)),
                    remove,
                    pad=(16, 0, 8, 0),
                )
            )
        rows.append(
            text(
                "Add notification",
                size=16,
                fg=BLUE,
                pad=(16, 12, 16, 12),
                rid="add_notification",
                on_click=partial(self.push, "notification"),
            )
        )
        return column(
            text("Notifications", size=14, fg=MUTED, pad=(16, 0, 16, 0)),
            *rows,
            rid="notifications",
            pad=(0, 6, 0, 4),
        )

    def _conference(self, event: CalendarEvent) -> Node:
        """The event's video call, as Google Calendar shows conference data under the time:
        "Join with Google Meet" and the meeting's address beneath it."""
        join = button(
            "Join with Google Meet",
            partial(self._follow, event.meeting_link),
            rid="conference_join",
            color=BLUE,
            width=230,
        )
        return column(
            row(join, spacer(0)),
            text(_bare(event.meeting_link), size=14, fg=MUTED, rid="conference_link"),
            gap=6,
            pad=(16, 4, 16, 8),
            rid="conference",
        )

    def _conferencing(self) -> Node:
        """The editor's video conferencing: "Add Google Meet video conferencing", or the call
        added (its address beneath, and a button that removes it)."""
        if not self.meeting:
            return text(
                "Add Google Meet video conferencing",
                size=16,
                fg=BLUE,
                pad=(16, 12, 16, 12),
                rid="add_conference",
                on_click=self._add_meeting,
            )
        remove = icon_button("x", "Remove video conferencing", self._remove_meeting)
        remove.rid = "remove_conference"
        return row(
            column(
                text("Join with Google Meet", size=16, rid="conference_name"),
                text(_bare(self.meeting), size=14, fg=MUTED, rid="conference_link"),
                gap=2,
                pad=(0, 8, 0, 8),
            ),
            remove,
            pad=(16, 0, 8, 0),
            rid="conference",
        )

    def _chip(self, event: CalendarEvent) -> Node:
        subtitle = _span(event)
        if event.location:
            subtitle = f"{subtitle} · {event.location}"
        chip = list_row(
            event.title,
            subtitle,
            rid="event_chip",
            on_click=partial(self.push, "detail", id=event.id),
        )
        chip.margin = (16, 3, 16, 3)
        chip.style = Style(bg=(232, 240, 254), radius=10)
        return chip

    # ----- handlers ---------------------------------------------------------------------

    def _setter(self, name: str) -> TextHandler:
        def set_value(value: str) -> None:
            self.form[name] = value
            self.error = ""

        return set_value

    def _create(self) -> None:
        self.form, self.reminders, self.meeting, self.error = {}, [], "", ""
        self.push("edit")

    def _edit(self, event: CalendarEvent) -> None:
        start = _start(event)
        end = _end(event)
        self.form = {
            "title": event.title,
            "date": start.date().isoformat(),
            "start": "" if event.all_day else start.strftime("%H:%M"),
            "end": "" if event.all_day else end.strftime("%H:%M"),
            "location": event.location,
            "description": event.description,
            "guests": ", ".join(event.attendees),
        }
        self.reminders = list(event.reminders)
        self.meeting = event.meeting_link
        self.error = ""
        self.push("edit", id=event.id)

    def _save(self) -> None:
        values = {name: self.form.get(name, "").strip() for name, _, _ in FORM}
        problem, start, end, all_day = _parse_times(values["date"], values["start"], values["end"])
        guests, unknown = self._guests(values["guests"])
        if not values["title"]:
            problem = problem or "Add a title"
        if unknown:
            problem = problem or f"Not an email address: {unknown[0]}"
        if problem:
            self.error = problem
            return
        calendar = self.os.world.calendar
        event = self._event(str(self.args.get("id", "")))
        created = event is None
        if event is None:
            event = CalendarEvent(
                id=self.fresh_id("ev", [e.id for e in self.os.world.calendar]),
                title=values["title"],
                start=start,
            )
            calendar.append(event)
        event.title, event.start, event.end, event.all_day = values["title"], start, end, all_day
        event.location, event.description = values["location"], values["description"]
        event.attendees = guests
        event.reminders = list(self.reminders)
        # event_saved names the call of an event that has one or loses one; an event without
        # a call logs what it logged before calls existed.
        call = {"meeting_link": self.meeting} if self.meeting or event.meeting_link else {}
        event.meeting_link = self.meeting
        self.os.log(
            "event_saved",
            id=event.id,
            title=event.title,
            start=event.start,
            end=event.end,
            all_day=all_day,
            location=event.location,
            description=event.description,
            attendees=list(guests),
            reminders=list(event.reminders),
            created=created,
            **call,
        )
        self.form, self.reminders, self.meeting = {}, [], ""
        # Saving lands on the saved event, whether the form came from the schedule or a detail.
        self.os.clear_focus()
        self.screens = [(self.home_screen, {}), ("detail", {"id": event.id})]

    def _notify(self, minutes: int) -> None:
        self.reminders = sorted({*self.reminders, minutes})
        self.pop()

    def _unnotify(self, minutes: int) -> None:
        self.reminders = [m for m in self.reminders if m != minutes]

    def _add_meeting(self) -> None:
        # Google Calendar asks Meet for a new meeting; its code is the phone's to make here,
        # so it is derived from what is known when it is added (same steps, same code).
        taken = {e.meeting_link for e in self.os.world.calendar}
        seed = f"{self.os.now()}|{self.args.get('id', '')}|{self.form.get('title', '')}"
        link = meet_link(seed)
        while link in taken:
            seed += "+"
            link = meet_link(seed)
        self.meeting = link

    def _remove_meeting(self) -> None:
        self.meeting = ""

    def _ask_delete(self, event: CalendarEvent, ask: bool) -> None:
        self.screens[-1] = ("detail", {"id": event.id, "confirm": ask})

    def _delete(self, event: CalendarEvent) -> None:
        self.issued.add(event.id)
        self.os.world.calendar.remove(event)
        self.os.log("event_deleted", id=event.id, title=event.title, start=event.start)
        self.pop()

    def _share(self, event: CalendarEvent) -> None:
        call = f"Join with Google Meet: {event.meeting_link}" if event.meeting_link else ""
        lines = [event.title, _when(event), call, event.location, event.description]
        summary = "\n".join(line for line in lines if line)
        self.os.share(SharePayload(text=summary, subject=event.title))

    def _follow(self, url: str) -> None:
        self.os.log("link_opened", url=url, source="calendar")
        self.os.open_url(url)

    # ----- helpers ----------------------------------------------------------------------

    def _event(self, event_id: str) -> CalendarEvent | None:
        return next((e for e in self.os.world.calendar if e.id == event_id), None)

    def _guests(self, value: str) -> tuple[list[str], list[str]]:
        """Guest addresses (a contact's name resolves to their email), and what does not."""
        good: list[str] = []
        bad: list[str] = []
        for token in (t.strip() for t in re.split(r"[,;]", value)):
            if not token:
                continue
            if EMAIL.fullmatch(token):
                good.append(token)
                continue
            named = [
                c for c in self.os.world.contacts if c.email and c.name.lower() == token.lower()
            ]
            (good if named else bad).append(named[0].email if named else token)
        return good, bad


# ----- time handling: ISO strings in, ISO strings out -----------------------------------------


def _start(event: CalendarEvent) -> datetime:
    return _parse(event.start) or datetime(1970, 1, 1)


def _end(event: CalendarEvent) -> datetime:
    start = _start(event)
    end = _parse(event.end) if event.end else None
    if end is None or end < start:
        end = start + (timedelta(days=1) if event.all_day else timedelta(hours=1))
    return end


def _parse(stamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp)
    except ValueError:
        return None


def _span(event: CalendarEvent) -> str:
    """The time range as the schedule shows it."""
    if event.all_day:
        return "All day"
    return f"{_start(event).strftime('%H:%M')} – {_end(event).strftime('%H:%M')}"


def _when(event: CalendarEvent) -> str:
    """The date and time range as the detail screen shows it."""
    return f"{_start(event).strftime('%a, %b %-d, %Y')} · {_span(event)}"


def _parse_times(day: str, start: str, end: str) -> tuple[str, str, str, bool]:
    """(problem, start ISO, end ISO, all day) from the form's date and HH:MM fields."""
    try:
        on = date.fromisoformat(day)
    except ValueError:
        return "Enter the date as YYYY-MM-DD", "", "", False
    if not start:
        if end:
            return "Enter a start time as HH:MM", "", "", False
        return "", on.isoformat(), "", True
    begin = _clock(start)
    if begin is None:
        return "Enter the start time as HH:MM", "", "", False
    first = datetime.combine(on, begin)
    if not end:
        last = first + timedelta(hours=1)
    else:
        until = _clock(end)
        if until is None:
            return "Enter the end time as HH:MM", "", "", False
        last = datetime.combine(on, until)
        if last <= first:
            return "The end time must be after the start time", "", "", False
    return "", first.isoformat(timespec="minutes"), last.isoformat(timespec="minutes"), False


def _clock(value: str) -> time | None:
    match = re.fullmatch(r"(\d{1,2}):(\d{2})", value.strip())
    if match is None:
        return None
    hour, minute = int(match.group(1)), int(match.group(2))
    if hour > 23 or minute > 59:
        return None
    return time(hour, minute)


def notification_label(minutes: int) -> str:
    """A notification as Google Calendar words it: ``15 minutes before``, ``1 hour before``."""
    for unit, size in (("week", 10080), ("day", 1440), ("hour", 60)):
        if minutes >= size and minutes % size == 0:
            count = minutes // size
            return f"{count} {unit}{'s' if count > 1 else ''} before"
    return f"{minutes} minute{'s' if minutes != 1 else ''} before"


def meet_link(seed: str) -> str:
    """A Google Meet address made from ``seed``: a code of ten letters, ``abc-defg-hij``."""
    digest = hashlib.sha256(seed.encode()).digest()
    letters = "".join(chr(ord("a") + b % 26) for b in digest[:10])
    return f"https://meet.google.com/{letters[:3]}-{letters[3:7]}-{letters[7:]}"


def _bare(url: str) -> str:
    """A link without its scheme, as the detail shows a meeting's address."""
    return url.split("://", 1)[-1].rstrip("/")


def _fact(label: str, value: str, rid: str) -> Node:
    return column(
        text(label, size=13, fg=MUTED),
        text(value, size=16, fg=INK, rid=rid),
        gap=2,
        pad=(16, 8, 16, 8),
    )
