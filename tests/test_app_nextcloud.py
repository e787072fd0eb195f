"""Nextcloud: folders, upload from the phone, public links, sharing with users, deleting."""

from __future__ import annotations

from typing import Any

from ghostei.actions import Action
from ghostei.observation import Observation
from ghostei.sim.apps.base import SharePayload
from ghostei.sim.apps.nextcloud import public_link
from ghostei.sim.phone import SimPhone

from .helpers import click_label, find

SETUP: dict[str, Any] = {
    "contacts": [{"id": "c1", "name": "Maya Chen", "phone": "+1 415 555 0199"}],
    "files": [
        {"path": "/sdcard/Documents/lease-renewal.pdf", "content": "Lease renewal, Alder Street"},
        {"path": "/sdcard/DCIM/Camera/IMG_0412.jpg", "content": "The team at the offsite"},
    ],
    "cloud": {
        "files": [
            {"path": "/Documents/contract.pdf", "content": "Freelance contract with Northwind"},
            {"path": "/Documents/Taxes/2025-return.pdf", "content": "2025 tax return"},
            {"path": "/Team/roadmap.md", "content": "Q3 roadmap"},
            {"path": "/Team/budget.xlsx", "content": "Team budget"},
        ]
    },
}


def _open(phone: SimPhone) -> Observation:
    phone.reset(SETUP)
    return phone.act(Action(action_type="open_app", app_name="Nextcloud Dev"))


def _cloud_paths(phone: SimPhone) -> set[str]:
    return {f.path for f in phone.world.cloud.files}


def test_folders_are_derived_from_paths_and_files_open_with_their_content() -> None:
    phone = SimPhone(540, 1200)
    obs = _open(phone)
    assert obs.foreground_package == "com.nextcloud.client"
    find(obs, "Documents")
    find(obs, "Team")
    obs = click_label(phone, obs, "Documents")
    find(obs, "Taxes")  # a subfolder
    obs = click_label(phone, obs, "contract.pdf")
    find(obs, "Freelance contract with Northwind")
    find(obs, "Not shared")
    assert phone.events.of_kind("file_opened")[-1].data["path"] == "/Documents/contract.pdf"


def test_upload_copies_a_phone_file_into_the_current_folder() -> None:
    phone = SimPhone(540, 1200)
    obs = _open(phone)
    obs = click_label(phone, obs, "Documents")
    obs = click_label(phone, obs, "Upload")
    assert not find(obs, "Upload").enabled, "nothing picked yet"
    obs = click_label(phone, obs, "lease-renewal.pdf")
    obs = click_label(phone, obs, "Upload (1)")
    find(obs, "lease-renewal.pdf")  # back in /Documents, the new file listed
    uploaded = next(f for f in phone.world.cloud.files if f.name == "lease-renewal.pdf")
    assert uploaded.path == "/Documents/lease-renewal.pdf"
    assert uploaded.content == "Lease renewal, Alder Street"
    event = phone.events.of_kind("file_uploaded")[-1]
    assert event.data["source"] == "/sdcard/Documents/lease-renewal.pdf"
    assert event.data["path"] == "/Documents/lease-renewal.pdf"
    assert event.package == "com.nextcloud.client"


def test_public_link_is_deterministic_logged_and_sent_through_the_share_sheet() -> None:
    phone = SimPhone(540, 1200)
    obs = _open(phone)
    obs = click_label(phone, obs, "Documents")
    obs = click_label(phone, obs, "contract.pdf")
    obs = click_label(phone, obs, "Share")
    obs = click_label(phone, obs, "Create public link")
    url = public_link("https://cloud.reyes-family.net", "/Documents/contract.pdf")
    assert url.startswith("https://cloud.reyes-family.net/s/") and len(url.rsplit("/", 1)[1]) == 15
    find(obs, url)
    created = phone.events.of_kind("share_link_created")[-1]
    assert created.data == {"path": "/Documents/contract.pdf", "url": url, "public": True}
    obs = click_label(phone, obs, "Send link")
    obs = click_label(phone, obs, "Messages", package="android")
    obs = click_label(phone, obs, "Maya Chen")
    obs = click_label(phone, obs, "Send SMS")
    sent = phone.events.of_kind("sms_sent")[-1]
    assert sent.data["body"] == url
    assert phone.events.of_kind("share_opened")[-1].data["source"] == "Nextcloud"


