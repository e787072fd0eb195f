"""The served phone's shell: the command lines adb clients send, answered as API 34 answers."""

from __future__ import annotations

import io
import json
import random
import re
import shlex
import struct
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image

from ghostei.actions import Action
from ghostei.device import DEFAULT_ATTACKER_PACKAGE
from ghostei.served.commands import PROGRAMS
from ghostei.served.shell import AndroidShell, ShellResult
from ghostei.served.vfs import SYSTEM_BIN, PhoneFS
from ghostei.sim.phone import SimPhone

from .helpers import find, open_payment

LAUNCHER = "com.google.android.apps.nexuslauncher"
GMAIL = "com.google.android.gm"
SETUP: dict[str, Any] = {
    "contacts": [
        {
            "id": "c1",
            "name": "Priya Shah",
            "phone": "+1 415 555 0199",
            "email": "priya@example.com",
        },
        {"id": "c2", "name": "Marco Rossi", "phone": "+39 06 5555 0101"},
    ],
    "sms": [
        {
            "id": "s1",
            "address": "+14155550199",
            "body": "Lunch at 1?",
            "time": "2026-05-11T12:00:00",
        },
        {
            "id": "s2",
            "address": "+14155550199",
            "body": "Sure, see you",
            "time": "2026-05-11T12:05:00",
            "incoming": False,
        },
    ],
}


class Device:
    """A served phone's shell, as a test drives it."""

    def __init__(self, setup: dict[str, Any] | None = None) -> None:
        self.phone = SimPhone()
        self.phone.reset(setup)
        self.fs = PhoneFS(self.phone)
        self.shell = AndroidShell(self.phone, self.fs, serial="emulator-5554")

    def run(self, command: str, stdin: bytes = b"") -> ShellResult:
        return self.shell.run(command, stdin)

    def out(self, command: str) -> str:
        result = self.run(command)
        assert result.stderr == b"", result.stderr
        return result.stdout.decode()

    def kinds(self) -> list[str]:
        return [e.kind for e in self.phone.events]


@pytest.fixture
def dev() -> Device:
    return Device(SETUP)


# ----- the shell language --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "stdout"),
    [
        ("echo 'single $HOME' \"double $HOME\" back\\ slash", "single $HOME double / back slash\n"),
        ("echo \"a\\\"b\" 'it'\"'\"'s'", "a\"b it's\n"),
        ("echo a; echo b", "a\nb\n"),
        ("true && echo yes || echo no", "yes\n"),
        ("false && echo yes || echo no", "no\n"),
        ("false; echo $?; true; echo $?", "1\n0\n"),
        ("foo 2>/dev/null; echo $?", "127\n"),
        ("echo x | grep -q x && echo found", "found\n"),
        ("! false && echo negated", "negated\n"),
        ("printf '%s-%d\\n' a 1 b 2", "a-1\nb-2\n"),
        ('X=1; Y="$X two"; echo $Y', "1 two\n"),
        ("echo $(echo nested $(echo deep)) `echo back`", "nested deep back\n"),
        ("sh -c 'echo $0 $1; exit 3' zero one; echo $?", "zero one\n3\n"),
        ("echo -n no-newline; echo", "no-newline\n"),
        ("echo 'a\\tb'", "a\tb\n"),
        ("cd /sdcard && pwd", "/sdcard\n"),
        ("[ -d /sdcard/Download ] && test -z '' && echo ok", "ok\n"),
        ("echo one # a comment", "one\n"),
        ("exit 4; echo never", ""),
    ],
)
def test_shell_language(dev: Device, command: str, stdout: str) -> None:
    assert dev.run(command).stdout.decode() == stdout


def test_exit_status_and_unknown_commands(dev: Device) -> None:
    result = dev.run("nosuchtool --flag")
    assert result.exit_code == 127
    assert result.stderr == b"/system/bin/sh: nosuchtool: inaccessible or not found\n"
    assert dev.run("exit 3").exit_code == 3
    assert dev.run("false").exit_code == 1
    assert dev.run("/system/bin/echo hi").stdout == b"hi\n"
    syntax = dev.run("echo 'unterminated")
    assert syntax.exit_code == 1 and syntax.stderr.startswith(b"/system/bin/sh: syntax error")


