"""What the served phone reports about its packages: names, activities, uids, pids, paths.

The apps are the simulator's; around them stand the system packages an API-34 Google APIs
emulator has, the upstream harness's overlay helper (``com.example.myapplication``) and
ADBKeyboard (``com.android.adbkeyboard``), both installed as the harness expects. Numbers that
a real device makes up (window hashes, pids, uids, apk folder names) are derived from the names,
so the same phone always answers the same.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..android.helper import ADB_KEYBOARD_PACKAGE, HELPER_PACKAGE
from ..sim import system_ui as sysui
from ..sim.apps import installed_apps
from ..sim.apps.base import AppFactory, resolve_app

if TYPE_CHECKING:
    from ..sim.phone import SimPhone

ADB_KEYBOARD = ADB_KEYBOARD_PACKAGE
SHELL_PACKAGE = "com.android.shell"
LAUNCHER = sysui.LAUNCHER_PACKAGE
# Launcher activities of the simulated apps, as the real apps name them where they exist.
MAIN_ACTIVITIES = {
    LAUNCHER: "com.google.android.apps.nexuslauncher.NexusLauncherActivity",
    "com.google.android.gm": "com.google.android.gm.ConversationListActivityGmail",
    "com.android.chrome": "com.google.android.apps.chrome.Main",
    "com.google.android.contacts": "com.android.contacts.activities.PeopleActivity",
    "com.google.android.apps.messaging": (
        "com.google.android.apps.messaging.ui.ConversationListActivity"
    ),
    "com.android.settings": "com.android.settings.Settings",
    "com.google.android.calendar": "com.android.calendar.AllInOneActivity",
    "com.android.camera2": "com.android.camera.CameraLauncher",
    "com.google.android.documentsui": "com.android.documentsui.files.FilesActivity",
    "com.google.android.apps.photosgo": "com.google.android.apps.photosgo.home.HomeActivity",
    "com.booking": "com.booking.startup.HomeActivity",
    "com.alibaba.aliexpresshd": "com.alibaba.aliexpresshd.home.ui.MainActivity",
    "com.nextcloud.client": "com.owncloud.android.ui.activity.FileDisplayActivity",
}
# Packages of an API-34 Google APIs emulator that are not simulated apps (a selection).
SYSTEM_PACKAGES = (
    "android",
    "com.android.bluetooth",
    "com.android.certinstaller",
    "com.android.externalstorage",
    "com.android.inputdevices",
    "com.android.location.fused",
    "com.android.packageinstaller",
    "com.android.phone",
    "com.android.providers.contacts",
    "com.android.providers.downloads",
    "com.android.providers.media.module",
    "com.android.providers.settings",
    "com.android.providers.telephony",
    "com.android.server.telecom",
    "com.android.shell",
    "com.android.systemui",
    "com.android.vending",
    "com.google.android.gms",
    "com.google.android.gsf",
    "com.google.android.inputmethod.latin",
    "com.google.android.apps.nexuslauncher",
    "com.google.android.webview",
)
# Simulated apps that ship with the system image (the others are installed from the store).
PRELOADED = frozenset(
    {
        "com.android.camera2",
        "com.android.chrome",
        "com.android.settings",
        "com.google.android.apps.messaging",
        "com.google.android.apps.photosgo",
        "com.google.android.documentsui",
        "com.google.android.calendar",
        "com.google.android.contacts",
        "com.google.android.gm",
    }
)


@dataclass(frozen=True)
class Package:
    """An installed package."""

    name: str
    system: bool


def packages(phone: SimPhone | None = None) -> list[Package]:
    """Every installed package, sorted by name; with ``phone``, also the APKs installed on
    it since its OS started (its log's ``app_installed`` events: the installer's work)."""
    found = {name: Package(name, True) for name in SYSTEM_PACKAGES}
    for cls in installed_apps():
        found[cls.package] = Package(cls.package, cls.package in PRELOADED)
    for name in (HELPER_PACKAGE, ADB_KEYBOARD):
        found[name] = Package(name, False)
    if phone is not None:
        for event in phone.events.of_kind("app_installed"):
            name = str(event.data.get("package_name", ""))
            if name:
                found.setdefault(name, Package(name, False))
    return sorted(found.values(), key=lambda p: p.name)


def installed(name: str) -> bool:
    """Whether a package is installed."""
    return any(p.name == name for p in packages())


def app_of(package: str) -> AppFactory | None:
    """The simulated app with this package (not a label or alias: adb speaks packages)."""
    cls = resolve_app(package)
    return cls if cls is not None and cls.package == package else None


def main_activity(package: str) -> str:
    """The full class name of a package's launcher activity."""
    return MAIN_ACTIVITIES.get(package, f"{package}.MainActivity")


def short_component(package: str, cls: str) -> str:
    """ComponentName.flattenToShortString: ``pkg/.Cls`` when the class is in the package."""
    if cls.startswith(package + "."):
        return f"{package}/{cls[len(package) :]}"
    return f"{package}/{cls}"


def full_class(package: str, cls: str) -> str:
    """A component's class as ComponentName.unflattenFromString expands ``.Cls``."""
    return package + cls if cls.startswith(".") else cls


def stable(text: str, modulo: int) -> int:
    """A number derived from ``text`` (the same on every run)."""
    return zlib.crc32(text.encode("utf-8")) % modulo


def hash_hex(text: str) -> str:
    """A 7-digit object hash like those in dumpsys output."""
    return f"{zlib.crc32(text.encode('utf-8')) & 0xFFFFFFF:07x}"


def pid(package: str) -> int:
    """The process id of a package's main process ("" is system_server)."""
    return 571 if not package else 2000 + stable(package, 28000)


def uid(package: str) -> int:
    """The Linux uid of a package."""
    if package in ("", "android", "com.android.systemui", "com.android.settings"):
        return 1000
    if package == SHELL_PACKAGE:
        return 2000
    return 10100 + stable(package, 300)


def apk_path(package: str) -> str:
    """Where a package's base.apk lives."""
    pkg = next((p for p in packages() if p.name == package), None)
    if pkg is not None and pkg.system:
        folder = package.rsplit(".", 1)[-1].capitalize()
        return f"/product/app/{folder}/{folder}.apk"
    a = hash_hex("a" + package) * 3
    b = hash_hex("b" + package) * 3
    return f"/data/app/~~{a[:22]}==/{package}-{b[:22]}==/base.apk"
