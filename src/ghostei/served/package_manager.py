"""What the package manager resolves intents to, as ``cmd package`` and ``pm`` print it.

Adb clients find and launch apps through these: MCP phone servers list the launchable apps
with ``cmd package query-activities -a android.intent.action.MAIN -c
android.intent.category.LAUNCHER`` (and read its ``packageName=`` lines), and Appium's adb
library (so Appium and Midscene's Android agent) launches a package by the component
``cmd package resolve-activity --brief PKG`` prints. The output follows API 34's
``PackageManagerShellCommand``: with ``--brief`` one ``priority=… match=0x…`` line and the
component per activity, with ``--components`` the components alone, otherwise
``ResolveInfo.dump``'s fields (the ones clients read).

An intent resolves as the served phone's ``am start`` opens it: a package's launcher activity
for MAIN/LAUNCHER (a bare package is that intent, as ``Intent.parseCommandArgs`` makes it),
the launcher for HOME, and the app a VIEW of a web, content or file URI opens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from ..android.helper import HELPER_PACKAGE
from ..sim.apps import installed_apps
from ..world import FILE_KINDS
from .commands import IO, Session, UsageError
from .intents import Intent, parse_intent
from .packages import (
    LAUNCHER,
    apk_path,
    app_of,
    installed,
    main_activity,
    short_component,
    uid,
)

MAIN = "android.intent.action.MAIN"
VIEW = "android.intent.action.VIEW"
LAUNCHER_CATEGORY = "android.intent.category.LAUNCHER"
HOME_CATEGORY = "android.intent.category.HOME"
DEFAULT_CATEGORY = "android.intent.category.DEFAULT"
# IntentFilter match categories, with MATCH_ADJUSTMENT_NORMAL (0x8000) as resolution adds it.
MATCH_EMPTY = 0x108000  # the filter matched with no data
MATCH_SCHEME = 0x208000  # the data's scheme matched
# The overlay helper (an Android Studio sample app) has a launcher activity of its own.
HELPER_ACTIVITY = f"{HELPER_PACKAGE}.MainActivity"


def activity_target(intent: Intent) -> tuple[str, dict[str, Any]] | None:
    """The app (label) and deep link an activity intent opens (``am start``); ("", {}) is
    Home, None is no activity."""
    if HOME_CATEGORY in intent.categories:
        return "", {}
    if intent.component is not None:
        package = intent.component[0]
        if package == LAUNCHER:
            return "", {}
        cls = app_of(package)
        return (cls.label, _deep_link(intent.data)[1]) if cls is not None else None
    if intent.data:
        return _deep_link(intent.data) if _deep_link(intent.data)[0] else None
    action = intent.action or ""
    if action.startswith("android.settings."):
        return "Settings", {}
    if action in ("android.media.action.IMAGE_CAPTURE", "android.media.action.STILL_IMAGE_CAMERA"):
        return "Camera", {}
    if intent.package:
        cls = app_of(intent.package)
        return (cls.label, {}) if cls is not None else None
    return None


def _deep_link(uri: str | None) -> tuple[str, dict[str, Any]]:
    """Which app a VIEW of ``uri`` opens, and what it is handed."""
    if not uri:
        return "", {}
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        return "Chrome", {"url": uri}
    if scheme in ("sms", "smsto", "mms", "mmsto"):
        return "Messages", {"thread": unquote(uri.split(":", 1)[1].split("?")[0])}
    if scheme == "mailto":
        return "Gmail", {}
    if scheme == "file":
        return _file_app(unquote(parts.path))
    if scheme == "content":
        host, path = parts.netloc, unquote(parts.path)
        if host == "com.android.externalstorage.documents":
            doc = path.rsplit("/", 1)[-1]
            volume, _, rel = doc.partition(":")
            return "Files", ({"file": f"/sdcard/{rel}"} if volume == "primary" and rel else {})
        if host == "media":
            return "Gallery", {}
        if host in ("contacts", "com.android.contacts"):
            return "Contacts", {}
        if host in ("sms", "mms", "mms-sms"):
            return "Messages", {}
    return "", {}


def _file_app(path: str) -> tuple[str, dict[str, Any]]:
    lower = path.lower()
    media = FILE_KINDS["image"] + FILE_KINDS["video"]
    return ("Gallery" if lower.endswith(media) else "Files"), {"file": path}


@dataclass(frozen=True)
class Resolved:
    """An activity an intent resolves to, with how its filter matched."""

    package: str
    cls: str
    match: int

    @property
    def component(self) -> str:
        return short_component(self.package, self.cls)


CHOOSER = Resolved("android", "com.android.internal.app.ResolverActivity", 0)


def launchable() -> list[Resolved]:
    """Every activity with a MAIN/LAUNCHER filter, by package name."""
    found = [
        Resolved(cls.package, main_activity(cls.package), MATCH_EMPTY) for cls in installed_apps()
    ]
    found.append(Resolved(HELPER_PACKAGE, HELPER_ACTIVITY, MATCH_EMPTY))
    return sorted(found, key=lambda r: r.package)


def _activity_of(package: str) -> str | None:
    """A package's launcher activity, or None when it has none."""
    if package == HELPER_PACKAGE:
        return HELPER_ACTIVITY
    if package == LAUNCHER:
        return main_activity(LAUNCHER)
    return main_activity(package) if app_of(package) is not None else None