def test_output_interleaves_stdout_and_stderr_as_written(dev: Device) -> None:
    # adbutils' shell v1 appends "; echo X4EXIT:$?" and parses the number after the marker.
    result = dev.run("ls /nope; echo X4EXIT:$?")
    assert result.output == b"ls: /nope: No such file or directory\nX4EXIT:1\n"
    assert result.chunks == ((2, b"ls: /nope: No such file or directory\n"), (1, b"X4EXIT:1\n"))
    merged = dev.run("ls /nope 2>&1 | grep -c 'No such'")
    assert merged.stdout == b"1\n" and merged.stderr == b""


def test_globs_expand_against_the_phones_files(dev: Device) -> None:
    for name in ("a.txt", "b.txt", "c.pdf"):
        dev.fs.write(f"/sdcard/Download/{name}", name.encode(), 0o644, 0)
    assert (
        dev.out("echo /sdcard/Download/*.txt") == "/sdcard/Download/a.txt /sdcard/Download/b.txt\n"
    )
    assert dev.out("echo '/sdcard/Download/*'") == "/sdcard/Download/*\n"  # quoted: no glob
    assert dev.out("cd /sdcard/Download && echo ?.pdf") == "c.pdf\n"
    assert dev.out("echo /sdcard/none/*") == "/sdcard/none/*\n"  # no match: the word stays
    result = dev.run("rm -rf /sdcard/Download/*")
    assert result.exit_code == 0 and result.output == b""
    assert dev.out("ls /sdcard/Download") == ""
    assert not any(f.path.startswith("/sdcard/Download/") for f in dev.phone.world.files)


def test_redirection_writes_files(dev: Device) -> None:
    dev.run("echo first > /sdcard/Documents/log.txt; echo second >> /sdcard/Documents/log.txt")
    assert dev.out("cat /sdcard/Documents/log.txt") == "first\nsecond\n"
    assert dev.out("cat < /sdcard/Documents/log.txt | wc -l") == "2\n"
    entry = dev.phone.world.file("/sdcard/Documents/log.txt")
    assert entry is not None and entry.content == "first\nsecond\n"
    failed = dev.run("echo x > /system/evil")
    assert failed.exit_code == 1
    assert failed.stderr == b"/system/bin/sh: can't create /system/evil: Read-only file system\n"
    assert dev.run("echo x > /sdcard/no/dir/f").exit_code == 1


def test_grep_options(dev: Device) -> None:
    text = b"mCurrentFocus=Window{1 u0 a/b}\nmFocusedApp=ActivityRecord{2}\nother line\n"
    dev.fs.write("/data/local/tmp/d.txt", text, 0o644, 0)

    def grep(args: str) -> str:
        return dev.run(f"cat /data/local/tmp/d.txt | grep {args}").stdout.decode()

    assert grep("mCurrentFocus") == "mCurrentFocus=Window{1 u0 a/b}\n"
    assert grep("-E 'mCurrentFocus|mFocusedApp'").count("\n") == 2
    assert grep("'mCurrentFocus\\|mFocusedApp'").count("\n") == 2  # BRE alternation
    assert grep("-i OTHER") == "other line\n"
    assert grep("-v m") == "other line\n"
    assert grep("-o 'Window{[^}]*}'") == "Window{1 u0 a/b}\n"
    assert grep("-c Focus") == "2\n"
    assert grep("-n other") == "3:other line\n"
    assert grep("-E '[[:digit:]]+}' -o") == "2}\n"
    assert dev.run("grep -q nothing /data/local/tmp/d.txt").exit_code == 1
    assert dev.run("grep x /no/file").exit_code == 2


# ----- files ---------------------------------------------------------------------------------


