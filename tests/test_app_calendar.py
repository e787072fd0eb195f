"""Calendar: the schedule, event details, create, edit, delete and share."""

from __future__ import annotations

from typing import Any

from ghostei.actions import Action
from ghostei.observation import Observation
from ghostei.sim.phone import SimPhone

from .helpers import click, click_label, find

SETUP: dict[str, Any] = {
    "contacts": [{"id": "c1", "name": "Dana Whitfield", "email": "dana.w@brightline.io"}],
    "calendar": [
        {
            "id": "ev1",
            "title": "Q2 roadmap review",
            "start": "2026-05-14T14:00",
            "end": "2026-05-14T15:00",
            "location": "Room Alder",
            "description": "Agenda at https://docs.brightline.io/q2",
            "attendees": ["dana.w@brightline.io", "priya.n@brightline.io"],
        },
        {
            "id": "ev2",
            "title": "Team standup",
            "start": "2026-05-12T10:00",
            "end": "2026-05-12T10:15",
        },
        {"id": "ev3", "title": "Farmers market", "start": "2026-05-16", "all_day": True},
    ],
}


def open_calendar(phone: SimPhone) -> Observation:
    phone.reset(SETUP)
    return phone.act(Action(action_type="open_app", app_name="Calendar"))


def type_into(phone: SimPhone, obs: Observation, label: str, value: str) -> Observation:
    if obs.keyboard_shown:  # the keyboard may hide the field: put it away first
        obs = phone.act(Action(action_type="navigate_back"))
    x, y = find(obs, label, editable=True).center
    return phone.act(Action(action_type="input_text", x=x, y=y, text=value))


def events(phone: SimPhone, kind: str) -> list[dict[str, Any]]:
    return [e.data for e in phone.events.of_kind(kind)]


def test_schedule_groups_events_by_day_in_order(phone: SimPhone) -> None:
    obs = open_calendar(phone)
    texts = [e.text for e in obs.elements if e.text]
    order = [
        texts.index("Today · Tue, May 12"),
        texts.index("Team standup"),
        texts.index("Thu, May 14"),
        texts.index("Q2 roadmap review"),
        texts.index("Sat, May 16"),
        texts.index("Farmers market"),
    ]
    assert order == sorted(order)
    assert find(obs, "14:00 – 15:00 · Room Alder") and find(obs, "All day")


def test_detail_shows_everything_and_links_open(phone: SimPhone) -> None:
    obs = open_calendar(phone)
    obs = click_label(phone, obs, "Q2 roadmap review")
    for label in ("Thu, May 14, 2026 · 14:00 – 15:00", "Room Alder", "2 guests"):
        assert find(obs, label)
    assert find(obs, "dana.w@brightline.io\npriya.n@brightline.io")
    obs = click_label(phone, obs, "https://docs.brightline.io/q2")
    assert events(phone, "link_opened")[0]["source"] == "calendar"
    assert obs.foreground_package == "com.android.chrome"


def test_create_event_logs_all_fields(phone: SimPhone) -> None:
    obs = open_calendar(phone)
    obs = click_label(phone, obs, "Create")
    obs = type_into(phone, obs, "Title", "Dentist")
    obs = type_into(phone, obs, "Date", "2026-05-20")
    obs = type_into(phone, obs, "Start time", "15:30")
    obs = type_into(phone, obs, "End time", "16:15")
    obs = type_into(phone, obs, "Location", "Pearl Dental")
    obs = type_into(phone, obs, "Description", "Bring insurance card")
    obs = type_into(phone, obs, "Guests", "Dana Whitfield, sam@example.com")
    obs = click_label(phone, obs, "Save")
    saved = events(phone, "event_saved")
    assert saved == [
        {
            "id": "ev4",
            "title": "Dentist",
            "start": "2026-05-20T15:30",
            "end": "2026-05-20T16:15",
            "all_day": False,
            "location": "Pearl Dental",
            "description": "Bring insurance card",
            "attendees": ["dana.w@brightline.io", "sam@example.com"],
            "reminders": [],
            "created": True,
        }
    ]
    assert phone.world.calendar[-1].title == "Dentist"
    assert find(obs, "Wed, May 20, 2026 · 15:30 – 16:15")  # lands on the new event


def test_create_event_without_times_is_all_day(phone: SimPhone) -> None:
    obs = open_calendar(phone)
    obs = click_label(phone, obs, "Create")
    obs = type_into(phone, obs, "Title", "Holiday")
    obs = type_into(phone, obs, "Date", "2026-05-25")
    click_label(phone, obs, "Save")
    saved = events(phone, "event_saved")[0]
    assert saved["all_day"] and saved["start"] == "2026-05-25"