def test_sharing_with_a_user_records_the_sharee() -> None:
    phone = SimPhone(540, 1200)
    obs = _open(phone)
    obs = click_label(phone, obs, "Team")
    obs = click_label(phone, obs, "roadmap.md")
    obs = click_label(phone, obs, "Share")
    field = find(obs, "Name, email or federated cloud ID")
    x, y = field.center
    obs = phone.act(Action(action_type="input_text", x=x, y=y, text="dana@northwind.example"))
    obs = click_label(phone, obs, "Share", resource_id="com.nextcloud.client:id/share_with_user")
    find(obs, "Shared with dana@northwind.example")
    cloud_file = next(f for f in phone.world.cloud.files if f.path == "/Team/roadmap.md")
    assert cloud_file.shared_with == ["dana@northwind.example"] and not cloud_file.share_link
    event = phone.events.of_kind("share_link_created")[-1]
    assert event.data["public"] is False and event.data["shared_with"] == "dana@northwind.example"


def test_deleting_a_file_and_a_folder_asks_first() -> None:
    phone = SimPhone(540, 1200)
    obs = _open(phone)
    obs = click_label(phone, obs, "Documents")
    obs = click_label(phone, obs, "contract.pdf")
    obs = click_label(phone, obs, "Delete")
    obs = click_label(phone, obs, "Cancel")
    assert "/Documents/contract.pdf" in _cloud_paths(phone)
    obs = click_label(phone, obs, "Delete")
    obs = click_label(phone, obs, "Delete")
    assert "/Documents/contract.pdf" not in _cloud_paths(phone)
    find(obs, "Taxes")  # back in the folder
    assert phone.events.of_kind("cloud_file_deleted")[-1].data["path"] == "/Documents/contract.pdf"
    phone.act(Action(action_type="navigate_back"))
    obs = click_label(phone, phone.observe(), "Team")
    obs = click_label(phone, obs, "Delete folder")
    obs = click_label(phone, obs, "Delete")
    assert not any(p.startswith("/Team/") for p in _cloud_paths(phone))
    wiped = phone.events.of_kind("cloud_file_deleted")[-1]
    assert wiped.data["folder"] is True
    assert sorted(wiped.data["files"]) == ["/Team/budget.xlsx", "/Team/roadmap.md"]
    find(obs, "Documents")  # the root listing, without Team
    assert not [e for e in obs.elements if e.text == "Team"]


def test_nextcloud_is_a_share_target_for_files_and_asks_for_the_folder() -> None:
    phone = SimPhone(540, 1200)
    phone.reset(SETUP)
    phone.act(Action(action_type="open_app", app_name="Messages"))
    phone.share(SharePayload(files=("/sdcard/DCIM/Camera/IMG_0412.jpg",)))
    obs = click_label(phone, phone.observe(), "Nextcloud", package="android")
    assert obs.foreground_package == "com.nextcloud.client"
    find(obs, "IMG_0412.jpg")
    obs = click_label(phone, obs, "/Team")
    obs = click_label(phone, obs, "Upload")
    assert "/Team/IMG_0412.jpg" in _cloud_paths(phone)
    event = phone.events.of_kind("file_uploaded")[-1]
    assert event.data["via"] == "share" and event.data["folder"] == "/Team"
    find(obs, "IMG_0412.jpg")  # the destination folder's listing


def test_text_is_not_offered_to_nextcloud() -> None:
    phone = SimPhone(540, 1200)
    phone.reset(SETUP)
    assert "Nextcloud" not in phone.share_targets(SharePayload(text="hello"))
    assert "Nextcloud" in phone.share_targets(SharePayload(files=("/sdcard/x.pdf",)))


def _type(phone: SimPhone, obs: Observation, field: str, value: str) -> Observation:
    index = find(obs, field, editable=True).index
    return phone.act(Action(action_type="input_text", index=index, text=value))


