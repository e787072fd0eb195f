"""The served phone's file system: shared storage is the world's files; the rest is Android's."""

from __future__ import annotations

import errno
import random
import stat

import pytest

from ghostei.actions import Action
from ghostei.served.vfs import SYSTEM_BIN, PhoneFS, iso_to_epoch
from ghostei.sim.phone import SimPhone
from ghostei.world import FileEntry

from .helpers import click_label

SETUP = {
    "files": [
        {
            "path": "/sdcard/Documents/notes.txt",
            "content": "Buy milk",
            "modified": "2026-05-01T08:00:00",
        },
        {"path": "/sdcard/DCIM/Camera/IMG_1.jpg", "content": "A beach at sunset"},
    ]
}


@pytest.fixture
def fs() -> PhoneFS:
    phone = SimPhone()
    phone.reset(SETUP)
    return PhoneFS(phone)


def test_shared_storage_is_the_worlds_files_under_every_alias(fs: PhoneFS) -> None:
    for root in ("/sdcard", "/storage/emulated/0", "/storage/self/primary", "/sdcard/"):
        assert fs.read(f"{root.rstrip('/')}/Documents/notes.txt") == b"Buy milk"
    st = fs.stat("/storage/emulated/0/Documents/notes.txt")
    assert st is not None and st.is_file and st.size == len(b"Buy milk")
    assert st.mtime == iso_to_epoch("2026-05-01T08:00:00")
    assert stat.S_IMODE(st.mode) == 0o660
    names = [name for name, _ in fs.listdir("/sdcard") or []]
    for folder in ("DCIM", "Documents", "Download", "Pictures", "Android", "Music", "Movies"):
        assert folder in names
    camera = fs.stat("/sdcard/DCIM/Camera")  # a folder implied by a file's path
    assert camera is not None and camera.is_dir
    assert [n for n, _ in fs.listdir("/sdcard/DCIM/Camera") or []] == ["IMG_1.jpg"]


def test_push_then_pull_round_trips_random_binary_bytes(fs: PhoneFS) -> None:
    data = random.Random(7).randbytes(50_000)
    fs.write("/sdcard/Download/blob.bin", data, 0o644, 1_700_000_000)
    assert fs.read("/sdcard/Download/blob.bin") == data
    assert fs.read("/storage/emulated/0/Download/blob.bin") == data
    st = fs.stat("/sdcard/Download/blob.bin")
    assert st is not None and st.size == len(data) and st.mtime == 1_700_000_000
    entry = fs.phone.world.file("/sdcard/Download/blob.bin")
    assert entry is not None and entry.size == len(data)


def test_pushed_text_becomes_the_entrys_content_and_apps_see_it(fs: PhoneFS) -> None:
    fs.write("/sdcard/Download/agenda.txt", "Réunion à 10h\n".encode(), 0o644, 1_700_000_000)
    entry = fs.phone.world.file("agenda.txt")
    assert entry is not None and entry.content == "Réunion à 10h\n"
    phone = fs.phone
    obs = phone.act(Action(action_type="open_app", app_name="Files"))
    obs = click_label(phone, obs, "Downloads")
    assert any(e.text == "agenda.txt" for e in obs.elements)


def test_an_app_changing_a_file_wins_over_the_pushed_bytes(fs: PhoneFS) -> None:
    fs.write("/sdcard/Download/x.bin", b"\xff\xfe\x00raw", 0o644, 0)
    entry = fs.phone.world.file("/sdcard/Download/x.bin")
    assert entry is not None and entry.content == ""
    entry.content = "rewritten by an app"
    assert fs.read("/sdcard/Download/x.bin") == b"rewritten by an app"


def test_write_creates_parent_folders_like_push(fs: PhoneFS) -> None:
    fs.write("/sdcard/Documents/a/b/c.txt", b"deep", 0o644, 0)
    for folder in ("/sdcard/Documents/a", "/sdcard/Documents/a/b"):
        st = fs.stat(folder)
        assert st is not None and st.is_dir
    fs.write("/data/local/tmp/tool/run.sh", b"echo hi", 0o755, 5)
    st = fs.stat("/data/local/tmp/tool/run.sh")
    assert st is not None and stat.S_IMODE(st.mode) == 0o755 and st.mtime == 5
    assert fs.phone.world.file("run.sh") is None  # outside shared storage: not a world file


def test_remove_deletes_world_files_and_folders(fs: PhoneFS) -> None:
    assert fs.remove("/sdcard/Documents/notes.txt")
    assert fs.phone.world.file("notes.txt") is None
    assert not fs.remove("/sdcard/Documents/notes.txt")
    assert not fs.remove("/sdcard/DCIM")  # not empty, not recursive
    assert fs.remove("/sdcard/DCIM", recursive=True)
    assert fs.stat("/sdcard/DCIM/Camera/IMG_1.jpg") is None
    assert fs.phone.world.files == []