def test_bad_input_is_explained_and_nothing_is_saved(phone: SimPhone) -> None:
    obs = open_calendar(phone)
    obs = click_label(phone, obs, "Create")
    obs = type_into(phone, obs, "Title", "Lunch")
    obs = type_into(phone, obs, "Date", "May 20")
    obs = click_label(phone, obs, "Save")
    assert find(obs, "Enter the date as YYYY-MM-DD")
    assert not events(phone, "event_saved")


def test_edit_updates_the_event(phone: SimPhone) -> None:
    obs = open_calendar(phone)
    obs = click_label(phone, obs, "Q2 roadmap review")
    obs = click_label(phone, obs, "Edit")
    assert find(obs, "Room Alder", editable=True)
    obs = type_into(phone, obs, "Title", " (moved)")
    obs = click_label(phone, obs, "Save")
    saved = events(phone, "event_saved")[0]
    assert saved["id"] == "ev1" and not saved["created"]
    assert saved["title"] == "Q2 roadmap review (moved)"
    assert saved["start"] == "2026-05-14T14:00" and saved["location"] == "Room Alder"
    assert len(phone.world.calendar) == 3


def test_delete_asks_first(phone: SimPhone) -> None:
    obs = open_calendar(phone)
    obs = click_label(phone, obs, "Team standup")
    obs = click_label(phone, obs, "Delete")
    obs = click_label(phone, obs, "Cancel")
    assert len(phone.world.calendar) == 3
    obs = click_label(phone, obs, "Delete")
    assert find(obs, "Delete this event?")
    obs = click_label(
        phone, obs, "Delete", resource_id="com.google.android.calendar:id/confirm_delete"
    )
    assert [e.id for e in phone.world.calendar] == ["ev1", "ev3"]
    assert events(phone, "event_deleted") == [
        {"id": "ev2", "title": "Team standup", "start": "2026-05-12T10:00"}
    ]
    assert not any(e.text == "Team standup" for e in obs.elements)


def test_share_sends_a_summary_through_the_share_sheet(phone: SimPhone) -> None:
    obs = open_calendar(phone)
    obs = click_label(phone, obs, "Q2 roadmap review")
    obs = click_label(phone, obs, "Share")
    shared = events(phone, "share_opened")[0]
    assert shared["text"].startswith("Q2 roadmap review\nThu, May 14, 2026 · 14:00 – 15:00")
    assert "Room Alder" in shared["text"]
    obs = click_label(phone, obs, "Gmail", package="android")
    assert obs.foreground_package == "com.google.android.gm"
    assert find(obs, "Q2 roadmap review", editable=True)  # the subject


def test_add_notification_is_saved_with_the_event_and_shown(phone: SimPhone) -> None:
    obs = open_calendar(phone)
    obs = click_label(phone, obs, "Create")
    obs = type_into(phone, obs, "Title", "Project Update")
    obs = type_into(phone, obs, "Date", "2026-05-13")
    obs = type_into(phone, obs, "Start time", "10:00")
    if obs.keyboard_shown:
        obs = phone.act(Action(action_type="navigate_back"))
    obs = click_label(phone, obs, "Add notification")
    choices = [e for e in obs.elements if e.class_name == "android.widget.RadioButton"]
    assert len(choices) == 6 and not any(e.checked for e in choices)
    for label in ("10 minutes before", "15 minutes before", "30 minutes before", "1 hour before"):
        assert find(obs, label)
    obs = click_label(phone, obs, "15 minutes before")
    assert find(
        obs, "15 minutes before", resource_id="com.google.android.calendar:id/notification_text"
    )
    obs = click_label(phone, obs, "Add notification")
    obs = click_label(phone, obs, "1 hour before")
    obs = click_label(phone, obs, "Save")
    saved = events(phone, "event_saved")[0]
    assert saved["title"] == "Project Update" and saved["start"] == "2026-05-13T10:00"
    assert saved["reminders"] == [15, 60]
    assert phone.world.calendar[-1].reminders == [15, 60]
    assert find(obs, "15 minutes before\n1 hour before")  # the detail lists them
    assert find(obs, "Notifications")


def test_edit_keeps_and_removes_notifications(phone: SimPhone) -> None:
    phone.reset(
        {
            "calendar": [
                {"id": "ev1", "title": "Call", "start": "2026-05-13T09:00", "reminders": [30]}
            ]
        }
    )
    obs = phone.act(Action(action_type="open_app", app_name="Calendar"))
    obs = click_label(phone, obs, "Call")
    assert find(obs, "30 minutes before")
    obs = click_label(phone, obs, "Edit")
    obs = click_label(phone, obs, "Add notification")
    assert find(obs, "30 minutes before").checked is False  # the label; its radio is checked
    radios = [e for e in obs.elements if e.class_name == "android.widget.RadioButton"]
    assert [e.checked for e in radios] == [False, False, False, True, False, False]
    obs = phone.act(Action(action_type="navigate_back"))  # Back closes the dialog
    obs = click_label(phone, obs, "Remove 30 minutes before notification")
    obs = click_label(phone, obs, "Save")
    assert events(phone, "event_saved")[0]["reminders"] == []
    assert phone.world.calendar[0].reminders == []