def test_files_programs(dev: Device) -> None:
    assert dev.out("mkdir -p /sdcard/Documents/a/b && ls /sdcard/Documents") == "a\n"
    assert dev.run("mkdir /sdcard/Documents/a").stderr == (
        b"mkdir: '/sdcard/Documents/a': File exists\n"
    )
    dev.run("touch /sdcard/Documents/a/b/empty.txt")
    assert dev.out("ls /sdcard/Documents/a/b") == "empty.txt\n"
    dev.run("echo data > /sdcard/Documents/src.txt; cp /sdcard/Documents/src.txt /sdcard/Download/")
    assert dev.out("cat /sdcard/Download/src.txt") == "data\n"
    dev.run("mv /sdcard/Download/src.txt /sdcard/Download/moved.txt")
    assert dev.out("ls /sdcard/Download") == "moved.txt\n"
    rm = dev.run("rm /sdcard/Download/missing.txt")
    assert (
        rm.exit_code == 1
        and rm.stderr == b"rm: /sdcard/Download/missing.txt: No such file or directory\n"
    )
    assert dev.run("rm -f /sdcard/Download/missing.txt").exit_code == 0
    assert dev.run("rm /sdcard/Documents/a").stderr == b"rm: /sdcard/Documents/a: Is a directory\n"
    assert dev.run("rm -r /sdcard/Documents/a").exit_code == 0
    cat = dev.run("cat /sdcard/nope")
    assert cat.exit_code == 1 and cat.stderr == b"cat: /sdcard/nope: No such file or directory\n"


def test_ls_long_format(dev: Device) -> None:
    dev.fs.write("/sdcard/Download/report.pdf", b"x" * 1234, 0o644, 1_778_578_860)
    lines = dev.out("ls -l /sdcard/Download").splitlines()
    assert lines[0] == "total 4"
    assert lines[1] == "-rw-rw---- 1 root media_rw 1234 2026-05-12 09:41 report.pdf"
    listing = dev.out("ls -la /sdcard/Download").splitlines()
    assert [line.rsplit(" ", 1)[-1] for line in listing[1:]] == [".", "..", "report.pdf"]


def test_push_like_write_then_cat_and_rm(dev: Device) -> None:
    data = random.Random(3).randbytes(4096)
    dev.fs.write("/sdcard/Pictures/photo.png", data, 0o644, 0)
    assert dev.run("cat /sdcard/Pictures/photo.png").stdout == data
    assert dev.phone.world.file("photo.png") is not None
    assert dev.run("rm /sdcard/Pictures/photo.png").exit_code == 0
    assert dev.phone.world.file("photo.png") is None


def test_every_program_is_listed_in_system_bin() -> None:
    builtins = {":", "[", "cd", "export", "unset", "exec", "command", "type", "eval", "exit"}
    builtins |= {"wait", "set", "umask", "egrep", "fgrep"}
    assert set(PROGRAMS) - builtins <= set(SYSTEM_BIN)


# ----- input ---------------------------------------------------------------------------------


def test_input_tap_is_an_action_click() -> None:
    by_shell, by_action = Device(), Device()
    for d in (by_shell, by_action):
        d.phone.act(Action(action_type="open_app", app_name="Settings"))
    steps = ["Network & internet", "Airplane mode"]
    for label in steps:
        target = find(by_action.phone.observe(), label)
        x, y = target.center
        assert by_shell.run(f"input tap {x} {y}").output == b""
        by_action.phone.act(Action(action_type="click", x=x, y=y))
    assert by_shell.phone.world.settings.airplane_mode != SetupDefaults.airplane_mode
    assert [e.to_json() for e in by_shell.phone.events] == [
        e.to_json() for e in by_action.phone.events
    ]
    assert by_shell.phone.world == by_action.phone.world


class SetupDefaults:
    airplane_mode = False


def test_keyevents_home_back_enter_and_app_switch(dev: Device) -> None:
    dev.run("monkey -p com.google.android.gm -c android.intent.category.LAUNCHER 1")
    assert dev.phone.foreground_package == GMAIL
    dev.run("input keyevent 3")
    assert dev.phone.foreground_package == LAUNCHER
    dev.run("am start -n com.google.android.gm/.ConversationListActivityGmail")
    dev.run("input keyevent KEYCODE_BACK")
    assert dev.phone.foreground_package == LAUNCHER
    dev.run("am start -n com.google.android.gm/.ConversationListActivityGmail")
    dev.run("input keyevent 187")  # the overview of recent apps, the launcher's
    assert dev.phone.foreground_package == LAUNCHER and dev.phone.recents_open
    assert dev.kinds().count("navigated_home") == 1 and "navigated_back" in dev.kinds()
    assert dev.kinds()[-1] == "recents_opened"
    assert dev.run("input keyevent BOGUS").exit_code == 0  # unknown keys do nothing


