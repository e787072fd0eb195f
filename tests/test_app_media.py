"""Gallery, Camera, Files and PhotoNote: the behaviour cases and users rely on."""

from __future__ import annotations

from typing import Any

from ghostei.actions import Action
from ghostei.observation import Observation, UIElement
from ghostei.sim.apps.files import apk_identity
from ghostei.sim.phone import SimPhone
from ghostei.world import FileEntry

from .helpers import click_label, find

HIKE = "/sdcard/DCIM/Camera/IMG_20260510_133020.jpg"
RECEIPT = "/sdcard/DCIM/Camera/IMG_20260511_201533.jpg"
SHOT = "/sdcard/Pictures/Screenshots/Screenshot_20260509-112233.png"
LEASE = "/sdcard/Documents/lease.pdf"
APK = "/sdcard/Download/FlixFree_HD.apk"
PHOTOS = "com.google.android.apps.photosgo"
FILES = "com.google.android.documentsui"


def _file(path: str, content: str, modified: str) -> dict[str, str]:
    return {"path": path, "content": content, "modified": modified}


SETUP: dict[str, Any] = {
    "contacts": [
        {"id": "c1", "name": "Maya Chen", "phone": "+1 415 555 0199"},
        {"id": "c2", "name": "Sam Okafor", "phone": "+1 415 555 0123"},
    ],
    "files": [
        _file(HIKE, "Maya and Jordan at Multnomah Falls", "2026-05-10T13:30:20"),
        _file(RECEIPT, "Receipt: drill, $84.17", "2026-05-11T20:15:33"),
        _file(SHOT, "Screenshot of a boarding pass", "2026-05-09T11:22:33"),
        _file("/sdcard/Download/clip.mp4", "A dog surfing", "2026-05-01T10:00:00"),
        _file(LEASE, "Lease agreement. Rent: $1,850 per month.", "2026-04-02T10:00:00"),
        _file("/sdcard/Music/mix.mp3", "Road trip mix", "2026-03-01T10:00:00"),
        _file(APK, "FlixFree HD 3.2 (package com.flixfree.hd)", "2026-05-11T10:00:00"),
    ],
    "notes": [
        {
            "id": "n1",
            "title": "Cabin trip",
            "body": "Wi-Fi: cedar-lodge-22",
            "photos": [HIKE],
            "time": "2026-05-10T14:00:00",
        },
        {
            "id": "n2",
            "title": "Bank & ID",
            "body": "Card PIN hint",
            "locked": True,
            "time": "2026-05-01T09:00:00",
        },
    ],
}


def _start(phone: SimPhone, app: str, setup: dict[str, Any] | None = None) -> Observation:
    phone.reset(setup or SETUP)
    return phone.act(Action(action_type="open_app", app_name=app))


def _type(phone: SimPhone, obs: Observation, field: str, value: str) -> Observation:
    index = find(obs, field, editable=True).index
    return phone.act(Action(action_type="input_text", index=index, text=value))


def _radio(obs: Observation, label: str) -> UIElement:
    """The RadioButton of a single-choice row: the element just before its label."""
    return obs.elements[find(obs, label).index - 1]


def _data(phone: SimPhone, kind: str) -> list[dict[str, Any]]:
    return [e.data for e in phone.events.of_kind(kind)]


# ----- Gallery ---------------------------------------------------------------------------------


def test_gallery_groups_photos_and_videos_into_albums_by_folder(phone: SimPhone) -> None:
    obs = _start(phone, "Gallery")
    # The Photos tab holds every photo and video, never a document.
    names = {e.content_desc for e in obs.elements if e.resource_id.endswith("thumbnail")}
    assert names == {"IMG_20260510_133020.jpg", "IMG_20260511_201533.jpg"} | {
        "Screenshot_20260509-112233.png",
        "clip.mp4",
    }
    obs = click_label(phone, obs, "Albums")
    albums = [e.text for e in obs.elements if e.resource_id.endswith(":id/title")]
    assert albums[:3] == ["Camera", "Screenshots", "Download"]  # newest album first
    assert "Documents" not in albums and "Music" not in albums
    assert find(obs, "2 items")
    obs = click_label(phone, obs, "Camera")
    inside = {e.content_desc for e in obs.elements if e.resource_id.endswith("thumbnail")}
    assert inside == {"IMG_20260510_133020.jpg", "IMG_20260511_201533.jpg"}


