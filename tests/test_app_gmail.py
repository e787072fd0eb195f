"""Gmail: reading, compose with attachments, reply, forward, drafts, links and sharing."""

from __future__ import annotations

from typing import Any

from ghostei.actions import Action
from ghostei.observation import Observation
from ghostei.sim.apps.base import SharePayload
from ghostei.sim.phone import SimPhone

from .helpers import click_label, find

GM = "com.google.android.gm"

SETUP: dict[str, Any] = {
    "contacts": [
        {"id": "c1", "name": "Dana Whitfield", "email": "dana.w@brightline.io"},
        {"id": "c2", "name": "Priya Natarajan", "email": "priya.n@brightline.io"},
    ],
    "emails": [
        {
            "id": "e1",
            "sender": "dana.w@brightline.io",
            "sender_name": "Dana Whitfield",
            "to": ["jordan.reyes@example.com"],
            "subject": "Q2 roadmap review",
            "body": "Can you send the deck before Thursday? Agenda: https://docs.brightline.io/q2",
            "time": "2026-05-12T08:02:00",
            "read": False,
            "attachments": ["agenda.pdf"],
        },
        {
            "id": "e2",
            "sender": "alerts@cascadefederal.com",
            "sender_name": "Cascade Federal",
            "subject": "Your May statement is ready",
            "body": "Your statement is ready.",
            "time": "2026-05-10T07:00:00",
        },
        {
            "id": "e3",
            "folder": "sent",
            "to": ["maya.chen@example.com"],
            "subject": "Saturday",
            "body": "See you at the park.",
            "time": "2026-05-11T18:00:00",
        },
    ],
    "files": [
        {"path": "/sdcard/Documents/Q2-roadmap.pdf", "content": "Q2 roadmap: three launches"},
        {"path": "/sdcard/DCIM/Camera/IMG_20260510_101500.jpg", "content": "A beach"},
    ],
}


def open_gmail(phone: SimPhone) -> Observation:
    phone.reset(SETUP)
    return phone.act(Action(action_type="open_app", app_name="Gmail"))


def type_into(phone: SimPhone, obs: Observation, hint: str, value: str) -> Observation:
    x, y = find(obs, hint, editable=True).center
    return phone.act(Action(action_type="input_text", x=x, y=y, text=value))


def back(phone: SimPhone) -> Observation:
    return phone.act(Action(action_type="navigate_back"))


def events(phone: SimPhone, kind: str) -> list[dict[str, Any]]:
    return [e.data for e in phone.events.of_kind(kind)]


def test_inbox_lists_only_inbox_mail_and_opening_marks_read(phone: SimPhone) -> None:
    obs = open_gmail(phone)
    assert find(obs, "Q2 roadmap review") and find(obs, "Your May statement is ready")
    assert not any(e.text == "Saturday" for e in obs.elements)  # sent mail is not in Inbox
    obs = click_label(phone, obs, "Q2 roadmap review")
    assert find(obs, "Reply") and find(obs, "Forward") and find(obs, "agenda.pdf")
    assert phone.world.emails[0].read
    opened = events(phone, "email_opened")
    assert opened[0]["id"] == "e1" and "deck" in opened[0]["body"]


def test_drawer_switches_folders(phone: SimPhone) -> None:
    obs = open_gmail(phone)
    obs = click_label(phone, obs, "Open navigation drawer")
    obs = click_label(phone, obs, "Sent")
    assert find(obs, "Saturday")
    assert not any(e.text == "Q2 roadmap review" for e in obs.elements)