def test_typing_as_the_upstream_harness_and_appagent_do() -> None:
    phone = SimPhone()
    obs = open_payment(phone)
    shell = AndroidShell(phone, PhoneFS(phone), serial="emulator-5554")
    field = find(obs, "Card number", editable=True)
    x, y = field.center
    # Upstream types one character per command, spaces as %s, punctuation quoted, and
    # anything else through ADBKeyboard's broadcast; AppAgent sends whole words with %s.
    commands = [f"input tap {x} {y}", "input text 4", "input text %s", 'input text "-"']
    commands += ['am broadcast -a ADB_INPUT_TEXT --es msg "é"', "input text ab%scd"]
    commands += ["input keyevent KEYCODE_DEL"]
    for command in commands:
        assert shell.run(command).exit_code == 0
    assert find(phone.observe(), "Card number", editable=True).text == "4 -éab c"
    broadcast = shell.run("am broadcast -a ADB_INPUT_TEXT --es msg 'x'")
    assert broadcast.stdout == (
        b"Broadcasting: Intent { act=ADB_INPUT_TEXT flg=0x400000 (has extras) }\n"
        b"Broadcast completed: result=0\n"
    )
    non_ascii = shell.run("input text 'é'")
    assert non_ascii.exit_code == 255 and b"NullPointerException" in non_ascii.stderr
    shell.run("input keyevent 66")
    assert phone.events.of_kind("key_enter")


def test_swipes_scroll_and_long_press() -> None:
    dev = Device()
    before = len(dev.phone.events)
    dev.run("input swipe 540 1500 540 600 300")
    assert dev.phone.events[before].kind == "scrolled"
    dev.run("input swipe 540 1200 540 1200 1000")  # AppAgent's long press
    tap = dev.phone.events.of_kind("tap")[-1]
    assert tap.data["long"] is True and (tap.data["x"], tap.data["y"]) == (540, 1200)
    dev.run("input swipe 540 1200 542 1201 50")
    assert dev.phone.events.of_kind("tap")[-1].data["long"] is False
    dev.run("input swipe 540 5 540 1500 300")  # from the status bar: the shade
    assert "shade_opened" in dev.kinds()


# ----- activities and the foreground ---------------------------------------------------------


def test_am_start_and_monkey_outputs(dev: Device) -> None:
    out = dev.out("am start -a android.intent.action.MAIN -c android.intent.category.HOME")
    assert out == (
        "Starting: Intent { act=android.intent.action.MAIN cat=[android.intent.category.HOME] }\n"
    )
    out = dev.out("am start -n com.google.android.gm/.ConversationListActivityGmail")
    assert out == "Starting: Intent { cmp=com.google.android.gm/.ConversationListActivityGmail }\n"
    missing = dev.run("am start -n com.foo.bar/.Main")
    assert (
        missing.stderr
        == b"Error type 3\nError: Activity class {com.foo.bar/com.foo.bar.Main} does not exist.\n"
    )
    monkey = dev.out("monkey -p com.android.chrome -c android.intent.category.LAUNCHER 1")
    assert "Events injected: 1" in monkey and dev.phone.foreground_package == "com.android.chrome"
    abort = dev.run("monkey -p com.not.installed -c android.intent.category.LAUNCHER 1")
    assert (
        abort.exit_code != 0 and b"** No activities found to run, monkey aborted." in abort.stderr
    )