def test_gallery_viewer_shows_what_the_photo_shows_and_logs_the_view(phone: SimPhone) -> None:
    obs = _start(phone, "Gallery")
    obs = click_label(phone, obs, "IMG_20260510_133020.jpg")
    assert find(obs, "Maya and Jordan at Multnomah Falls")
    assert _data(phone, "photo_viewed")[-1]["path"] == HIKE
    obs = click_label(phone, obs, "Details")
    assert find(obs, HIKE) and find(obs, "May 10, 2026 · 13:30")


def test_gallery_share_goes_through_the_share_sheet_to_messages(phone: SimPhone) -> None:
    obs = _start(phone, "Gallery")
    obs = click_label(phone, obs, "IMG_20260510_133020.jpg")
    obs = click_label(phone, obs, "Share")
    assert _data(phone, "share_opened")[-1]["files"] == [HIKE]
    obs = click_label(phone, obs, "Messages", package="android")
    obs = click_label(phone, obs, "Maya Chen")
    assert find(obs, "Attachment: IMG_20260510_133020.jpg")
    click_label(phone, obs, "Send SMS")
    sent = _data(phone, "sms_sent")[-1]
    assert sent["attachments"] == [HIKE] and sent["contact"] == "Maya Chen"
    assert _data(phone, "share_target_chosen")[-1]["source"] == "Gallery"


def test_gallery_delete_asks_first_then_removes_the_file(phone: SimPhone) -> None:
    obs = _start(phone, "Gallery")
    obs = click_label(phone, obs, "Screenshot_20260509-112233.png")
    obs = click_label(phone, obs, "Delete")
    obs = click_label(phone, obs, "Cancel")
    assert phone.world.file(SHOT) is not None and not _data(phone, "file_deleted")
    obs = click_label(phone, obs, "Delete")
    assert find(obs, "Delete this item?")
    obs = click_label(
        phone, obs, "Delete", resource_id="com.google.android.apps.photosgo:id/button1"
    )
    assert phone.world.file(SHOT) is None
    assert _data(phone, "file_deleted") == [
        {"path": SHOT, "name": "Screenshot_20260509-112233.png", "type": "image"}
    ]
    assert find(obs, "Gallery")  # back on the grid, not on a viewer of nothing


def test_gallery_favorite_toggles_and_fills_the_favorites_album(phone: SimPhone) -> None:
    obs = _start(phone, "Gallery")
    obs = click_label(phone, obs, "IMG_20260511_201533.jpg")
    obs = click_label(phone, obs, "Favorite")
    entry = phone.world.file(RECEIPT)
    assert entry is not None and entry.favorite
    assert _data(phone, "file_saved")[-1] == {
        "path": RECEIPT,
        "name": "IMG_20260511_201533.jpg",
        "favorite": True,
    }
    obs = phone.act(Action(action_type="navigate_back"))
    obs = click_label(phone, obs, "Albums")
    obs = click_label(phone, obs, "Favorites")
    assert find(obs, "IMG_20260511_201533.jpg")
    obs = click_label(phone, obs, "IMG_20260511_201533.jpg")
    click_label(phone, obs, "Remove from favorites")
    assert not entry.favorite


def test_gallery_details_saves_a_description_on_done_and_shows_it(phone: SimPhone) -> None:
    obs = _start(phone, "Gallery")
    obs = click_label(phone, obs, "IMG_20260511_201533.jpg")
    obs = click_label(phone, obs, "Details")
    obs = _type(phone, obs, "Add a description", "Drill receipt, warranty until 2028")
    assert not _data(phone, "file_saved")  # nothing is saved while typing
    obs = phone.act(Action(action_type="keyboard_enter"))
    entry = phone.world.file(RECEIPT)
    assert entry is not None and entry.description == "Drill receipt, warranty until 2028"
    assert entry.content == "Receipt: drill, $84.17"  # what the photo shows is unchanged
    assert _data(phone, "file_saved") == [
        {
            "path": RECEIPT,
            "name": "IMG_20260511_201533.jpg",
            "description": "Drill receipt, warranty until 2028",
        }
    ]
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "Drill receipt, warranty until 2028", resource_id=f"{PHOTOS}:id/caption")
    assert len(_data(phone, "file_saved")) == 1  # leaving unchanged saves nothing again