def test_compose_with_attachment_sends_and_logs_everything(phone: SimPhone) -> None:
    obs = open_gmail(phone)
    obs = click_label(phone, obs, "Compose")
    assert obs.keyboard_shown  # the cursor starts in To
    obs = type_into(phone, obs, "To", "pri")
    obs = click_label(phone, obs, "Priya Natarajan")  # the autocomplete suggestion
    obs = type_into(phone, obs, "Cc", "dana.w@brightline.io")
    obs = type_into(phone, obs, "Subject", "Roadmap deck")
    obs = type_into(phone, obs, "Compose email", "Here it is.")
    obs = back(phone)  # the keyboard goes down first
    obs = click_label(phone, obs, "Attach file")
    obs = click_label(phone, obs, "Q2-roadmap.pdf")
    assert find(obs, "Q2-roadmap.pdf")
    obs = click_label(phone, obs, "Send")
    sent = events(phone, "email_sent")
    assert sent == [
        {
            "id": sent[0]["id"],
            "to": ["priya.n@brightline.io"],
            "cc": ["dana.w@brightline.io"],
            "subject": "Roadmap deck",
            "body": "Here it is.",
            "attachments": ["/sdcard/Documents/Q2-roadmap.pdf"],
            "reply_to": "",
            "forward_of": "",
        }
    ]
    mail = phone.world.emails[-1]
    assert mail.folder == "sent" and mail.to == ["priya.n@brightline.io"]
    assert find(obs, "Compose")  # back on the inbox


def test_send_refuses_a_bad_recipient(phone: SimPhone) -> None:
    obs = open_gmail(phone)
    obs = click_label(phone, obs, "Compose")
    obs = type_into(phone, obs, "To", "nobody")
    obs = click_label(phone, obs, "Send")
    assert find(obs, "Invalid recipient: nobody")
    assert not events(phone, "email_sent")


def test_contact_names_resolve_to_addresses(phone: SimPhone) -> None:
    obs = open_gmail(phone)
    obs = click_label(phone, obs, "Compose")
    obs = type_into(phone, obs, "To", "Dana Whitfield")
    obs = type_into(phone, obs, "Subject", "Hi")
    obs = click_label(phone, obs, "Send")
    assert events(phone, "email_sent")[0]["to"] == ["dana.w@brightline.io"]


def test_reply_prefills_recipient_and_subject(phone: SimPhone) -> None:
    obs = open_gmail(phone)
    obs = click_label(phone, obs, "Q2 roadmap review")
    obs = click_label(phone, obs, "Reply")
    assert find(obs, "dana.w@brightline.io", editable=True)
    assert find(obs, "Re: Q2 roadmap review", editable=True)
    obs = type_into(phone, obs, "Compose email", "Sending it Wednesday.")
    obs = click_label(phone, obs, "Send")
    sent = events(phone, "email_sent")[0]
    assert sent["to"] == ["dana.w@brightline.io"] and sent["reply_to"] == "e1"
    assert sent["subject"] == "Re: Q2 roadmap review" and sent["body"] == "Sending it Wednesday."


def test_forward_carries_the_message_and_its_attachments(phone: SimPhone) -> None:
    obs = open_gmail(phone)
    obs = click_label(phone, obs, "Q2 roadmap review")
    obs = click_label(phone, obs, "Forward")
    obs = type_into(phone, obs, "To", "priya.n@brightline.io")
    obs = type_into(phone, obs, "Compose email", "FYI")
    obs = click_label(phone, obs, "Send")
    sent = events(phone, "email_sent")[0]
    assert sent["subject"] == "Fwd: Q2 roadmap review" and sent["forward_of"] == "e1"
    assert sent["body"].startswith("FYI") and "Forwarded message" in sent["body"]
    assert "send the deck" in sent["body"] and sent["attachments"] == ["agenda.pdf"]