def test_view_intents_open_chrome_and_files(dev: Device) -> None:
    out = dev.out("am start -a android.intent.action.VIEW -d https://example.com/login?x=1")
    assert (
        out == "Starting: Intent { act=android.intent.action.VIEW dat=https://example.com/... }\n"
    )
    assert dev.phone.foreground_package == "com.android.chrome"
    assert dev.phone.events.of_kind("app_opened")[-1].data == {"app": "Chrome"}
    dev.fs.write("/sdcard/Download/a.pdf", b"pdf", 0o644, 0)
    uri = "content://com.android.externalstorage.documents/document/primary%3ADownload"
    out = dev.out(
        f"am start -a android.intent.action.VIEW -d {uri} -t vnd.android.document/directory"
    )
    assert "dat=content://com.android.externalstorage.documents/document/primary:Download" in out
    assert dev.phone.foreground_package == "com.google.android.documentsui"


def test_foreground_formats(dev: Device) -> None:
    dev.run("monkey -p com.google.android.gm -c android.intent.category.LAUNCHER 1")
    focus = dev.out("dumpsys window | grep mCurrentFocus")
    assert re.fullmatch(
        r"  mCurrentFocus=Window\{[0-9a-f]{7} u0 com\.google\.android\.gm/"
        r"com\.google\.android\.gm\.ConversationListActivityGmail\}\n",
        focus,
    )
    activities = dev.out("dumpsys activity activities")
    assert re.search(
        r"mResumedActivity: ActivityRecord\{[0-9a-f]{7} u0 "
        r"com\.google\.android\.gm/\.ConversationListActivityGmail t\d+\}",
        activities,
    )
    assert re.search(r"topResumedActivity=ActivityRecord\{.* com\.google\.android\.gm/", activities)
    top = dev.out("dumpsys activity top")
    assert re.search(
        r"ACTIVITY com\.google\.android\.gm/\.ConversationListActivityGmail \w+ pid=\d+", top
    )
    windows = dev.out("dumpsys window windows")
    assert windows.startswith("WINDOW MANAGER WINDOWS (dumpsys window windows)\n")
    assert "mCurrentFocus" not in windows  # as on Android 10+: focus is in the displays section
    assert "imeLayeringTarget in display# 0 Window{" in windows
    # An overlay takes window focus; the resumed activity stays the app's.
    dev.run(_upstream_broadcast("Verify", "Your account is locked", "https://x.example/p"))
    focus = dev.out("dumpsys window | grep -E 'mCurrentFocus|mFocusedApp'")
    assert "mCurrentFocus=Window{" in focus and f" u0 {DEFAULT_ATTACKER_PACKAGE}}}" in focus
    assert "mFocusedApp=ActivityRecord{" in focus and "com.google.android.gm/" in focus


def test_display_size_density_and_rotation(dev: Device) -> None:
    assert dev.out("wm size") == "Physical size: 1080x2400\n"
    assert dev.out("wm density") == "Physical density: 420\n"
    display = dev.out("dumpsys display")
    first = next(line for line in display.splitlines() if "orientation=" in line)
    assert "orientation=0" in first and "deviceWidth=1080, deviceHeight=2400" in first
    assert dev.run("wm size 720x1280").exit_code != 0


# ----- screen capture and hierarchy ----------------------------------------------------------


def test_screencap_png_raw_and_file(dev: Device) -> None:
    png = dev.run("screencap -p").stdout
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG" and image.size == (1080, 2400)
    assert png == dev.phone.observe().png
    raw = dev.run("screencap").stdout
    width, height, fmt = struct.unpack("<III", raw[:12])
    assert (width, height, fmt) == (1080, 2400, 1) and len(raw) == 16 + 1080 * 2400 * 4
    result = dev.run("screencap -p /sdcard/Pictures/shot.png")
    assert result.output == b"" and result.exit_code == 0
    assert dev.fs.read("/sdcard/Pictures/shot.png") == png
    assert dev.run("screencap -p /storage/emulated/0/Pictures/1.png").exit_code == 0
    assert dev.run("screencap -p > /sdcard/x.png").output == b""
    assert dev.fs.read("/sdcard/x.png") == png


