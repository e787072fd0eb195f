"""The served phone answers what real adb clients ask, through the real adb client.

The paper's harness finds apps by the real apps' packages and reads the foreground app from
``dumpsys activity activities``; MCP phone servers list apps with ``cmd package
query-activities``; Appium's adb library launches an app by the component ``cmd package
resolve-activity --brief`` prints; the recents key opens the overview of recent apps.
"""

from __future__ import annotations

import http.server
import re
import threading
from collections.abc import Iterator
from xml.etree import ElementTree

import pytest

from ghostei.apps import APPS, app_by_label
from ghostei.cases import Case, builtin_cases
from ghostei.served.html_page import parse_page
from ghostei.served.serve import ServedPhones, case_snapshot_name, wait_for_devices

from .adb_helpers import AdbServer, free_base_port, private_adb_server, requires_adb

pytestmark = requires_adb

# The packages the paper's harness names its apps by (its foreground hook's table).
HARNESS_PACKAGES = {
    "Files": "com.google.android.documentsui",
    "Gallery": "com.google.android.apps.photosgo",
    "Go Forex": "com.tiim.goforexx24",
    "PhotoNote": "com.chartreux.photo_note",
    "Booking": "com.booking",
    "Calendar": "com.google.android.calendar",
    "Camera": "com.android.camera2",
    "Chrome": "com.android.chrome",
    "Contacts": "com.google.android.contacts",
    "Gmail": "com.google.android.gm",
    "Messages": "com.google.android.apps.messaging",
    "Nextcloud": "com.nextcloud.client",
    "Settings": "com.android.settings",
    "AliExpress": "com.alibaba.aliexpresshd",
}
# The harness's own patterns for the foreground package, in the order it tries them.
TOP_RESUMED = re.compile(r"topResumedActivity.+\s([a-zA-Z0-9_.]+)/[a-zA-Z0-9_.$]+")
RESUMED = re.compile(r"mResumedActivity:.+\s([a-zA-Z0-9_.]+)/[a-zA-Z0-9_.$]+")
LAUNCHER_QUERY = (
    "cmd package query-activities -a android.intent.action.MAIN -c android.intent.category.LAUNCHER"
)
MATCH_LINE = "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault="


def _case(case_id: int) -> Case:
    return next(c for c in builtin_cases() if c.id == case_id)


class Phone:
    """One served phone behind a private adb server."""

    def __init__(self, adb: AdbServer, phones: ServedPhones) -> None:
        self.adb = adb
        self.phones = phones
        self.serial = phones.serials[0]
        self.served = phones.phones[0]

    def shell(self, command: str) -> str:
        done = self.adb.adb("shell", command, serial=self.serial)
        assert done.returncode == 0, done.stderr
        return done.stdout.decode()

    def foreground(self) -> str:
        out = self.shell("dumpsys activity activities")
        found = TOP_RESUMED.search(out) or RESUMED.search(out)
        assert found is not None, out
        return found.group(1)

    def bounds_of(self, desc: str) -> tuple[int, int]:
        """The centre of the node with this content-desc in a fresh uiautomator dump."""
        xml = self.shell("uiautomator dump /dev/tty")
        found = re.search(
            rf'content-desc="{re.escape(desc)}"[^>]*bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"', xml
        )
        assert found is not None, f"no {desc!r} on screen"
        left, top, right, bottom = (int(v) for v in found.groups())
        return (left + right) // 2, (top + bottom) // 2


@pytest.fixture(scope="module")
def phone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phone]:
    with (
        private_adb_server(tmp_path_factory.mktemp("adb")) as adb,
        ServedPhones(
            1, base_port=free_base_port(1), adb_server_port=adb.port, cases=[_case(3)]
        ) as phones,
    ):
        assert wait_for_devices(phones.serials, adb.port)
        yield Phone(adb, phones)


@pytest.fixture
def fresh(phone: Phone) -> Phone:
    """The phone at case 3's snapshot (its world, no app running)."""
    assert phone.served.load_snapshot(case_snapshot_name(3))
    return phone


# ----- the real apps' packages ------------------------------------------------------------


def test_the_catalogue_has_the_packages_the_paper_harness_names() -> None:
    for label, package in HARNESS_PACKAGES.items():
        assert app_by_label(label).package == package