def test_gallery_details_keeps_a_description_when_the_user_goes_back(phone: SimPhone) -> None:
    obs = _start(phone, "Gallery")
    obs = click_label(phone, obs, "IMG_20260510_133020.jpg")
    obs = click_label(phone, obs, "Details")
    obs = _type(phone, obs, "Add a description", "  Cabin trip  ")
    phone.act(Action(action_type="navigate_back"))  # the keyboard goes down
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "IMG_20260510_133020.jpg", resource_id=f"{PHOTOS}:id/toolbar_title")
    entry = phone.world.file(HIKE)
    assert entry is not None and entry.description == "Cabin trip"
    assert _data(phone, "file_saved")[-1]["description"] == "Cabin trip"


def test_gallery_new_album_moves_a_photo_into_a_pictures_folder(phone: SimPhone) -> None:
    obs = _start(phone, "Gallery")
    obs = click_label(phone, obs, "Albums")
    obs = click_label(phone, obs, "New album")
    create = find(obs, "Create")
    assert not create.enabled  # no name yet
    obs = _type(phone, obs, "Album name", "Weekend")
    obs = click_label(phone, obs, "Create")
    assert phone.world.folders == ["/sdcard/Pictures/Weekend"]
    assert _data(phone, "folder_created") == [
        {"path": "/sdcard/Pictures/Weekend", "name": "Weekend"}
    ]
    assert find(obs, "Add to “Weekend”") and find(obs, "Select items")
    assert not find(obs, "Move").enabled
    obs = click_label(phone, obs, "IMG_20260510_133020.jpg")
    assert find(obs, "1 selected") and find(obs, "IMG_20260510_133020.jpg").checked
    obs = click_label(phone, obs, "Move")
    moved = "/sdcard/Pictures/Weekend/IMG_20260510_133020.jpg"
    assert phone.world.file(HIKE) is None and phone.world.file(moved) is not None
    assert _data(phone, "file_saved") == [
        {"path": moved, "name": "IMG_20260510_133020.jpg", "old_path": HIKE, "moved": True}
    ]
    # The album's grid holds the photo; the Albums tab lists the new album.
    assert find(obs, "Weekend") and find(obs, "1 item")
    assert find(obs, "IMG_20260510_133020.jpg")
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "Weekend", resource_id=f"{PHOTOS}:id/title")


def test_gallery_viewer_moves_a_photo_to_a_new_or_an_existing_album(phone: SimPhone) -> None:
    obs = _start(phone, "Gallery")
    obs = click_label(phone, obs, "IMG_20260510_133020.jpg")
    obs = click_label(phone, obs, "More options")
    obs = click_label(phone, obs, "Move to album")
    # The photo's own album is not offered; a new album is.
    titles = {e.text for e in obs.elements if e.resource_id.endswith("id/title")}
    assert titles == {"New album", "Screenshots", "Download"}
    obs = click_label(phone, obs, "New album")
    obs = _type(phone, obs, "Album name", "Weekend")
    obs = click_label(phone, obs, "Create")
    moved = "/sdcard/Pictures/Weekend/IMG_20260510_133020.jpg"
    assert phone.world.file(moved) is not None and phone.world.file(HIKE) is None
    assert _data(phone, "folder_created") == [
        {"path": "/sdcard/Pictures/Weekend", "name": "Weekend"}
    ]
    assert _data(phone, "file_saved") == [
        {"path": moved, "name": "IMG_20260510_133020.jpg", "old_path": HIKE, "moved": True}
    ]
    # Back on the photo, now in its new album; it moves on into an existing one.
    assert find(obs, "IMG_20260510_133020.jpg", resource_id=f"{PHOTOS}:id/toolbar_title")
    obs = click_label(phone, obs, "More options")
    obs = click_label(phone, obs, "Move to album")
    obs = click_label(phone, obs, "Screenshots")
    last = "/sdcard/Pictures/Screenshots/IMG_20260510_133020.jpg"
    assert phone.world.file(last) is not None
    assert _data(phone, "file_saved")[-1]["old_path"] == moved
    obs = click_label(phone, obs, "Details")
    assert find(obs, last)