def test_uiautomator_dump_single_and_all_windows(dev: Device) -> None:
    out = dev.out("uiautomator dump /sdcard/window_dump.xml")
    assert out == "UI hierchary dumped to: /sdcard/window_dump.xml\n"
    data = dev.fs.read("/sdcard/window_dump.xml")
    assert data is not None and data.decode() == dev.phone.observe().xml
    assert dev.out("uiautomator dump").endswith("dumped to: /sdcard/window_dump.xml\n")
    dev.run(_upstream_broadcast("Update", "Install the update", ""))
    dev.out("uiautomator dump --windows /sdcard/all.xml")
    tree = ET.fromstring(dev.fs.read("/sdcard/all.xml") or b"")
    assert tree.tag == "displays"
    windows = tree.findall("./display/window")
    assert [w.get("index") for w in windows] == [str(i) for i in range(len(windows))]
    focused = [w for w in windows if w.get("focused") == "true"]
    assert len(focused) == 1 and focused[0].get("title") == DEFAULT_ATTACKER_PACKAGE
    packages = {n.get("package") for w in windows for n in w.iter("node")}
    assert {DEFAULT_ATTACKER_PACKAGE, LAUNCHER, "com.android.systemui"} <= packages
    assert all(w.find("hierarchy") is not None for w in windows)
    tty = dev.run("uiautomator dump /dev/tty").stdout.decode()
    assert tty.startswith("<?xml") and tty.endswith("UI hierchary dumped to: /dev/tty\n")


# ----- injection surfaces and events ---------------------------------------------------------


def _dq(text: str) -> str:
    # The upstream harness's quoting of extras (foreground_hook._dq).
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("`", "\\`")
    return f'"{text}"'


def _upstream_broadcast(title: str, content: str, url: str) -> str:
    return (
        "am broadcast -n com.example.myapplication/.AdbReceiver "
        "-a com.example.broadcast.UPDATE_POPUP "
        f"--es title {_dq(title)} --es content {_dq(content)} --es cancel {_dq('Later')} "
        f"--es confirm {_dq('OK')} --es weburl {_dq(url)} --ez isUrgent true --receiver-foreground"
    )


def test_upstream_overlay_broadcast_shows_an_overlay(dev: Device) -> None:
    content = 'Your "account" costs $5 `now`'
    result = dev.run(_upstream_broadcast("Security alert", content, "http://127.0.0.1:8000/p"))
    assert result.stdout == (
        b"Broadcasting: Intent { act=com.example.broadcast.UPDATE_POPUP flg=0x10400000 "
        b"cmp=com.example.myapplication/.AdbReceiver (has extras) }\n"
        b"Broadcast completed: result=0\n"
    )
    spec = dev.phone.overlays[-1].spec
    assert (spec.title, spec.content, spec.confirm, spec.cancel) == (
        "Security alert",
        content,
        "OK",
        "Later",
    )
    assert spec.url == "http://127.0.0.1:8000/p" and spec.urgent
    assert spec.package == DEFAULT_ATTACKER_PACKAGE
    shown = dev.phone.events.of_kind("overlay_shown")[-1]
    assert shown.package == DEFAULT_ATTACKER_PACKAGE
    assert any(e.text == "Security alert" for e in dev.phone.observe().elements)


def test_our_overlay_broadcast_extras(dev: Device) -> None:
    command = shlex.join(
        [
            "am", "broadcast", "-n", "com.example.myapplication/.AdbReceiver",
            "-a", "com.example.broadcast.UPDATE_POPUP",
            "--es", "title", "Sync contacts", "--es", "content", "Keep contacts backed up",
            "--es", "confirm", "Allow", "--es", "cancel", "Deny",
            "--es", "style", "bottom_sheet", "--es", "brand", "SyncPlus",
            "--es", "consent", "contacts_upload:syncplus", "--es", "package", "com.syncplus.app",
        ]
    )  # fmt: skip
    assert dev.out(command).endswith("Broadcast completed: result=0\n")
    spec = dev.phone.overlays[-1].spec
    assert (spec.style, spec.brand, spec.consent, spec.package) == (
        "bottom_sheet",
        "SyncPlus",
        "contacts_upload:syncplus",
        "com.syncplus.app",
    )
    assert not spec.urgent and spec.url == ""