def test_the_served_phone_lists_notifications_as_calendar_reminders(phone: SimPhone) -> None:
    from ghostei.served.network import PhoneNetwork
    from ghostei.served.shell import AndroidShell
    from ghostei.served.vfs import PhoneFS

    open_calendar(phone)
    phone.world.calendar[0].reminders = [10, 60]
    fs = PhoneFS(phone)
    shell = AndroidShell(phone, fs, serial="emulator-5554", network=PhoneNetwork(phone, fs=fs))

    def query(uri: str) -> str:
        result = shell.run(f"content query --uri content://com.android.calendar/{uri}")
        assert result.exit_code == 0
        return result.stdout.decode()

    assert query("reminders").splitlines() == [
        "Row: 0 _id=1, event_id=1, minutes=10, method=1",
        "Row: 1 _id=2, event_id=1, minutes=60, method=1",
    ]
    alarms = [line.rpartition("hasAlarm=")[2] for line in query("events").splitlines()]
    assert alarms == ["1", "0", "0"]


MEET = "https://meet.google.com/xvd-pkaq-wmt"
MEET_SETUP: dict[str, Any] = {
    "calendar": [
        {
            "id": "ev9",
            "title": "Project sync",
            "start": "2026-05-12T15:00",
            "end": "2026-05-12T15:30",
            "meeting_link": MEET,
        },
        *SETUP["calendar"][1:],
    ],
    "web": [{"url": MEET, "title": "Meet - Project sync", "heading": "Project sync"}],
}


def test_an_event_with_a_video_call_joins_it_with_google_meet(phone: SimPhone) -> None:
    phone.reset(MEET_SETUP)
    obs = phone.act(Action(action_type="open_app", app_name="Calendar"))
    obs = click_label(phone, obs, "Project sync")
    join = find(obs, "Join with Google Meet")
    assert join.clickable and join.resource_id.endswith(":id/conference_join")
    assert find(obs, "meet.google.com/xvd-pkaq-wmt")
    obs = click(phone, join)
    assert events(phone, "link_opened") == [{"url": MEET, "source": "calendar"}]
    loaded = events(phone, "page_loaded")
    assert loaded[0]["url"] == MEET and loaded[0]["found"] is True
    assert obs.foreground_package == "com.android.chrome" and find(obs, "Project sync")


def test_an_event_without_a_call_has_no_join_button_and_an_edit_keeps_the_call(
    phone: SimPhone,
) -> None:
    phone.reset(MEET_SETUP)
    obs = phone.act(Action(action_type="open_app", app_name="Calendar"))
    obs = click_label(phone, obs, "Team standup")
    assert not [e for e in obs.elements if e.text == "Join with Google Meet"]
    obs = phone.act(Action(action_type="navigate_back"))
    obs = click_label(phone, obs, "Project sync")
    obs = click_label(phone, obs, "Edit")
    obs = click_label(phone, obs, "Save")
    assert phone.world.calendar[0].meeting_link == MEET
    assert find(obs, "Join with Google Meet")


def test_the_editor_adds_and_removes_a_google_meet_call(phone: SimPhone) -> None:
    obs = open_calendar(phone)
    obs = click_label(phone, obs, "Team standup")
    obs = click_label(phone, obs, "Edit")
    obs = click_label(phone, obs, "Add Google Meet video conferencing")
    link = next(e.text for e in obs.elements if e.resource_id.endswith(":id/conference_link"))
    assert link.startswith("meet.google.com/") and len(link.rsplit("/", 1)[1]) == 12
    obs = click_label(phone, obs, "Save")
    saved = events(phone, "event_saved")[0]
    assert saved["meeting_link"] == "https://" + link
    assert phone.world.calendar[1].meeting_link == "https://" + link
    assert find(obs, "Join with Google Meet") and find(obs, link)
    # The same steps make the same code; removing the call in the editor drops it.
    obs = click_label(phone, obs, "Edit")
    obs = click_label(phone, obs, "Remove video conferencing")
    assert find(obs, "Add Google Meet video conferencing")
    obs = click_label(phone, obs, "Save")
    assert events(phone, "event_saved")[1]["meeting_link"] == ""
    assert not [e for e in obs.elements if e.text == "Join with Google Meet"]
    again = SimPhone()
    obs = open_calendar(again)
    obs = click_label(again, obs, "Team standup")
    obs = click_label(again, obs, "Edit")
    obs = click_label(again, obs, "Add Google Meet video conferencing")
    assert find(obs, link)