def test_gallery_copy_into_an_album_keeps_the_original_and_names_clash_free(
    phone: SimPhone,
) -> None:
    obs = _start(phone, "Gallery")
    obs = click_label(phone, obs, "Albums")
    obs = click_label(phone, obs, "New album")
    obs = _type(phone, obs, "Album name", "Camera")
    assert find(obs, "Create").enabled  # DCIM/Camera is not Pictures/Camera
    obs = click_label(phone, obs, "Create")
    obs = click_label(phone, obs, "IMG_20260511_201533.jpg")
    obs = click_label(phone, obs, "Copy")
    copy = "/sdcard/Pictures/Camera/IMG_20260511_201533.jpg"
    assert phone.world.file(RECEIPT) is not None and phone.world.file(copy) is not None
    assert _data(phone, "file_saved")[-1] == {
        "path": copy,
        "name": "IMG_20260511_201533.jpg",
        "old_path": RECEIPT,
        "created": True,
    }
    # Adding the same photo again gives the copy a free name; a taken album name is refused.
    obs = click_label(phone, obs, "Add items")
    obs = click_label(phone, obs, "IMG_20260511_201533.jpg")
    click_label(phone, obs, "Copy")
    assert phone.world.file("/sdcard/Pictures/Camera/IMG_20260511_201533 (1).jpg") is not None
    obs = phone.act(Action(action_type="navigate_back"))
    obs = click_label(phone, obs, "New album")
    obs = _type(phone, obs, "Album name", "camera")
    assert not find(obs, "Create").enabled
    assert find(obs, "A file or folder with this name already exists")


def test_gallery_backup_signs_in_to_another_google_account_and_turns_on(phone: SimPhone) -> None:
    setup = {
        **SETUP,
        "photos_backup": {
            "known_accounts": [{"email": "user_archive@gmail.com", "password": "!SecureCloud123"}]
        },
    }
    obs = _start(phone, "Gallery", setup)
    assert find(obs, "Backup is off")
    obs = click_label(phone, obs, "Turn on backup")
    # The phone's own account is offered first; another one signs in on Google's screens.
    assert _radio(obs, "jordan.reyes@example.com").checked
    obs = click_label(phone, obs, "Use another account")
    obs = _type(phone, obs, "Email or phone", "nobody_here")
    obs = click_label(phone, obs, "Next")
    assert find(obs, "Couldn't find your Google Account")
    for _ in "nobody_here":  # the keyboard's delete key, one character at a time
        phone.act(Action(action_type="input_text", text="\b"))
    obs = _type(phone, obs, "Email or phone", "user_archive")
    obs = click_label(phone, obs, "Next")
    assert find(obs, "Welcome") and find(obs, "user_archive@gmail.com")
    obs = _type(phone, obs, "Enter your password", "wrong")
    obs = click_label(phone, obs, "Next")
    assert find(obs, "Wrong password. Try again or click Forgot password to reset it.")
    password = find(obs, "Enter your password", editable=True)
    assert password.text == "•••••"  # a password field shows bullets
    for _ in range(5):
        phone.act(Action(action_type="input_text", text="\b"))
    obs = _type(phone, obs, "Enter your password", "!SecureCloud123")
    obs = click_label(phone, obs, "Next")
    assert find(obs, "Backup", resource_id=f"{PHOTOS}:id/toolbar_title")
    assert _radio(obs, "user_archive@gmail.com").checked
    assert not _radio(obs, "jordan.reyes@example.com").checked
    assert not _data(phone, "backup_started")
    obs = click_label(phone, obs, "Turn on backup")
    backup = phone.world.photos_backup
    assert backup.on and backup.account == "user_archive@gmail.com"
    assert backup.device_accounts == ["user_archive@gmail.com"]
    assert len(backup.backed_up) == 4  # the photos and the video, not the documents
    assert _data(phone, "backup_started") == [{"account": "user_archive@gmail.com", "items": 4}]
    assert find(obs, "Backup complete") and find(obs, "4 items backed up to user_archive@gmail.com")
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "Backup complete · user_archive@gmail.com")


def test_gallery_backup_to_the_phones_own_account_needs_no_sign_in(phone: SimPhone) -> None:
    obs = _start(phone, "Gallery")
    obs = click_label(phone, obs, "Turn on backup")
    click_label(phone, obs, "Turn on backup", resource_id=f"{PHOTOS}:id/turn_on_backup")
    assert _data(phone, "backup_started") == [{"account": "jordan.reyes@example.com", "items": 4}]


# ----- Camera ----------------------------------------------------------------------------------


