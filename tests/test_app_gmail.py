"""Gmail: reading, compose with attachments, reply, forward, drafts, links and sharing."""

from __future__ import annotations

from typing import Any

from ghostei.actions import Action
from ghostei.observation import Observation
from ghostei.sim.apps.base import SharePayload
from ghostei.sim.phone import SimPhone

from .helpers import click, click_label, find

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
    assert not [m for m in phone.world.emails if m.folder == "drafts"]  # sent, not kept
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
    # Gmail keeps what is being written in Drafts as it changes, before the composer is left.
    draft = events(phone, "email_draft")
    assert draft and draft[-1]["to"] == ["maya.chen@example.com"]
    assert draft[-1]["body"] == "Half-written thought"
    assert len({d["id"] for d in draft}) == 1  # one draft, updated
    back(phone)  # keyboard down
    obs = back(phone)  # leave compose
    draft = events(phone, "email_draft")
    assert draft[-1]["body"] == "Half-written thought"
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


# ----- tabs, archive, stars and labels ---------------------------------------------------------

TABS_SETUP: dict[str, Any] = {
    **SETUP,
    "emails": [
        *SETUP["emails"],
        {
            "id": "p1",
            "sender": "deals@trailgear.com",
            "sender_name": "Trailgear",
            "subject": "40% off tents this weekend",
            "body": "Our spring sale ends Sunday.",
            "time": "2026-05-11T06:00:00",
            "category": "promotions",
            "read": False,
        },
        {
            "id": "p2",
            "sender": "news@pdxeats.com",
            "sender_name": "PDX Eats",
            "subject": "Food week is back",
            "body": "Twenty restaurants, one price.",
            "time": "2026-05-09T06:00:00",
            "category": "promotions",
        },
    ],
}


def open_tabs(phone: SimPhone) -> Observation:
    phone.reset(TABS_SETUP)
    return phone.act(Action(action_type="open_app", app_name="Gmail"))


def texts(obs: Observation) -> set[str]:
    return {e.text for e in obs.elements}


def test_promotions_live_in_their_tab_and_head_primary(phone: SimPhone) -> None:
    obs = open_tabs(phone)
    assert "40% off tents this weekend" not in texts(obs)  # not in Primary
    assert find(obs, "1 new") and find(obs, "Trailgear")  # the Promotions row heads Primary
    obs = click_label(phone, obs, "Promotions")
    assert {"40% off tents this weekend", "Food week is back"} <= texts(obs)
    assert "Q2 roadmap review" not in texts(obs)
    obs = back(phone)  # Back from a tab returns to Primary
    assert find(obs, "Q2 roadmap review") and obs.foreground_package == GM


def test_archive_leaves_the_inbox_and_keeps_the_mail_in_all_mail(phone: SimPhone) -> None:
    obs = open_tabs(phone)
    obs = click_label(phone, obs, "Open navigation drawer")
    obs = click_label(phone, obs, "Promotions")
    obs = click_label(phone, obs, "Food week is back")
    obs = click_label(phone, obs, "Archive")
    assert events(phone, "email_archived") == [
        {"id": "p2", "sender": "news@pdxeats.com", "subject": "Food week is back"}
    ]
    assert "Food week is back" not in texts(obs)  # back on the tab, the mail gone from it
    assert find(obs, "40% off tents this weekend")
    mail = next(m for m in phone.world.emails if m.id == "p2")
    assert mail.folder == "archive"
    obs = click_label(phone, obs, "Open navigation drawer")
    obs = click_label(phone, obs, "All mail")
    assert find(obs, "Food week is back")
    obs = click_label(phone, obs, "Food week is back")
    assert not any(e.content_desc == "Archive" for e in obs.elements)  # already archived
    obs = click_label(phone, obs, "More options")
    obs = click_label(phone, obs, "Move to Inbox")
    assert mail.folder == "inbox" and mail.category == "promotions"


def test_stars_toggle_in_the_list_and_the_mail_and_fill_starred(phone: SimPhone) -> None:
    obs = open_tabs(phone)
    obs = click_label(phone, obs, "Q2 roadmap review")
    obs = click_label(phone, obs, "Not starred")
    assert find(obs, "Starred").checked
    obs = back(phone)
    star = find(obs, "Starred")  # the list row's star shows it too
    assert star.checked
    obs = click(phone, find(obs, "Not starred"))  # the other row's star, from the list
    assert phone.world.emails[1].starred
    assert not events(phone, "email_opened")[1:]  # the star did not open the mail
    assert [(e["id"], e["starred"]) for e in events(phone, "email_starred")] == [
        ("e1", True),
        ("e2", True),
    ]
    obs = click_label(phone, obs, "Open navigation drawer")
    obs = click_label(phone, obs, "Starred")
    assert {"Q2 roadmap review", "Your May statement is ready"} <= texts(obs)