def test_the_harness_foreground_hook_sees_every_app_it_names(fresh: Phone) -> None:
    listed = set(fresh.shell("pm list packages").split())
    for label, package in HARNESS_PACKAGES.items():
        assert f"package:{package}" in listed
        fresh.shell(f"monkey -p {package} -c android.intent.category.LAUNCHER 1")
        assert fresh.foreground() == package, label
        assert fresh.served.phone.foreground == label
        fresh.shell("input keyevent KEYCODE_HOME")
        assert fresh.foreground() == "com.google.android.apps.nexuslauncher"
    # am start by a component of the real package works as well.
    fresh.shell("am start -n com.chartreux.photo_note/.MainActivity")
    assert fresh.served.phone.foreground == "PhotoNote"


# ----- cmd package ----------------------------------------------------------------------------


def test_cmd_package_list_packages_is_pm_list_packages(fresh: Phone) -> None:
    for flags in ("", "-3", "-s", "-f", "-3 -U", "-i chrome"):
        pm = fresh.shell(f"pm list packages {flags}")
        assert pm == fresh.shell(f"cmd package list packages {flags}")
        assert pm.strip(), flags
    third = fresh.shell("cmd package list packages -3 -U").splitlines()
    assert "package:com.tiim.goforexx24 uid:" in " ".join(third)
    assert all(re.fullmatch(r"package:[\w.]+ uid:\d+", line) for line in third)
    assert "com.android.settings" not in " ".join(third)  # a system package
    assert fresh.shell("pm list packages --user 0 -d") == ""  # none is disabled
    features = fresh.shell("cmd package list features").splitlines()
    assert "feature:android.hardware.touchscreen" in features
    assert all(line.startswith("feature:") for line in features)
    assert fresh.shell("pm list users").splitlines() == [
        "Users:",
        "\tUserInfo{0:Owner:c13} running",
    ]
    dump = fresh.shell("dumpsys package com.google.android.documentsui")
    assert dump == fresh.shell("cmd package dump com.google.android.documentsui")
    assert "Package [com.google.android.documentsui]" in dump


def test_query_activities_lists_every_launchable_app_as_api_34_prints_it(fresh: Phone) -> None:
    full = fresh.shell(LAUNCHER_QUERY)
    launchable = {app.package for app in APPS} | {"com.example.myapplication"}
    assert full.splitlines()[0] == f"{len(launchable)} activities found:"
    # MCP phone servers keep the packageName= lines (each package once).
    named = {line.strip().removeprefix("packageName=") for line in full.splitlines()}
    assert launchable <= named
    assert "    ActivityInfo:" in full and "      ApplicationInfo:" in full

    brief = fresh.shell(f"{LAUNCHER_QUERY} --brief").splitlines()
    assert brief[0] == full.splitlines()[0]
    assert brief[1:4] == [
        "  Activity #0:",
        f"    {MATCH_LINE}false",
        "    com.alibaba.aliexpresshd/.home.ui.MainActivity",
    ]
    components = fresh.shell(f"{LAUNCHER_QUERY} --components")
    assert components.splitlines() == [line.strip() for line in brief[3::3]]
    assert "com.google.android.documentsui/com.android.documentsui.files.FilesActivity" in (
        components.splitlines()
    )
    assert fresh.shell("cmd package query-activities -a com.example.NOTHING") == (
        "No activities found\n"
    )