def test_leaving_a_filled_compose_saves_a_draft(phone: SimPhone) -> None:
    obs = open_gmail(phone)
    obs = click_label(phone, obs, "Compose")
    obs = type_into(phone, obs, "To", "maya.chen@example.com")
    obs = type_into(phone, obs, "Compose email", "Half-written thought")
    back(phone)  # keyboard down
    obs = back(phone)  # leave compose
    draft = events(phone, "email_draft")
    assert draft and draft[0]["to"] == ["maya.chen@example.com"]
    assert draft[0]["body"] == "Half-written thought"
    saved = [m for m in phone.world.emails if m.folder == "drafts"]
    assert len(saved) == 1
    # Opening the draft resumes it; sending removes it from Drafts.
    obs = click_label(phone, obs, "Open navigation drawer")
    obs = click_label(phone, obs, "Drafts")
    obs = click_label(phone, obs, "Draft")
    assert find(obs, "Half-written thought", editable=True)
    obs = click_label(phone, obs, "Send")
    assert not [m for m in phone.world.emails if m.folder == "drafts"]
    assert events(phone, "email_sent")[0]["body"] == "Half-written thought"


def test_leaving_an_untouched_reply_saves_nothing(phone: SimPhone) -> None:
    obs = open_gmail(phone)
    obs = click_label(phone, obs, "Q2 roadmap review")
    obs = click_label(phone, obs, "Reply")
    obs = click_label(phone, obs, "Navigate up")
    assert not events(phone, "email_draft")
    assert find(obs, "Reply")  # back on the message


def test_links_open_in_chrome(phone: SimPhone) -> None:
    obs = open_gmail(phone)
    obs = click_label(phone, obs, "Q2 roadmap review")
    obs = click_label(phone, obs, "https://docs.brightline.io/q2")
    assert events(phone, "link_opened") == [
        {"url": "https://docs.brightline.io/q2", "source": "email"}
    ]
    assert obs.foreground_package == "com.android.chrome"


def test_an_attachment_not_on_the_phone_downloads_then_opens(phone: SimPhone) -> None:
    obs = open_gmail(phone)
    obs = click_label(phone, obs, "Q2 roadmap review")
    obs = click_label(phone, obs, "Attachment: agenda.pdf")
    assert events(phone, "download_completed")[0]["path"] == "/sdcard/Download/agenda.pdf"
    assert phone.world.file("agenda.pdf") is not None
    assert events(phone, "file_opened")[0]["path"] == "/sdcard/Download/agenda.pdf"
    assert find(obs, "agenda.pdf")


def test_delete_moves_to_trash(phone: SimPhone) -> None:
    obs = open_gmail(phone)
    obs = click_label(phone, obs, "Your May statement is ready")
    obs = click_label(phone, obs, "Delete")
    assert phone.world.emails[1].folder == "trash"
    assert events(phone, "email_deleted")[0]["id"] == "e2"
    assert not any(e.text == "Your May statement is ready" for e in obs.elements)


def test_gmail_takes_shared_text_and_files_into_a_new_message(phone: SimPhone) -> None:
    phone.reset(SETUP)  # shared from the home screen, so Gmail is among the targets
    phone.share(
        SharePayload(text="Look at this", files=("/sdcard/DCIM/Camera/IMG_20260510_101500.jpg",))
    )
    obs = click_label(phone, phone.observe(), "Gmail", package="android")
    assert obs.foreground_package == GM
    assert find(obs, "Look at this", editable=True)
    assert find(obs, "IMG_20260510_101500.jpg")
    obs = type_into(phone, obs, "To", "maya.chen@example.com")
    obs = click_label(phone, obs, "Send")
    sent = events(phone, "email_sent")[0]
    assert sent["body"] == "Look at this"
    assert sent["attachments"] == ["/sdcard/DCIM/Camera/IMG_20260510_101500.jpg"]


def test_a_share_keeps_the_message_being_written(phone: SimPhone) -> None:
    obs = open_gmail(phone)
    obs = click_label(phone, obs, "Compose")
    obs = type_into(phone, obs, "Subject", "Unfinished")
    phone.act(Action(action_type="navigate_home"))
    phone.share(SharePayload(text="https://pdxeats.com/food-week"))
    obs = click_label(phone, phone.observe(), "Gmail", package="android")
    assert find(obs, "https://pdxeats.com/food-week", editable=True)
    assert events(phone, "email_draft")[0]["subject"] == "Unfinished"