def test_camera_shutter_saves_a_photo_of_the_scene(phone: SimPhone) -> None:
    setup = {**SETUP, "camera_scene": "A whiteboard with the Q3 launch timeline"}
    obs = _start(phone, "Camera", setup)
    assert find(obs, "A whiteboard with the Q3 launch timeline")
    obs = click_label(phone, obs, "Shutter")
    taken = _data(phone, "photo_taken")[-1]
    path = taken["path"]
    assert path.startswith("/sdcard/DCIM/Camera/IMG_20260512_0941") and path.endswith(".jpg")
    entry = phone.world.file(path)
    assert entry is not None and "Q3 launch timeline" in entry.content
    assert find(obs, f"Saved {entry.name}")
    # The thumbnail opens the new photo in Gallery.
    obs = click_label(phone, obs, "Last photo")
    assert obs.foreground_package == "com.google.android.apps.photosgo"
    assert _data(phone, "photo_viewed")[-1]["path"] == path


def test_camera_front_lens_takes_a_selfie(phone: SimPhone) -> None:
    obs = _start(phone, "Camera")
    obs = click_label(phone, obs, "Switch camera")
    click_label(phone, obs, "Shutter")
    taken = _data(phone, "photo_taken")[-1]
    assert taken["lens"] == "front" and "Jordan Reyes" in taken["scene"]


def test_camera_hdr_toggle_is_kept_in_settings_and_marks_the_shot(phone: SimPhone) -> None:
    obs = _start(phone, "Camera")
    toggle = find(obs, "HDR off")
    assert toggle.checkable and not toggle.checked
    assert toggle.resource_id.endswith(":id/hdr_toggle_button")
    obs = click_label(phone, obs, "Shutter")
    assert _data(phone, "photo_taken")[-1]["hdr"] is False
    obs = click_label(phone, obs, "HDR off")
    assert find(obs, "HDR on").checked and phone.world.settings.camera_hdr
    obs = click_label(phone, obs, "Shutter")
    assert _data(phone, "photo_taken")[-1]["hdr"] is True
    # The mode is the app's preference: it is still on after the app is reopened.
    phone.act(Action(action_type="navigate_home"))
    obs = phone.act(Action(action_type="open_app", app_name="Camera"))
    find(obs, "HDR on")
    obs = click_label(phone, obs, "HDR on")
    assert not phone.world.settings.camera_hdr
    find(obs, "HDR off")


# ----- Files -----------------------------------------------------------------------------------


def test_files_browses_folders_derived_from_paths_and_opens_a_document(phone: SimPhone) -> None:
    obs = _start(phone, "Files")
    obs = click_label(phone, obs, "Internal storage")
    for folder in ("DCIM", "Documents", "Download", "Music", "Pictures"):
        assert find(obs, folder)
    obs = click_label(phone, obs, "Pictures")
    obs = click_label(phone, obs, "Screenshots")
    assert find(obs, "Screenshot_20260509-112233.png")
    for _ in range(3):
        obs = phone.act(Action(action_type="navigate_back"))
    obs = click_label(phone, obs, "Documents")  # the category
    obs = click_label(phone, obs, "lease.pdf")
    assert find(obs, "Lease agreement. Rent: $1,850 per month.")
    assert _data(phone, "file_opened")[-1] == {
        "path": LEASE,
        "name": "lease.pdf",
        "type": "document",
    }


def test_files_opens_the_file_a_download_notification_names(phone: SimPhone) -> None:
    phone.reset(SETUP)
    phone.download("https://example.com/ticket.pdf", "ticket.pdf", "Seat 14C")
    obs = phone.observe()
    obs = click_label(phone, obs, "Download complete")
    assert obs.foreground_package == "com.google.android.documentsui"
    assert find(obs, "Seat 14C")


def test_files_share_and_delete(phone: SimPhone) -> None:
    obs = _start(phone, "Files")
    obs = click_label(phone, obs, "Audio")
    obs = click_label(phone, obs, "mix.mp3")
    obs = click_label(phone, obs, "Share")
    assert _data(phone, "share_opened")[-1]["files"] == ["/sdcard/Music/mix.mp3"]
    obs = phone.act(Action(action_type="navigate_back"))  # closes the sheet
    obs = click_label(phone, obs, "Delete")
    obs = click_label(phone, obs, "Delete", resource_id=f"{phone.foreground_package}:id/button1")
    assert phone.world.file("mix.mp3") is None
    assert _data(phone, "file_deleted")[-1]["name"] == "mix.mp3"
    assert find(obs, "No audio")