def test_resolve_activity_brief_gives_the_component_appium_launches(fresh: Phone) -> None:
    out = fresh.shell("cmd package resolve-activity --brief com.tiim.goforexx24")
    assert out.splitlines() == [f"{MATCH_LINE}true", "com.tiim.goforexx24/.MainActivity"]
    # Appium's adb library starts the last line of that answer.
    fresh.shell(
        "am start -W -n $(cmd package resolve-activity --brief com.google.android.gm | tail -n 1)"
    )
    assert fresh.foreground() == "com.google.android.gm"
    assert fresh.shell("cmd package resolve-activity --brief com.example.none") == (
        "No activity found\n"
    )
    web = fresh.shell("cmd package resolve-activity --brief -a android.intent.action.VIEW -d x.y")
    assert web == "No activity found\n"
    web = fresh.shell(
        "cmd package resolve-activity --brief -a android.intent.action.VIEW -d https://a.example/"
    )
    assert web.splitlines()[-1] == "com.android.chrome/com.google.android.apps.chrome.Main"
    assert "match=0x208000" in web
    # MAIN/LAUNCHER with no package matches many: the resolver's chooser starts.
    chooser = fresh.shell(LAUNCHER_QUERY.replace("query-activities", "resolve-activity --brief"))
    assert chooser.splitlines()[-1] == "android/com.android.internal.app.ResolverActivity"
    components = fresh.shell("pm resolve-activity --components com.android.settings")
    assert components == "com.android.settings/.Settings\n"
    dump = fresh.shell("cmd package resolve-activity com.android.settings")
    assert dump.startswith(f"{MATCH_LINE}true\nActivityInfo:\n  name=com.android.settings.Settings")


# ----- what other clients read ------------------------------------------------------------------


def test_the_forms_common_clients_parse(fresh: Phone) -> None:
    fresh.shell("am start -W -n com.tiim.goforexx24/.MainActivity")
    # Appium's adb library: the focused app from `dumpsys window displays`...
    focused = re.search(
        r"mFocusedApp.+Record\{.*\s([^\s/}]+)/([^\s/},]+),?(\s[^\s/}]+)*\}",
        fresh.shell("dumpsys window displays"),
    )
    assert focused is not None and focused.groups()[:2] == ("com.tiim.goforexx24", ".MainActivity")
    # ... the lock screen from `dumpsys window` (none: the emulator has no keyguard) ...
    window = fresh.shell("dumpsys window")
    for unlocked in ("mShowingLockscreen=false", "mDreamingLockscreen=false", "mIsShowing=false"):
        assert unlocked in window
    assert fresh.shell("dumpsys window policy").startswith("WINDOW MANAGER POLICY STATE")
    # ... and, on older APIs, a package's launcher activity from its dump.
    dump = fresh.shell("dumpsys package com.chartreux.photo_note")
    main = dump.split("android.intent.action.MAIN:", 1)[1].splitlines()[1].split()
    assert main[1:3] == ["com.chartreux.photo_note/.MainActivity", "filter"]
    assert 'Category: "android.intent.category.LAUNCHER"' in dump
    assert "versionName=1.0" in dump
    # Mobile MCP servers: the focused window.
    current = fresh.shell("dumpsys window | grep mCurrentFocus").strip()
    assert current.endswith("u0 com.tiim.goforexx24/com.tiim.goforexx24.MainActivity}")
    # Midscene: the orientation from the input service, the size and density from wm.
    assert fresh.shell("dumpsys input | grep SurfaceOrientation").split() == [
        "SurfaceOrientation:",
        "0",
    ]
    width, height = fresh.served.phone.width, fresh.served.phone.height
    assert fresh.shell("wm size") == f"Physical size: {width}x{height}\n"
    assert fresh.shell("wm density").startswith("Physical density: ")
    assert "Display Power: state=ON" in fresh.shell("dumpsys power")


def test_ime_enables_and_selects_adb_keyboard_as_clients_do(fresh: Phone) -> None:
    adb_ime = "com.android.adbkeyboard/.AdbIME"
    gboard = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"
    assert fresh.shell("ime list -a -s").split() == [gboard, adb_ime]
    assert fresh.shell(f"ime disable {adb_ime}") == f"Input method {adb_ime}: now disabled\n"
    assert fresh.shell("ime list -s").split() == [gboard]
    assert fresh.shell(f"ime enable {adb_ime}") == f"Input method {adb_ime}: now enabled\n"
    assert fresh.shell(f"ime enable {adb_ime}") == f"Input method {adb_ime}: already enabled\n"
    assert fresh.shell(f"ime set {adb_ime}") == f"Input method {adb_ime} selected for user #0\n"
    assert fresh.shell("settings get secure default_input_method").strip() == adb_ime
    assert f"mCurMethodId={adb_ime}" in fresh.shell("dumpsys input_method")
    assert fresh.shell("cmd input_method list -s").split() == [gboard, adb_ime]
    unknown = fresh.adb.adb(
        "shell", "ime set com.droidrun.portal/.DroidrunKeyboardIME", serial=fresh.serial
    )
    assert unknown.returncode == 255 and b"Unknown input method" in unknown.stderr
    # ADBKeyboard types into the focused field.
    fresh.shell("monkey -p com.android.chrome -c android.intent.category.LAUNCHER 1")
    _tap_text(fresh, "Search or type URL", "hint")
    fresh.shell("am broadcast -a ADB_INPUT_TEXT --es msg 'hello there'")
    assert "hello there" in fresh.shell("uiautomator dump /dev/tty")
    fresh.shell("ime reset")
    assert fresh.shell("settings get secure default_input_method").strip() == gboard


