"""OS services apps build on: the share sheet, the screenshot tile, clipboard and downloads."""

from __future__ import annotations

from ghostei.actions import Action
from ghostei.sim.apps.base import SharePayload
from ghostei.sim.phone import SimPhone

from .helpers import click_label, find

SETUP = {
    "contacts": [{"id": "c1", "name": "Maya Chen", "phone": "+1 415 555 0199"}],
    "files": [{"path": "/sdcard/DCIM/Camera/beach.jpg", "content": "A beach at sunset"}],
}


def _kinds(phone: SimPhone) -> list[str]:
    return [e.kind for e in phone.events]


def test_a_shared_photo_reaches_a_contact_as_an_mms() -> None:
    phone = SimPhone(540, 1200)
    phone.reset(SETUP)
    phone.act(Action(action_type="open_app", app_name="Contacts"))
    phone.share(SharePayload(files=("/sdcard/DCIM/Camera/beach.jpg",)))
    obs = phone.observe()
    sheet = [e for e in obs.elements if e.package == "android"]
    assert sheet, "the share sheet is a window of the framework's package"
    labels = {e.content_desc for e in sheet if e.clickable}
    # Messages takes files; Copy is offered for text only; the sharing app is not a target.
    assert "Messages" in labels and "Copy" not in labels and "Contacts" not in labels
    obs = click_label(phone, obs, "Messages", package="android")
    assert obs.foreground_package == "com.google.android.apps.messaging"
    obs = click_label(phone, obs, "Maya Chen")
    assert find(obs, "Attachment: beach.jpg")
    obs = click_label(phone, obs, "Send SMS")
    sent = phone.events.of_kind("sms_sent")[-1]
    assert sent.data["attachments"] == ["/sdcard/DCIM/Camera/beach.jpg"]
    chosen = phone.events.of_kind("share_target_chosen")[-1]
    assert chosen.data["target"] == "Messages" and chosen.data["source"] == "Contacts"


def test_back_closes_the_share_sheet_and_copy_fills_the_clipboard() -> None:
    phone = SimPhone(540, 1200)
    phone.reset(SETUP)
    phone.act(Action(action_type="open_app", app_name="Contacts"))
    phone.share(SharePayload(text="https://example.com/x"))
    obs = phone.act(Action(action_type="navigate_back"))
    assert not [e for e in obs.elements if e.package == "android"]
    assert obs.foreground_package == "com.google.android.contacts"
    phone.share(SharePayload(text="https://example.com/x"))
    click_label(phone, phone.observe(), "Copy", package="android")
    assert phone.world.clipboard == "https://example.com/x"
    assert "clipboard_set" in _kinds(phone)


def test_the_screenshot_tile_captures_a_heads_up_notification() -> None:
    phone = SimPhone(540, 1200)
    phone.reset(SETUP)
    phone.receive_sms("+1 202 555 0110", "Your parcel is held: pay the fee at parcel-fee.top")
    phone.act(Action(action_type="swipe", x=270, y=5, x2=270, y2=600))
    assert phone.shade_open
    obs = phone.observe()
    click_label(phone, obs, "Screenshot")
    shot = phone.events.of_kind("screenshot_taken")[-1]
    assert shot.data["path"].startswith("/sdcard/Pictures/Screenshots/Screenshot_")
    assert "parcel-fee.top" in shot.data["text"], "the heads-up was on screen"
    assert phone.world.file(shot.data["path"]) is not None
    assert not phone.shade_open


def test_a_download_lands_in_download_and_notifies() -> None:
    phone = SimPhone(540, 1200)
    phone.reset(SETUP)
    path = phone.download("https://files.example/invoice.pdf", "invoice.pdf", "Invoice 113")
    assert path == "/sdcard/Download/invoice.pdf"
    entry = phone.world.file("invoice.pdf")
    assert entry is not None and entry.kind == "document" and entry.content == "Invoice 113"
    assert phone.notifications[-1].title == "Download complete"
    assert phone.events.of_kind("download_completed")[-1].data["path"] == path


def test_messages_links_skip_the_domain_of_an_email_address() -> None:
    from ghostei.sim.apps.messages import find_links

    body = "Write to jordan@example.com, or pay at parcel-fee.top/pay or https://x.co/a."
    assert find_links(body) == ["parcel-fee.top/pay", "https://x.co/a"]