def test_a_new_label_then_move_to_it_and_change_labels(phone: SimPhone) -> None:
    obs = open_tabs(phone)
    obs = click_label(phone, obs, "Open navigation drawer")
    obs = click_label(phone, obs, "Create new")
    assert obs.keyboard_shown and find(obs, "New label")
    obs = type_into(phone, obs, "Enter a new label", "Trips")
    obs = click_label(phone, obs, "Done")
    assert phone.world.email_labels == ["Trips"]
    assert events(phone, "email_label_created") == [{"label": "Trips"}]
    obs = click_label(phone, obs, "Trips")  # the drawer lists it under LABELS
    assert find(obs, "Nothing in Trips")
    obs = back(phone)  # to Primary
    obs = click_label(phone, obs, "Q2 roadmap review")
    obs = click_label(phone, obs, "More options")
    obs = click_label(phone, obs, "Move to")
    obs = click_label(phone, obs, "Trips")
    mail = phone.world.emails[0]
    assert mail.labels == ["Trips"] and mail.folder == "archive"
    assert events(phone, "email_moved") == [
        {"id": "e1", "subject": "Q2 roadmap review", "to": "Trips", "from": "Primary"}
    ]
    assert "Q2 roadmap review" not in texts(obs)  # moved out of the inbox
    # Change labels: tick and untick on the statement, which stays in the inbox.
    obs = click_label(phone, obs, "Your May statement is ready")
    obs = click_label(phone, obs, "More options")
    obs = click_label(phone, obs, "Change labels")
    obs = click_label(phone, obs, "Trips")
    obs = click_label(phone, obs, "OK")
    assert phone.world.emails[1].labels == ["Trips"] and phone.world.emails[1].folder == "inbox"
    assert find(obs, "Trips", resource_id=f"{GM}:id/label_chip")
    assert events(phone, "email_labeled") == [
        {"id": "e2", "label": "Trips", "labeled": True, "subject": "Your May statement is ready"}
    ]
    obs = back(phone)
    obs = click_label(phone, obs, "Open navigation drawer")
    obs = click_label(phone, obs, "Trips")
    assert {"Q2 roadmap review", "Your May statement is ready"} <= texts(obs)


def test_a_label_name_in_use_is_refused(phone: SimPhone) -> None:
    phone.reset({**TABS_SETUP, "email_labels": ["Trips"]})
    obs = phone.act(Action(action_type="open_app", app_name="Gmail"))
    obs = click_label(phone, obs, "Open navigation drawer")
    obs = click_label(phone, obs, "Create new")
    obs = type_into(phone, obs, "Enter a new label", "trips")
    assert find(obs, "This label already exists")
    assert not find(obs, "Done").enabled
    assert phone.world.email_labels == ["Trips"]


def test_move_to_a_tab_recategorises(phone: SimPhone) -> None:
    obs = open_tabs(phone)
    obs = click_label(phone, obs, "Your May statement is ready")
    obs = click_label(phone, obs, "More options")
    obs = click_label(phone, obs, "Move to")
    obs = click_label(phone, obs, "Promotions")
    mail = phone.world.emails[1]
    assert mail.folder == "inbox" and mail.category == "promotions"
    assert "Your May statement is ready" not in texts(obs)


def test_selected_mails_are_archived_starred_and_moved_together(phone: SimPhone) -> None:
    phone.reset({**TABS_SETUP, "email_labels": ["Deals"]})
    obs = phone.act(Action(action_type="open_app", app_name="Gmail"))
    obs = click_label(phone, obs, "Promotions")
    # The avatar selects; a tap on another row then adds it to the selection.
    obs = click_label(phone, obs, "Select conversation from Trailgear")
    assert find(obs, "1", resource_id=f"{GM}:id/action_bar_title")
    assert find(obs, "Deselect conversation from Trailgear").checked
    obs = click_label(phone, obs, "Food week is back")
    assert find(obs, "2", resource_id=f"{GM}:id/action_bar_title")
    assert not events(phone, "email_opened")  # tapping in selection mode selects
    obs = click_label(phone, obs, "More options")
    obs = click_label(phone, obs, "Add star")
    assert all(m.starred for m in phone.world.emails if m.category == "promotions")
    obs = click_label(phone, obs, "More options")
    obs = click_label(phone, obs, "Move to")
    obs = click_label(phone, obs, "Deals")
    promos = [m for m in phone.world.emails if m.category == "promotions"]
    assert all(m.labels == ["Deals"] and m.folder == "archive" for m in promos)
    assert [e["id"] for e in events(phone, "email_moved")] == ["p1", "p2"]
    assert find(obs, "Nothing in Promotions") and find(obs, "Search in mail")  # selection over


def test_a_long_press_selects_and_archive_takes_the_selection(phone: SimPhone) -> None:
    obs = open_tabs(phone)
    obs = click_label(phone, obs, "Promotions")
    x, y = find(obs, "40% off tents this weekend").center
    obs = phone.act(Action(action_type="long_press", x=x, y=y))
    obs = click_label(phone, obs, "Food week is back")
    obs = click_label(phone, obs, "Food week is back")  # a second tap deselects
    assert find(obs, "1", resource_id=f"{GM}:id/action_bar_title")
    obs = click_label(phone, obs, "Archive")
    assert [e["id"] for e in events(phone, "email_archived")] == ["p1"]
    assert {m.id: m.folder for m in phone.world.emails}["p2"] == "inbox"
    x, y = find(obs, "Food week is back").center
    obs = phone.act(Action(action_type="long_press", x=x, y=y))
    obs = back(phone)  # Back leaves selection mode, still on the tab
    assert find(obs, "Search in mail") and find(obs, "Food week is back")


def test_selected_mails_go_to_trash_together(phone: SimPhone) -> None:
    obs = open_gmail(phone)
    obs = click_label(phone, obs, "Select conversation from Dana Whitfield")
    obs = click_label(phone, obs, "Your May statement is ready")
    obs = click_label(phone, obs, "Delete")
    assert [e["id"] for e in events(phone, "email_deleted")] == ["e1", "e2"]
    assert [m.folder for m in phone.world.emails[:2]] == ["trash", "trash"]
    assert find(obs, "Nothing in Inbox")