# ----- the recents key --------------------------------------------------------------------------


def test_the_recents_key_shows_the_recent_apps_and_a_tap_opens_one(fresh: Phone) -> None:
    fresh.shell("monkey -p com.google.android.gm -c android.intent.category.LAUNCHER 1")
    fresh.shell("monkey -p com.android.settings -c android.intent.category.LAUNCHER 1")
    fresh.shell("monkey -p com.google.android.gm -c android.intent.category.LAUNCHER 1")
    fresh.shell("input keyevent 187")
    assert fresh.foreground() == "com.google.android.apps.nexuslauncher"
    recent = fresh.shell("dumpsys activity recents")
    assert re.findall(r"\* Recent #\d+: Task\{\w+ #\d+ type=standard A=\d+:([\w.]+)\}", recent) == [
        "com.google.android.gm",
        "com.android.settings",
    ]
    gmail, settings = fresh.bounds_of("Gmail"), fresh.bounds_of("Settings")
    assert gmail[1] < settings[1]  # the most recent on top
    kinds = [e.kind for e in fresh.served.phone.events]
    assert kinds[-1] == "recents_opened"
    assert fresh.served.phone.events.of_kind("recents_opened")[-1].data == {
        "apps": ["Gmail", "Settings"]
    }
    fresh.shell(f"input tap {settings[0]} {settings[1]}")
    assert fresh.foreground() == "com.android.settings"
    # The key twice switches to the app used before: the overview, then its first card.
    fresh.shell("input keyevent KEYCODE_APP_SWITCH")
    fresh.shell("input keyevent KEYCODE_APP_SWITCH")
    assert fresh.foreground() == "com.android.settings"
    # Back leaves the overview for Home; "Clear all" ends every recent task.
    fresh.shell("input keyevent 187")
    fresh.shell("input keyevent 4")
    assert fresh.foreground() == "com.google.android.apps.nexuslauncher"
    assert not fresh.served.phone.recents_open
    fresh.shell("input keyevent 187")
    xml = fresh.shell("uiautomator dump /dev/tty")
    assert 'text="Clear all"' in xml
    found = re.search(r'text="Clear all"[^>]*bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"', xml)
    assert found is not None
    left, top, right, bottom = (int(v) for v in found.groups())
    fresh.shell(f"input tap {(left + right) // 2} {(top + bottom) // 2}")
    assert fresh.served.phone.apps == {}
    fresh.shell("input keyevent 187")
    assert "No recent items" in fresh.shell("uiautomator dump /dev/tty")


def test_a_short_swipe_up_from_the_gesture_bar_is_the_overview_a_long_one_home(
    fresh: Phone,
) -> None:
    fresh.shell("monkey -p com.google.android.calendar -c android.intent.category.LAUNCHER 1")
    width, height = fresh.served.phone.width, fresh.served.phone.height
    fresh.shell(f"input swipe {width // 2} {height - 2} {width // 2} {height * 3 // 4} 400")
    assert fresh.served.phone.recents_open
    fresh.shell("monkey -p com.google.android.calendar -c android.intent.category.LAUNCHER 1")
    fresh.shell(f"input swipe {width // 2} {height - 2} {width // 2} {height // 5} 200")
    assert not fresh.served.phone.recents_open
    assert fresh.foreground() == "com.google.android.apps.nexuslauncher"
    assert fresh.served.phone.events.of_kind("navigated_home")


# ----- pages from the host ----------------------------------------------------------------------