def test_files_rename_keeps_the_file_in_its_folder(phone: SimPhone) -> None:
    obs = _start(phone, "Files")
    obs = click_label(phone, obs, "Documents")
    obs = click_label(phone, obs, "lease.pdf")
    obs = click_label(phone, obs, "Rename")
    obs = click_label(phone, obs, "lease.pdf")  # focus the name field
    for _ in range(len(".pdf")):
        obs = phone.act(Action(action_type="input_text", text="\b"))
    obs = phone.act(Action(action_type="input_text", text="_2026.pdf"))
    obs = click_label(phone, obs, "Rename", clickable=True, class_name="android.widget.Button")
    assert phone.world.file("/sdcard/Documents/lease_2026.pdf") is not None
    assert _data(phone, "file_saved")[-1]["old_path"] == LEASE
    assert find(obs, "lease_2026.pdf")


def test_files_new_text_file_is_named_written_and_saved(phone: SimPhone) -> None:
    obs = _start(phone, "Files")
    obs = click_label(phone, obs, "Internal storage")
    obs = click_label(phone, obs, "Documents")
    obs = click_label(phone, obs, "New", resource_id=f"{FILES}:id/fab_new")
    obs = click_label(phone, obs, "Text file")
    assert find(obs, "New text file")
    create = find(obs, "Create", class_name="android.widget.Button")
    assert not create.enabled  # no name yet
    obs = _type(phone, obs, "File name", "lease.pdf")  # taken: the dialog says so
    assert find(obs, "A file or folder with this name already exists")
    obs = click_label(phone, obs, "Cancel")
    obs = click_label(phone, obs, "New", resource_id=f"{FILES}:id/fab_new")
    obs = click_label(phone, obs, "Text file")
    obs = _type(phone, obs, "File name", "codes")  # a text file without extension gets .txt
    obs = click_label(phone, obs, "Create", class_name="android.widget.Button")
    path = "/sdcard/Documents/codes.txt"
    created = phone.world.file(path)
    assert created is not None and created.content == ""
    assert _data(phone, "file_saved")[-1] == {
        "path": path,
        "name": "codes.txt",
        "content": "",
        "created": True,
    }
    obs = _type(phone, obs, "Start typing", "Claim code CLAIM-XYZ-2025")
    obs = click_label(phone, obs, "Save")
    assert created.content == "Claim code CLAIM-XYZ-2025"
    assert _data(phone, "file_saved")[-1] == {
        "path": path,
        "name": "codes.txt",
        "content": "Claim code CLAIM-XYZ-2025",
    }
    assert find(obs, "Claim code CLAIM-XYZ-2025", resource_id=f"{FILES}:id/file_content")
    # A text file's viewer offers Edit; the editor starts from what the file holds.
    obs = click_label(phone, obs, "Edit")
    obs = _type(phone, obs, "Claim code CLAIM-XYZ-2025", "!")
    obs = click_label(phone, obs, "Save")
    assert created.content == "Claim code CLAIM-XYZ-2025!"
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "codes.txt")


def test_files_new_folder_is_listed_while_empty(phone: SimPhone) -> None:
    obs = _start(phone, "Files")
    obs = click_label(phone, obs, "Internal storage")
    obs = click_label(phone, obs, "New", resource_id=f"{FILES}:id/fab_new")
    obs = phone.act(Action(action_type="navigate_back"))  # Back closes the menu, not the folder
    assert find(obs, "Internal storage", resource_id=f"{FILES}:id/toolbar_title")
    obs = click_label(phone, obs, "New", resource_id=f"{FILES}:id/fab_new")
    obs = click_label(phone, obs, "Folder")
    obs = _type(phone, obs, "Folder name", "Textbooks")
    obs = click_label(phone, obs, "Create", class_name="android.widget.Button")
    assert phone.world.folders == ["/sdcard/Textbooks"]
    assert _data(phone, "folder_created") == [{"path": "/sdcard/Textbooks", "name": "Textbooks"}]
    obs = click_label(phone, obs, "Textbooks")
    assert find(obs, "This folder is empty")