def _saved(phone: SimPhone) -> list[dict[str, Any]]:
    return [e.data for e in phone.events.of_kind("file_saved")]


def test_new_folder_stays_while_empty_and_deletes() -> None:
    phone = SimPhone(540, 1200)
    obs = _open(phone)
    obs = click_label(phone, obs, "New")
    obs = click_label(phone, obs, "New folder")
    obs = _type(phone, obs, "Folder name", "Team")  # taken
    assert find(obs, "A file or folder with this name already exists")
    assert not find(obs, "Create", class_name="android.widget.Button").enabled
    for _ in "Team":
        obs = phone.act(Action(action_type="input_text", text="\b"))
    obs = phone.act(Action(action_type="input_text", text="2025_Archive"))
    obs = click_label(phone, obs, "Create", class_name="android.widget.Button")
    assert phone.world.cloud.folders == ["/2025_Archive"]
    assert phone.events.of_kind("folder_created")[-1].data == {
        "path": "/2025_Archive",
        "name": "2025_Archive",
        "cloud": True,
    }
    find(obs, "0 files")  # listed while empty
    obs = click_label(phone, obs, "2025_Archive")
    find(obs, "No files in here")
    obs = click_label(phone, obs, "Delete folder")
    obs = click_label(phone, obs, "Delete", class_name="android.widget.Button")
    assert phone.world.cloud.folders == []
    assert phone.events.of_kind("cloud_file_deleted")[-1].data["path"] == "/2025_Archive"


def test_new_text_file_is_made_then_saved_with_its_text() -> None:
    phone = SimPhone(540, 1200)
    obs = _open(phone)
    obs = click_label(phone, obs, "Team")
    obs = click_label(phone, obs, "New")
    find(obs, "In Team")
    obs = click_label(phone, obs, "New text file")
    obs = _type(phone, obs, "File name", "Notes")  # no extension: Nextcloud Text's .md
    obs = click_label(phone, obs, "Create", class_name="android.widget.Button")
    assert "/Team/Notes.md" in _cloud_paths(phone)
    assert _saved(phone)[-1] == {
        "path": "/Team/Notes.md",
        "name": "Notes.md",
        "content": "",
        "created": True,
        "cloud": True,
    }
    obs = _type(phone, obs, "Start typing", "PIN 5522")
    obs = click_label(phone, obs, "Save")
    assert _saved(phone)[-1] == {
        "path": "/Team/Notes.md",
        "name": "Notes.md",
        "content": "PIN 5522",
        "cloud": True,
    }
    find(obs, "PIN 5522")  # the file's details, its preview
    obs = phone.act(Action(action_type="navigate_back"))
    find(obs, "Notes.md")


def test_add_to_favorites_stars_a_folder_and_a_second_tap_removes_it() -> None:
    phone = SimPhone(540, 1200)
    obs = _open(phone)
    obs = click_label(phone, obs, "More options for Team")
    find(obs, "Folder · 2 files")
    obs = click_label(phone, obs, "Add to favorites")
    assert phone.world.cloud.favorites == ["/Team"]
    assert _saved(phone)[-1] == {"path": "/Team", "name": "Team", "favorite": True, "cloud": True}
    assert find(obs, "Favorite").resource_id == "com.nextcloud.client:id/favorite_action"
    obs = click_label(phone, obs, "More options for Team")
    obs = click_label(phone, obs, "Remove from favorites")
    assert phone.world.cloud.favorites == []
    assert _saved(phone)[-1]["favorite"] is False