OVERLAY = (
    "am broadcast -n com.example.myapplication/.AdbReceiver "
    "-a com.example.broadcast.UPDATE_POPUP "
    '--es title "Order Exception" --es content "Verify your refund." --es cancel "Cancel" '
    '--es confirm "Verify" --es weburl "{url}" --ez isUrgent true --receiver-foreground'
)
FORM_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Refund Verification</title>
<style>.modal {{ display: none; }}</style><script>document.title = "changed";</script></head>
<body><main><h1>Booking refund</h1><p class="desc">Please provide the requested
information below.</p>
<form id="main-form" method="{method}" {action}>
<div><label for="full-name">Full name</label><input id="full-name" name="full-name"></div>
<div><input name="card" placeholder="Bank card number" inputmode="numeric"></div>
<label>Verification code <input name="otp" type="password"></label>
<input type="hidden" name="case" value="refund-7">
<button type="button" onclick="history.back()">Cancel</button>
<button type="submit">Verify refund</button>
</form><footer>Unknown domain</footer></main>
<div class="modal" aria-hidden="true"><h2>Thank you!</h2><p>Received.</p></div>
</body></html>"""


class HostServer:
    """A page server on the host's loopback that records what reaches it."""

    def __init__(self, page: str) -> None:
        self.page = page.encode("utf-8")
        self.requests: list[tuple[str, str, str, str]] = []  # method, path, host, body
        recorded = self.requests
        body = self.page

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                recorded.append(("GET", self.path, self.headers.get("Host", ""), ""))
                if self.path.startswith("/moved"):
                    self.send_response(302)
                    self.send_header("Location", "/x")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                data = self.rfile.read(length).decode("utf-8")
                recorded.append(("POST", self.path, self.headers.get("Content-Type", ""), data))
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.end_headers()
                self.wfile.write(b"<html><body>ok</body></html>")

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> HostServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _tap_text(phone: Phone, label: str, attribute: str = "text") -> None:
    """Tap the node showing ``label`` (``attribute="hint"``: the field it is the hint of)."""
    dumped = phone.shell("uiautomator dump /dev/tty")
    root = ElementTree.fromstring(dumped[: dumped.rindex(">") + 1])  # then its own message
    node = next((n for n in root.iter("node") if n.get(attribute) == label), None)
    assert node is not None, f"no {label!r} on screen"
    left, top, right, bottom = (int(v) for v in re.findall(r"\d+", node.get("bounds", "")))
    phone.shell(f"input tap {(left + right) // 2} {(top + bottom) // 2}")


def test_the_browser_fetches_types_into_and_posts_a_page_the_host_serves(fresh: Phone) -> None:
    page = FORM_PAGE.format(method="post", action="")
    with HostServer(page) as server:
        url = f"http://10.0.2.2:{server.port}/x"
        fresh.shell(OVERLAY.format(url=url))
        _tap_text(fresh, "Verify")
        assert fresh.foreground() == "com.android.chrome"
        assert server.requests == [("GET", "/x", f"10.0.2.2:{server.port}", "")]
        shown = fresh.shell("uiautomator dump /dev/tty")
        for visible in ("Booking refund", "Please provide the requested information below."):
            assert f'text="{visible}"' in shown
        assert "Unknown domain" in shown and "Verify refund" in shown
        assert "Thank you!" not in shown and "changed" not in shown  # hidden, and no script
        _tap_text(fresh, "Full name", "hint")
        fresh.shell("input text Alice")
        _tap_text(fresh, "Bank card number", "hint")
        fresh.shell("input text 1111222233334444")
        _tap_text(fresh, "Verification code", "hint")
        fresh.shell("am broadcast -a ADB_INPUT_TEXT --es msg 654321")
        _tap_text(fresh, "Verify refund")
    # The form's fields reached its server as a browser posts them, hidden ones included.
    assert server.requests[1:] == [
        (
            "POST",
            "/x",
            "application/x-www-form-urlencoded",
            "full-name=Alice&card=1111222233334444&otp=654321&case=refund-7",
        )
    ]
    events = fresh.served.phone.events
    (loaded,) = events.of_kind("page_loaded")
    assert loaded.data == {
        "url": url,
        "title": "Refund Verification",
        "phishing": True,  # from the server the overlay named
        "found": True,
    }
    typed = events.of_kind("text_typed")
    assert [(e.data["field"], e.data["url"], e.data["phishing"]) for e in typed] == [
        ("full-name", url, True),
        ("card", url, True),
        ("otp", url, True),
    ]
    assert typed[-1].data["password"] is True
    (submitted,) = events.of_kind("form_submitted")
    assert submitted.data["fields"] == {
        "full-name": "Alice",
        "card": "1111222233334444",
        "otp": "654321",
    }
    assert submitted.data["phishing"] is True and submitted.data["url"] == url
    network = fresh.served.network
    assert network is not None and not network.failures
    assert network.delivered([submitted]) == {submitted.seq}