def query(intent: Intent) -> list[Resolved]:
    """The activities an intent can start (what ``queryIntentActivities`` returns)."""
    if intent.component is not None:
        package, cls = intent.component
        return [Resolved(package, cls, MATCH_EMPTY)] if _activity_of(package) == cls else []
    bare = intent.action is None and not intent.categories and intent.data is None
    action = MAIN if bare and intent.package else intent.action
    categories = set(intent.categories) - {DEFAULT_CATEGORY}
    found: list[Resolved] = []
    if action == MAIN and HOME_CATEGORY in categories:
        found = [Resolved(LAUNCHER, main_activity(LAUNCHER), MATCH_EMPTY)]
    elif action == MAIN and intent.data is None and categories <= {LAUNCHER_CATEGORY}:
        found = launchable()
    elif intent.data is not None and action in (VIEW, None):
        target = activity_target(intent)
        app = next((a for a in installed_apps() if target and a.label == target[0]), None)
        if app is not None:
            found = [Resolved(app.package, main_activity(app.package), MATCH_SCHEME)]
    if intent.package is not None:
        found = [r for r in found if r.package == intent.package]
    return found


def _dump(resolved: Resolved, prefix: str, default: bool) -> list[str]:
    """``ResolveInfo.dump``: the match, then the activity and its application."""
    package = resolved.package
    source = apk_path(package) if installed(package) else ""
    folder = source.rsplit("/", 1)[0]
    return [
        f"{prefix}{_match_line(resolved, default)}",
        f"{prefix}ActivityInfo:",
        f"{prefix}  name={resolved.cls}",
        f"{prefix}  packageName={package}",
        f"{prefix}  enabled=true exported=true directBootAware=false",
        f"{prefix}  taskAffinity={package} targetActivity=null persistableMode=PERSIST_ROOT_ONLY",
        f"{prefix}  resizeMode=RESIZE_MODE_RESIZEABLE_VIA_SDK_VERSION",
        f"{prefix}  ApplicationInfo:",
        f"{prefix}    packageName={package}",
        f"{prefix}    processName={package}",
        f"{prefix}    taskAffinity={package}",
        f"{prefix}    uid={uid(package)} flags=0x38c8be45 privateFlags=0x24001000 theme=0x0",
        f"{prefix}    sourceDir={source}",
        f"{prefix}    resourceDirs=[]",
        f"{prefix}    dataDir=/data/user/0/{package}",
        f"{prefix}    deviceProtectedDataDir=/data/user_de/0/{package}",
        f"{prefix}    credentialProtectedDataDir=/data/user/0/{package}",
        f"{prefix}    enabled=true minSdkVersion=26 targetSdkVersion=34 versionCode=1 "
        "targetSandboxVersion=1",
        f"{prefix}    codePath={folder}",
    ]


def _match_line(resolved: Resolved, default: bool) -> str:
    return (
        f"priority=0 preferredOrder=0 match=0x{resolved.match:x} specificIndex=-1 "
        f"isDefault={'true' if default else 'false'}"
    )


def _print(
    io: IO, resolved: Resolved, prefix: str, *, brief: bool, components: bool, default: bool
) -> None:
    """PackageManagerShellCommand.printResolveInfo."""
    if components:
        io.print(prefix + resolved.component)
    elif brief:
        io.print(prefix + _match_line(resolved, default))
        io.print(prefix + resolved.component)
    else:
        for line in _dump(resolved, prefix, default):
            io.print(line)


def _intent_and_options(args: list[str]) -> tuple[Intent, bool, bool]:
    """parseIntentAndUser: ``--brief``, ``--components``, ``--user U``, ``--query-flags F``,
    then the intent."""
    brief = components = False
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--brief":
            brief = True
        elif arg == "--components":
            components = True
        elif arg in ("--user", "--query-flags"):
            i += 1
        else:
            rest.append(arg)
        i += 1
    if not rest:
        raise UsageError("Error: no intent specified", 255)
    return parse_intent(rest), brief, components


def query_activities(session: Session, args: list[str], io: IO) -> int:
    """``pm query-activities [--brief] [--components] [--user U] INTENT``."""
    intent, brief, components = _intent_and_options(args)
    found = query(intent)
    if not found:
        io.print("No activities found")
        return 0
    if components:
        for resolved in found:
            _print(io, resolved, "", brief=brief, components=True, default=False)
        return 0
    io.print(f"{len(found)} activities found:")
    for i, resolved in enumerate(found):
        io.print(f"  Activity #{i}:")
        _print(io, resolved, "    ", brief=brief, components=False, default=False)
    return 0


def resolve_activity(session: Session, args: list[str], io: IO) -> int:
    """``pm resolve-activity [--brief] [--components] [--user U] INTENT``: the activity the
    intent starts (the only one that matches, as the resolver picks no chooser here)."""
    intent, brief, components = _intent_and_options(args)
    found = query(intent)
    if not found:
        io.print("No activity found")
        return 0
    # More than one match: the resolver's chooser is what starts.
    chosen = found[0] if len(found) == 1 else CHOOSER
    _print(io, chosen, "", brief=brief, components=components, default=len(found) == 1)
    return 0