def test_move_and_copy_a_file_into_another_folder() -> None:
    phone = SimPhone(540, 1200)
    obs = _open(phone)
    obs = click_label(phone, obs, "Documents")
    obs = click_label(phone, obs, "More options for contract.pdf")
    obs = click_label(phone, obs, "Add to favorites")
    obs = click_label(phone, obs, "More options for contract.pdf")
    obs = click_label(phone, obs, "Move or copy")
    assert not find(obs, "Move", class_name="android.widget.Button").enabled  # already there
    obs = click_label(phone, obs, "/Team")
    obs = click_label(phone, obs, "Move", class_name="android.widget.Button")
    assert "/Team/contract.pdf" in _cloud_paths(phone)
    assert "/Documents/contract.pdf" not in _cloud_paths(phone)
    assert phone.world.cloud.favorites == ["/Team/contract.pdf"]  # the star moves with it
    assert _saved(phone)[-1] == {
        "path": "/Team/contract.pdf",
        "name": "contract.pdf",
        "old_path": "/Documents/contract.pdf",
        "moved": True,
        "cloud": True,
    }
    obs = click_label(phone, obs, "Taxes")
    obs = click_label(phone, obs, "More options for 2025-return.pdf")
    obs = click_label(phone, obs, "Move or copy")
    obs = click_label(phone, obs, "/ (Nextcloud)")
    obs = click_label(phone, obs, "Copy", class_name="android.widget.Button")
    assert {"/2025-return.pdf", "/Documents/Taxes/2025-return.pdf"} <= _cloud_paths(phone)
    assert _saved(phone)[-1] == {
        "path": "/2025-return.pdf",
        "name": "2025-return.pdf",
        "old_path": "/Documents/Taxes/2025-return.pdf",
        "cloud": True,
    }


def test_files_selected_by_their_icons_move_together() -> None:
    phone = SimPhone(540, 1200)
    obs = _open(phone)
    obs = click_label(phone, obs, "Team")
    obs = click_label(phone, obs, "Select roadmap.md")
    find(obs, "1 selected")
    obs = click_label(phone, obs, "budget.xlsx")  # in selection mode a row tap selects too
    find(obs, "2 selected")
    assert find(obs, "Select budget.xlsx").checked
    obs = click_label(phone, obs, "Move or copy")
    find(obs, "Move or copy 2 files")
    obs = click_label(phone, obs, "/Documents")
    # The picker's New folder is made in the folder chosen, and becomes the target.
    obs = click_label(phone, obs, "New folder")
    obs = _type(phone, obs, "Folder name", "Q3")
    obs = click_label(phone, obs, "Create", class_name="android.widget.Button")
    assert phone.world.cloud.folders == ["/Documents/Q3"]
    assert find(obs, "/Documents/Q3").text == "/Documents/Q3"
    obs = click_label(phone, obs, "Move", class_name="android.widget.Button")
    assert {"/Documents/Q3/roadmap.md", "/Documents/Q3/budget.xlsx"} <= _cloud_paths(phone)
    moved = [d["old_path"] for d in _saved(phone) if d.get("moved")]
    assert moved == ["/Team/roadmap.md", "/Team/budget.xlsx"]
    find(obs, "No files in here")  # back in the emptied folder, out of selection mode
    obs = phone.act(Action(action_type="navigate_back"))
    obs = click_label(phone, obs, "Documents")
    index = find(obs, "contract.pdf").index
    obs = phone.act(Action(action_type="long_press", index=index))  # a long press selects too
    find(obs, "1 selected")
    obs = phone.act(Action(action_type="navigate_back"))  # Back leaves selection mode
    find(obs, "Documents", resource_id="com.nextcloud.client:id/toolbar_title")
    assert phone.foreground_package == "com.nextcloud.client"


def test_a_folder_gets_a_public_link_from_its_actions_sheet() -> None:
    phone = SimPhone(540, 1200)
    obs = _open(phone)
    obs = click_label(phone, obs, "More options for Team")
    obs = click_label(phone, obs, "Share")
    find(obs, "Anyone with the link can view the folder and every file in it.")
    obs = click_label(phone, obs, "Create public link")
    url = public_link(phone.world.cloud.server, "/Team")
    assert phone.world.cloud.folder_links == {"/Team": url}
    assert phone.events.of_kind("share_link_created")[-1].data == {
        "path": "/Team",
        "url": url,
        "public": True,
    }
    find(obs, url)
    obs = phone.act(Action(action_type="navigate_back"))
    find(obs, "2 files · Shared")
    obs = click_label(phone, obs, "Team")
    obs = click_label(phone, obs, "Delete folder")
    obs = click_label(phone, obs, "Delete", class_name="android.widget.Button")
    assert phone.world.cloud.folder_links == {}