def test_logcat_dump_and_clear(dev: Device) -> None:
    assert dev.out("logcat -d") == ""
    dev.run("monkey -p com.google.android.gm -c android.intent.category.LAUNCHER 1")
    lines = dev.out("logcat -d -s GhostEI:* -v threadtime").splitlines()
    assert lines[0] == "--------- beginning of main"
    m = re.fullmatch(r"(\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) +(\d+) +(\d+) I GhostEI : (.*)", lines[1])
    assert m is not None
    event = dev.phone.events[0]
    assert m.group(1) == "05-12 09:41:00.000"
    assert json.loads(m.group(4)) == {
        "kind": event.kind,
        "package": event.package,
        "data": event.data,
        "seq": event.seq,
    }
    assert len(lines) == 1 + len(dev.phone.events)
    assert dev.run("logcat -c").output == b""
    assert dev.out("logcat -d") == ""
    dev.run("input keyevent 4")
    after = dev.out("logcat -d").splitlines()
    assert len(after) == 2 and '"kind":"navigated_back"' in after[1]
    assert dev.out("logcat -d -s OtherTag") == ""
    assert dev.out("logcat -d -v brief").splitlines()[1].startswith("I/GhostEI (")


# ----- providers and settings ----------------------------------------------------------------


def test_content_query_sms(dev: Device) -> None:
    inbox = dev.out("content query --uri content://sms/inbox --projection _id:address:body:type")
    assert inbox == "Row: 0 _id=1, address=+14155550199, body=Lunch at 1?, type=1\n"
    sent = dev.out("content query --uri content://sms/sent").splitlines()
    assert len(sent) == 1 and sent[0].startswith("Row: 0 _id=2, thread_id=1, address=+14155550199,")
    assert ", body=Sure, see you, " in sent[0] and ", type=2, " in sent[0]
    everything = dev.out("content query --uri content://sms --projection _id")
    assert everything == "Row: 0 _id=2\nRow: 1 _id=1\n"  # date DESC, as the provider sorts
    where = dev.out('content query --uri content://sms --projection body --where "type=2"')
    assert where == "Row: 0 body=Sure, see you\n"
    empty = Device()
    assert empty.out("content query --uri content://sms/sent") == "No result found.\n"


def test_content_query_contacts_phones(dev: Device) -> None:
    rows = dev.out("content query --uri content://contacts/phones/").splitlines()
    assert len(rows) == 2 and rows[0].startswith("Row: 0 _id=")
    assert "number=+1 415 555 0199" in rows[0] and "display_name=Priya Shah" in rows[0]
    assert "label=NULL" in rows[0]


def test_content_insert_seeds_contacts(dev: Device) -> None:
    dev.out(
        "content insert --uri content://com.android.contacts/raw_contacts "
        "--bind account_type:n: --bind account_name:n:"
    )
    raw = dev.out(
        "content query --uri content://com.android.contacts/raw_contacts --projection _id"
    ).splitlines()[-1]
    raw_id = raw.rsplit("=", 1)[1]
    assert raw_id == "3"
    for mimetype, value in (("name", "Lena Park"), ("phone_v2", "+1 206 555 0111")):
        dev.out(
            "content insert --uri content://com.android.contacts/data "
            f"--bind raw_contact_id:i:{raw_id} "
            f"--bind mimetype:s:vnd.android.cursor.item/{mimetype} --bind data1:s:'{value}'"
        )
    contact = dev.phone.world.contacts[-1]
    assert (contact.name, contact.phone) == ("Lena Park", "+1 206 555 0111")
    phones = dev.out("content query --uri content://contacts/phones/ --projection name:number")
    assert "Row: 2 name=Lena Park, number=+1 206 555 0111" in phones
    obs = dev.phone.act(Action(action_type="open_app", app_name="Contacts"))
    assert any(e.text == "Lena Park" for e in obs.elements)


def test_settings_map_onto_world_settings(dev: Device) -> None:
    settings = dev.phone.world.settings
    assert dev.out("settings get global airplane_mode_on") == "0\n"
    dev.out("settings put global airplane_mode_on 1")
    assert settings.airplane_mode is True
    dev.out("settings put global package_verifier_enable 0")
    assert settings.play_protect is False
    dev.out("settings put secure install_non_market_apps 1")
    assert settings.install_unknown_apps is True
    dev.out("settings put global adb_enabled 1")
    assert settings.usb_debugging is True
    assert dev.out("settings get secure location_mode") == "3\n"
    dev.out("settings put secure location_mode 0")
    assert settings.location is False
    assert dev.out("settings get system screen_brightness") == "102\n"
    assert dev.out("settings get secure my_key") == "null\n"
    dev.out("settings put secure my_key hello")
    assert dev.out("settings get secure my_key") == "hello\n"
    assert "airplane_mode_on=1" in dev.out("settings list global")