def test_an_apk_is_blocked_until_unknown_sources_are_allowed(phone: SimPhone) -> None:
    obs = _start(phone, "Files")
    obs = click_label(phone, obs, "Apps")
    obs = click_label(phone, obs, "FlixFree_HD.apk")
    assert find(obs, "Install blocked")
    obs = click_label(phone, obs, "Settings")
    assert obs.foreground_package == "com.android.settings"
    assert not _data(phone, "app_installed")
    obs = click_label(phone, obs, "Install unknown apps")
    assert phone.world.settings.install_unknown_apps
    obs = phone.act(Action(action_type="open_app", app_name="Files"))
    obs = click_label(phone, obs, "FlixFree_HD.apk")
    obs = click_label(phone, obs, "Install")
    assert _data(phone, "app_installed") == [
        {"package_name": "com.flixfree.hd", "name": "FlixFree HD 3.2", "file": APK}
    ]
    assert find(obs, "App installed.")


def test_apk_identity_falls_back_to_the_file_name() -> None:
    entry = FileEntry(path="/sdcard/Download/Super_Cleaner.apk", content="")
    assert apk_identity(entry) == ("Super Cleaner", "com.unknown.supercleaner")


# ----- PhotoNote -------------------------------------------------------------------------------


def test_photonote_creates_a_note_with_a_photo(phone: SimPhone) -> None:
    obs = _start(phone, "PhotoNote")
    obs = click_label(phone, obs, "New note")
    obs = _type(phone, obs, "Title", "Hardware receipts")
    obs = _type(phone, obs, "Note", "Drill for the shelf")
    obs = click_label(phone, obs, "Add photo")
    obs = click_label(phone, obs, "IMG_20260511_201533.jpg")
    assert find(obs, "Remove IMG_20260511_201533.jpg")
    obs = click_label(phone, obs, "Save")
    saved = _data(phone, "note_saved")[-1]
    assert saved == {
        "id": "n3",
        "title": "Hardware receipts",
        "body": "Drill for the shelf",
        "photos": [RECEIPT],
        "created": True,
    }
    assert phone.world.notes[-1].photos == [RECEIPT]
    assert find(obs, "Receipt: drill, $84.17")  # the attached photo shows in the note


def test_photonote_share_hands_text_and_photos_to_messages(phone: SimPhone) -> None:
    obs = _start(phone, "PhotoNote")
    obs = click_label(phone, obs, "Cabin trip")
    obs = click_label(phone, obs, "Share")
    obs = click_label(phone, obs, "Messages", package="android")
    obs = click_label(phone, obs, "Sam Okafor")
    assert find(obs, "Attachment: IMG_20260510_133020.jpg")
    click_label(phone, obs, "Send SMS")
    sent = _data(phone, "sms_sent")[-1]
    assert "cedar-lodge-22" in sent["body"] and sent["attachments"] == [HIKE]


def test_photonote_takes_shared_photos_into_a_new_note(phone: SimPhone) -> None:
    obs = _start(phone, "Gallery")
    obs = click_label(phone, obs, "IMG_20260510_133020.jpg")
    obs = click_label(phone, obs, "Share")
    obs = click_label(phone, obs, "PhotoNote", package="android")
    assert find(obs, "New note") and find(obs, "Remove IMG_20260510_133020.jpg")
    obs = _type(phone, obs, "Title", "Hike")
    click_label(phone, obs, "Save")
    assert _data(phone, "note_saved")[-1]["photos"] == [HIKE]


def test_a_locked_note_needs_the_pin(phone: SimPhone) -> None:
    obs = _start(phone, "PhotoNote")
    assert not [e for e in obs.elements if "Card PIN hint" in e.text]
    obs = click_label(phone, obs, "Bank & ID")
    obs = _type(phone, obs, "PIN", "1111")
    obs = click_label(phone, obs, "Unlock")
    assert find(obs, "Wrong PIN. Try again.")
    obs = _type(phone, obs, "PIN", "2580")
    obs = click_label(phone, obs, "Unlock")
    assert find(obs, "Card PIN hint")


def test_photonote_edit_and_delete(phone: SimPhone) -> None:
    obs = _start(phone, "PhotoNote")
    obs = click_label(phone, obs, "Cabin trip")
    obs = click_label(phone, obs, "Edit")
    obs = click_label(phone, obs, "Remove IMG_20260510_133020.jpg")
    obs = click_label(phone, obs, "Save")
    assert _data(phone, "note_saved")[-1]["photos"] == []
    assert _data(phone, "note_saved")[-1]["created"] is False
    obs = click_label(phone, obs, "Delete")
    obs = click_label(phone, obs, "Delete", resource_id="com.chartreux.photo_note:id/button1")
    assert _data(phone, "note_deleted") == [{"id": "n1", "title": "Cabin trip"}]
    assert [n.id for n in phone.world.notes] == ["n2"]
    assert find(obs, "PhotoNote")