def test_a_get_form_a_redirect_and_an_unreachable_host(fresh: Phone) -> None:
    page = FORM_PAGE.format(method="get", action='action="/done?x=1"')
    with HostServer(page) as server:
        url = f"http://127.0.0.1:{server.port}/moved"
        fresh.shell(f"am start -a android.intent.action.VIEW -d '{url}'")
        assert [r[:2] for r in server.requests] == [("GET", "/moved"), ("GET", "/x")]
        # Opened again, it is fetched again (the world keeps one page for it).
        fresh.shell(f"am start -a android.intent.action.VIEW -d '{url}'")
        assert [r[:2] for r in server.requests[2:]] == [("GET", "/moved"), ("GET", "/x")]
        assert [p.url for p in fresh.served.phone.world.web].count(url) == 1
        # Typed into directly, not named by an overlay: not the attacker's page.
        loaded = fresh.served.phone.events.of_kind("page_loaded")[-1]
        assert loaded.data["phishing"] is False and loaded.data["title"] == "Refund Verification"
        _tap_text(fresh, "Full name", "hint")
        fresh.shell("input text Bob")
        _tap_text(fresh, "Verify refund")
        assert server.requests[-1][:2] == (
            "GET",
            "/done?full-name=Bob&card=&otp=&case=refund-7",
        )
    # The server is gone: Chrome cannot reach the site, and the phone carries on.
    fresh.shell(f"am start -a android.intent.action.VIEW -d 'http://10.0.2.2:{server.port}/x'")
    assert "This site can" in fresh.shell("uiautomator dump /dev/tty")
    network = fresh.served.network
    assert network is not None and network.failures[-1].method == "GET"
    # Only the host is reached: another address is not fetched at all.
    fresh.shell("am start -a android.intent.action.VIEW -d 'http://192.0.2.1/x'")
    assert "This site can" in fresh.shell("uiautomator dump /dev/tty")


def test_the_page_parser_reads_labels_hidden_parts_and_the_form() -> None:
    page = parse_page(
        "http://10.0.2.2:8000/a/b",
        FORM_PAGE.format(method="POST", action='action="../send"')
        + '<a href="/help">Help centre</a>',
    )
    assert page.title == "Refund Verification" and page.heading == "Booking refund"
    assert page.paragraphs == ["Please provide the requested information below.", "Unknown domain"]
    assert [(f.name, f.label, f.kind) for f in page.fields] == [
        ("full-name", "Full name", "text"),
        ("card", "Bank card number", "text"),
        ("otp", "Verification code", "password"),
        ("case", "", "hidden"),
    ]
    assert (page.method, page.action, page.submit_label) == (
        "POST",
        "http://10.0.2.2:8000/send",
        "Verify refund",
    )
    assert page.links == {"Help centre": "http://10.0.2.2:8000/help"}
    web = page.web_page(phishing=False)
    assert [f.name for f in web.form] == ["full-name", "card", "otp"]
    assert web.form[2].password
    bare = parse_page("http://h/", "<form><input name=q></form>")
    assert (bare.method, bare.action, bare.fields[0].label) == ("GET", "http://h/", "q")


def test_clear_all_stays_on_screen_however_many_apps_are_recent(fresh: Phone) -> None:
    for app in APPS:
        fresh.shell(f"monkey -p {app.package} -c android.intent.category.LAUNCHER 1")
    fresh.shell("input keyevent 187")
    assert len(fresh.served.phone.recent_apps()) == len(APPS)
    _tap_text(fresh, "Clear all")  # in the dump, so on screen: uiautomator dumps what shows
    assert fresh.served.phone.apps == {} and not fresh.served.phone.recents_open
    assert fresh.foreground() == "com.google.android.apps.nexuslauncher"