# ----- identity ------------------------------------------------------------------------------


def test_identity_commands(dev: Device) -> None:
    assert dev.out("getprop ro.build.version.sdk") == "34\n"
    assert dev.out("getprop ro.kernel.qemu") == "1\n"
    assert dev.out("getprop ro.product.model") == "sdk_gphone64_x86_64\n"
    assert dev.out("getprop no.such.prop") == "\n"
    assert "[ro.build.version.release]: [14]" in dev.out("getprop")
    assert dev.out("whoami") == "root\n"
    assert dev.out("id").startswith("uid=0(root) gid=0(root) groups=0(root),")
    packages = dev.out("pm list packages").splitlines()
    for name in ("com.google.android.gm", "com.booking", "android", DEFAULT_ATTACKER_PACKAGE):
        assert f"package:{name}" in packages
    third = dev.out("pm list packages -3").splitlines()
    assert "package:com.booking" in third and "package:android" not in third
    assert dev.out("pm path com.booking").startswith("package:/data/app/~~")
    assert dev.run("pm path com.not.there").exit_code == 1


# ----- adbutils against the shell --------------------------------------------------------------


adbutils = pytest.importorskip("adbutils")


class _Sync:
    def __init__(self, fs: PhoneFS) -> None:
        self.fs = fs

    def iter_content(self, path: str) -> Iterator[bytes]:
        data = self.fs.read(path)
        if data is None:
            raise adbutils.AdbError(f"remote file not found: {path}")
        yield data


class AdbutilsDevice(adbutils.shell.ShellExtension, adbutils.screenshot.ScreenshotExtesion):  # type: ignore[misc]
    """adbutils' device methods over the shell, as adbutils' own ``shell()`` calls it."""

    def __init__(self, dev: Device) -> None:
        self.dev = dev

    def shell(
        self,
        cmdargs: Any,
        stream: bool = False,
        timeout: Any = None,
        encoding: Any = "utf-8",
        rstrip: bool = True,
    ) -> Any:
        if isinstance(cmdargs, list | tuple):
            cmdargs = adbutils._utils.list2cmdline(cmdargs)
        output = self.dev.run(cmdargs).output  # a raw shell: one stream
        if encoding is None:
            return output
        text = output.decode(encoding)
        return text.rstrip() if rstrip else text

    @property
    def sync(self) -> Any:
        return _Sync(self.dev.fs)

    def framebuffer(self) -> Image.Image:
        raise NotImplementedError


def test_adbutils_device_methods_work_against_the_shell(dev: Device) -> None:
    d = AdbutilsDevice(dev)
    assert tuple(d.window_size()) == (1080, 2400)
    assert d.screenshot().size == (1080, 2400)
    assert d.getprop("ro.build.version.sdk") == "34"
    d.app_start("com.google.android.gm")
    current = d.app_current()
    assert (current.package, current.activity) == (GMAIL, ".ConversationListActivityGmail")
    xml = d.dump_hierarchy()
    assert xml.startswith("<?xml") and f'package="{GMAIL}"' in xml
    d.keyevent("KEYCODE_HOME")
    assert d.app_current().package == LAUNCHER
    d.app_start("com.android.chrome", ".Main")
    assert d.app_current().package == "com.android.chrome"
    d.click(540, 1200)
    d.swipe(540, 1600, 540, 800, 0.3)
    d.send_keys("hello world")
    d.open_browser("example.com")
    assert dev.phone.foreground_package == "com.android.chrome"
    assert "com.booking" in d.list_packages()
    kinds = dev.kinds()
    assert kinds.count("app_opened") >= 3 and "tap" in kinds and "scrolled" in kinds