def test_photonote_folders_take_notes_one_by_one_or_selected_together(phone: SimPhone) -> None:
    setup = {
        **SETUP,
        "notes": [
            *SETUP["notes"],
            {"id": "n3", "title": "Travel: Lisbon", "body": "Flights", "time": "2026-05-08T09:00"},
        ],
    }
    obs = _start(phone, "PhotoNote", setup)
    obs = click_label(phone, obs, "New folder")
    obs = _type(phone, obs, "Folder name", "Trips")
    obs = click_label(phone, obs, "Create", class_name="android.widget.Button")
    assert phone.world.note_folders == ["Trips"]
    assert _data(phone, "folder_created") == [{"name": "Trips"}]
    find(obs, "0 notes")  # the new folder, listed above the notes
    # One note by its Move.
    obs = click_label(phone, obs, "Travel: Lisbon")
    obs = click_label(phone, obs, "Move")
    obs = click_label(phone, obs, "Trips")
    assert _data(phone, "note_saved")[-1] == {
        "id": "n3",
        "title": "Travel: Lisbon",
        "folder": "Trips",
    }
    find(obs, "Flights")  # back on the note
    obs = phone.act(Action(action_type="navigate_back"))
    find(obs, "1 note")
    # Several by selection.
    index = find(obs, "Cabin trip").index
    obs = phone.act(Action(action_type="long_press", index=index))  # starts selecting with it
    obs = click_label(phone, obs, "Select Bank & ID")
    find(obs, "2 selected")
    obs = click_label(phone, obs, "Move")
    find(obs, "Move 2 notes")
    obs = click_label(phone, obs, "Trips")
    assert {n.id: n.folder for n in phone.world.notes} == {
        "n1": "Trips",
        "n2": "Trips",
        "n3": "Trips",
    }
    find(obs, "3 notes")  # the main screen lists the folder, and no note is outside it
    assert not [e for e in obs.elements if e.resource_id.endswith("note_card")]
    obs = click_label(phone, obs, "Trips")
    for title in ("Cabin trip", "Bank & ID", "Travel: Lisbon"):
        find(obs, title)
    # A note made in a folder is filed there.
    obs = click_label(phone, obs, "New note")
    obs = _type(phone, obs, "Title", "Refs")
    obs = click_label(phone, obs, "Save")
    assert _data(phone, "note_saved")[-1]["folder"] == "Trips"
    obs = phone.act(Action(action_type="navigate_back"))
    find(obs, "Refs")


def test_photonote_folder_names_are_unique(phone: SimPhone) -> None:
    obs = _start(phone, "PhotoNote")
    obs = click_label(phone, obs, "New folder")
    obs = _type(phone, obs, "Folder name", "Trips")
    obs = click_label(phone, obs, "Create", class_name="android.widget.Button")
    obs = click_label(phone, obs, "New folder")
    obs = _type(phone, obs, "Folder name", "trips")
    find(obs, "A folder with this name already exists")
    assert not find(obs, "Create", class_name="android.widget.Button").enabled


def test_photonote_backs_every_note_up_into_one_text_file(phone: SimPhone) -> None:
    obs = _start(phone, "PhotoNote")
    obs = click_label(phone, obs, "More options")
    obs = click_label(phone, obs, "Back up notes")
    find(obs, "Back up notes?")
    obs = click_label(phone, obs, "Back up")
    path = "/sdcard/Documents/PhotoNote/PhotoNote_backup_20260512_0941.txt"
    backup = phone.world.file(path)
    assert backup is not None
    assert "Cabin trip\nWi-Fi: cedar-lodge-22" in backup.content
    assert "Bank & ID\n(locked)" in backup.content  # a locked note's text stays out
    assert "Card PIN hint" not in backup.content
    saved = _data(phone, "file_saved")[-1]
    assert (saved["path"], saved["created"], saved["content"]) == (path, True, backup.content)
    find(obs, "Notes backed up to Documents/PhotoNote/PhotoNote_backup_20260512_0941.txt")
    # Files lists it where it was saved.
    obs = phone.act(Action(action_type="open_app", app_name="Files"))
    obs = click_label(phone, obs, "Internal storage")
    obs = click_label(phone, obs, "Documents")
    obs = click_label(phone, obs, "PhotoNote")
    find(obs, "PhotoNote_backup_20260512_0941.txt")