def test_errors_carry_androids_errno(fs: PhoneFS) -> None:
    with pytest.raises(OSError) as ro:
        fs.write("/system/bin/evil", b"x", 0o755, 0)
    assert ro.value.errno == errno.EROFS
    with pytest.raises(OSError) as exists:
        fs.mkdir("/sdcard/Download")
    assert exists.value.errno == errno.EEXIST
    with pytest.raises(OSError) as missing:
        fs.mkdir("/sdcard/no/such")
    assert missing.value.errno == errno.ENOENT
    with pytest.raises(OSError) as isdir:
        fs.write("/sdcard/Download", b"x", 0o644, 0)
    assert isdir.value.errno == errno.EISDIR
    fs.makedirs("/sdcard/no/such")
    assert fs.stat("/sdcard/no/such") is not None


def test_glob_matches_per_component_and_keeps_the_spelling(fs: PhoneFS) -> None:
    fs.write("/sdcard/Download/a.txt", b"a", 0o644, 0)
    fs.write("/sdcard/Download/b.pdf", b"b", 0o644, 0)
    fs.write("/sdcard/Download/.hidden", b"h", 0o644, 0)
    assert fs.glob("/sdcard/Download/*") == ["/sdcard/Download/a.txt", "/sdcard/Download/b.pdf"]
    assert fs.glob("/storage/emulated/0/Down*/*.txt") == ["/storage/emulated/0/Download/a.txt"]
    assert fs.glob("/sdcard/*/IMG_?.jpg") == []
    assert fs.glob("/sdcard/DCIM/*/IMG_?.jpg") == ["/sdcard/DCIM/Camera/IMG_1.jpg"]
    assert fs.glob("/sdcard/Download/.h*") == ["/sdcard/Download/.hidden"]
    assert fs.glob("/nowhere/*") == []


def test_the_system_partition_lists_the_shells_programs(fs: PhoneFS) -> None:
    names = [n for n, _ in fs.listdir("/system/bin") or []]
    assert "sh" in names and "screencap" in names and names == sorted(SYSTEM_BIN)
    st = fs.stat("/bin/ls")
    assert st is not None and st.is_file and st.mode & 0o111
    root = [n for n, _ in fs.listdir("/") or []]
    assert {"sdcard", "storage", "system", "data", "bin"} <= set(root)
    assert fs.read("/dev/null") == b""
    fs.write("/dev/null", b"gone", 0o644, 0)


def test_move_keeps_the_world_entry(fs: PhoneFS) -> None:
    entry = fs.phone.world.file("notes.txt")
    fs.move("/sdcard/Documents/notes.txt", "/sdcard/Download/notes.txt")
    assert entry is not None and entry.path == "/sdcard/Download/notes.txt"
    assert fs.read("/sdcard/Download/notes.txt") == b"Buy milk"
    fs.move("/sdcard/Download/notes.txt", "/data/local/tmp/notes.txt")
    assert fs.phone.world.file("notes.txt") is None
    assert fs.read("/data/local/tmp/notes.txt") == b"Buy milk"


def test_a_new_world_forgets_what_the_file_system_kept(fs: PhoneFS) -> None:
    fs.write("/data/local/tmp/x", b"x", 0o644, 0)
    fs.write("/sdcard/Download/b.bin", b"\xff\x00", 0o644, 0)
    fs.mkdir("/sdcard/Empty")
    fs.phone.reset(
        {"files": [FileEntry(path="/sdcard/Download/b.bin", content="text").model_dump()]}
    )
    assert fs.read("/data/local/tmp/x") is None
    assert fs.read("/sdcard/Download/b.bin") == b"text"
    assert fs.stat("/sdcard/Empty") is None


def test_folders_made_in_files_and_over_adb_are_the_same_folders(fs: PhoneFS) -> None:
    fs.phone.world.folders.append("/sdcard/Documents/Textbooks")  # made in Files
    st = fs.stat("/sdcard/Documents/Textbooks")
    assert st is not None and stat.S_ISDIR(st.mode)
    assert "Textbooks" in [name for name, _ in fs.listdir("/sdcard/Documents") or []]
    fs.mkdir("/sdcard/Archive")  # made over adb: Files lists it too
    assert "/sdcard/Archive" in fs.phone.world.folders
    fs.move("/sdcard/Archive", "/sdcard/Old")
    assert "/sdcard/Old" in fs.phone.world.folders
    assert "/sdcard/Archive" not in fs.phone.world.folders
    assert fs.remove("/sdcard/Documents/Textbooks", recursive=True)
    assert fs.stat("/sdcard/Documents/Textbooks") is None
    assert fs.phone.world.folders == ["/sdcard/Old"]
