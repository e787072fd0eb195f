"""The served phone answers what real adb clients ask, through the real adb client.

The paper's harness finds apps by the real apps' packages and reads the foreground app from
``dumpsys activity activities``; MCP phone servers list apps with ``cmd package
query-activities``; Appium's adb library launches an app by the component ``cmd package
resolve-activity --brief`` prints; the recents key opens the overview of recent apps.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from ghostei.apps import APPS, app_by_label
from ghostei.cases import Case, builtin_cases
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
