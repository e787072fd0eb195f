"""Android's own tools on the served phone: am, screencap, uiautomator, wm and cmd.

``am start`` opens apps (``-n pkg/.Activity``, the HOME intent, VIEW intents for web and content
URIs); ``am broadcast`` reaches the overlay helper (``com.example.myapplication/.AdbReceiver``,
action ``com.example.broadcast.UPDATE_POPUP``: the upstream harness's extras title, content,
cancel, confirm, weburl, isUrgent, and ours: style, brand, consent, package, served_url) and
ADBKeyboard (``ADB_INPUT_TEXT`` and friends), which types into the focused field. A
``served_url`` tells the phone's network where the overlay's page is really served, so its
Chrome loads, types into and submits that page over HTTP as a real device's does
(:mod:`.network`).
"""

from __future__ import annotations

import base64
import io as iolib
import struct
from typing import cast

from ..actions import Action
from ..android.helper import HELPER_PACKAGE, OVERLAY_OP, with_component, without_component
from ..device import OverlaySpec, OverlayStyle
from .commands import IO, PROGRAMS, Session, UsageError, command, strerror
from .input_commands import keycode, press_key, type_text
from .intents import FLAG_ACTIVITY_NEW_TASK, FLAG_RECEIVER_FROM_SHELL, Intent, parse_intent
from .overlays import overlay
from .package_manager import activity_target
from .packages import installed, main_activity, short_component
from .screen import windows_xml
from .settings_provider import setting_delete, setting_get, setting_put
from .system_info import force_stop

UPDATE_POPUP = "com.example.broadcast.UPDATE_POPUP"
DEFAULT_DUMP = "/sdcard/window_dump.xml"
STDOUT_PATHS = ("/dev/tty", "/dev/stdout", "/proc/self/fd/1")
SRGB_DATASPACE = 142671872  # HAL_DATASPACE_SRGB, which screencap writes after the size
STYLES = ("dialog", "bottom_sheet", "fullscreen")


# ----- am ----------------------------------------------------------------------------------


@command("am")
def am(session: Session, argv: list[str], io: IO) -> int:
    """am start|start-activity|broadcast|force-stop|kill|get-current-user ..."""
    args = argv[1:]
    sub = args[0] if args else ""
    if sub in ("start", "start-activity"):
        return _start(session, parse_intent(args[1:]), io)
    if sub == "broadcast":
        return _broadcast(session, parse_intent(args[1:]), io)
    if sub in ("force-stop", "stop-app", "kill") and len(args) > 1:
        package = [a for a in args[1:] if not a.startswith("-")][-1]
        if sub != "kill" or session.phone.foreground_package != package:
            force_stop(session, package)
        return 0
    if sub == "get-current-user":
        io.print("0")
        return 0
    if sub == "set-debug-app":  # [-w] [--persistent] PACKAGE: its debug flags apply
        named = [a for a in args[1:] if not a.startswith("-")]
        if not named:
            raise UsageError("Error: no package specified", 255)
        if "--persistent" in args:
            setting_put(session, "global", "debug_app", named[-1])
        return 0
    if sub == "clear-debug-app":
        setting_delete(session, "global", "debug_app")
        return 0
    if sub == "kill-all":
        return 0
    raise UsageError(f"Unknown command: {sub}" if sub else "usage: am [subcommand] [options]", 255)


def _start(session: Session, intent: Intent, io: IO) -> int:
    phone = session.phone
    io.print(f"Starting: {intent}")
    target = activity_target(intent)
    intent.flags |= FLAG_ACTIVITY_NEW_TASK
    if target is None:
        if intent.component is not None:
            io.error("Error type 3")
            package, cls = intent.component  # toShortString: the class in full
            io.error(f"Error: Activity class {{{package}/{cls}}} does not exist.")
        else:
            io.error(f"Error: Activity not started, unable to resolve {intent}")
        return 0  # am start reports errors in its output, not its exit status
    label, link = target
    if not label:
        session.act(Action(action_type="navigate_home"))
    elif "url" in link:
        phone.open_url(str(link["url"]))
    elif link:
        phone.open_app(label, link)
    else:
        running = label in phone.apps
        session.act(Action(action_type="open_app", app_name=label))
        if running:
            io.error(
                "Warning: Activity not started, its current task has been brought to the front"
            )
    if "-W" in intent.options:
        package = phone.foreground_package
        io.print("Status: ok")
        io.print("LaunchState: COLD")
        io.print(f"Activity: {short_component(package, main_activity(package))}")
        io.print("TotalTime: 0")
        io.print("WaitTime: 0")
        io.print("Complete")
    return 0


def _broadcast(session: Session, intent: Intent, io: IO) -> int:
    intent.flags |= FLAG_RECEIVER_FROM_SHELL
    io.print(f"Broadcasting: {intent}")
    receiver = intent.component[0] if intent.component else intent.package
    if intent.action == UPDATE_POPUP and receiver == HELPER_PACKAGE and installed(receiver):
        if session.device.slot(AppOps).mode(HELPER_PACKAGE, OVERLAY_OP) != "allow":
            io.print("Broadcast completed: result=1")  # the helper's answer: may not draw
            return 0
        spec = overlay_spec(intent)
        served = intent.text("served_url")
        network = session.device.network
        if spec.url and network is not None:
            # Before the overlay shows: its confirm may open the page at once. Pages from
            # its server are the attacker's (the harness names its own, on the host).
            network.overlay_named(spec.url)
            if served:
                network.route(spec.url, served)
        session.phone.show_overlay(spec)
    elif intent.action and intent.action.startswith("ADB_"):
        _adb_keyboard(session, intent)
    io.print("Broadcast completed: result=0")
    return 0


def overlay_spec(intent: Intent) -> OverlaySpec:
    """The overlay the helper app draws for an UPDATE_POPUP broadcast."""
    style = intent.text("style", "dialog")
    return OverlaySpec(
        title=intent.text("title"),
        content=intent.text("content"),
        confirm=intent.text("confirm", "OK"),
        cancel=intent.text("cancel", "Cancel"),
        style=cast(OverlayStyle, style if style in STYLES else "dialog"),
        urgent=intent.flag("isUrgent"),
        url=intent.text("weburl"),
        consent=intent.text("consent"),
        package=intent.text("package") or HELPER_PACKAGE,
        brand=intent.text("brand") or "System UI",
    )


def _adb_keyboard(session: Session, intent: Intent) -> None:
    """ADBKeyboard's broadcasts, delivered to the focused field."""
    action = intent.action
    if action == "ADB_INPUT_TEXT":
        type_text(session, intent.text("msg"))
    elif action == "ADB_INPUT_B64":
        type_text(session, base64.b64decode(intent.text("msg")).decode("utf-8", "replace"))
    elif action == "ADB_INPUT_CHARS":
        chars = intent.extras.get("chars", [])
        type_text(session, "".join(chr(int(c)) for c in chars if str(c).strip().isdigit()))
    elif action == "ADB_INPUT_CODE":
        press_key(session, keycode(intent.text("code", "0")))
    elif action == "ADB_EDITOR_CODE":
        session.act(Action(action_type="keyboard_enter"))
    elif action == "ADB_CLEAR_TEXT":
        focused = next((e for e in session.phone.observe().elements if e.focused), None)
        for _ in range(len(focused.text) if focused is not None else 0):
            session.act(Action(action_type="input_text", text="\b"))


# ----- screencap, uiautomator, wm ------------------------------------------------------------


@command("screencap")
def screencap(session: Session, argv: list[str], io: IO) -> int:
    """screencap [-hpj] [-d DISPLAY] [FILE]: PNG with -p or a .png name, else raw RGBA."""
    args = argv[1:]
    opts: set[str] = set()
    target = ""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-d":
            i += 2
            continue
        if arg.startswith("-") and len(arg) > 1:
            opts.update(arg[1:])
        else:
            target = arg
        i += 1
    if "h" in opts:
        io.error("usage: screencap [-hpj] [-d display-id] [FILENAME]")
        return 0
    shot = session.observed(session.phone.observe())  # what an external agent saw
    if "j" in opts or target.lower().endswith((".jpg", ".jpeg")):
        buf = iolib.BytesIO()
        shot.screenshot.save(buf, "JPEG", quality=80)
        data = buf.getvalue()
    elif "p" in opts or target.lower().endswith(".png"):
        data = shot.png
    else:
        pixels = shot.screenshot.convert("RGBA").tobytes()
        data = struct.pack("<IIII", shot.width, shot.height, 1, SRGB_DATASPACE) + pixels
    if not target:
        io.out(data)
        return 0
    try:
        session.fs.write(session.path(target), data, 0o660)
    except OSError as exc:
        io.error(f"Error opening file: {target} ({strerror(exc)})")
        return 1
    return 0


@command("uiautomator")
def uiautomator(session: Session, argv: list[str], io: IO) -> int:
    """uiautomator dump [--compressed] [--windows] [FILE]."""
    args = argv[1:]
    if not args or args[0] != "dump":
        io.print("Usage: uiautomator <subcommand> [options]")
        io.print("")
        io.print("Available subcommands:")
        io.print("")
        io.print("help: displays help message")
        io.print("")
        io.print("dump: creates an XML dump of current UI hierarchy")
        io.print("    dump [--verbose][file]")
        io.print("      [--compressed]: dumps compressed layout information.")
        io.print("      [--windows]: dumps all windows' layout information.")
        io.print("      [file]: the location where the dumped XML should be stored, default is")
        io.print(f"      {DEFAULT_DUMP}")
        return 0 if args[:1] == ["help"] else 1
    target = DEFAULT_DUMP
    every = False
    for arg in args[1:]:
        if arg == "--windows":
            every = True
        elif not arg.startswith("-"):
            target = session.path(arg)
    shot = session.observed(session.phone.observe())  # what an external agent saw
    xml = windows_xml(session.phone) if every else shot.xml
    if target in STDOUT_PATHS:
        io.write(xml)
    else:
        try:
            session.fs.write(target, xml.encode("utf-8"), 0o660)
        except OSError as exc:
            io.error(f"ERROR: could not write {target}: {strerror(exc)}")
            return 1
    io.print(f"UI hierchary dumped to: {target}")  # sic: uiautomator's own spelling
    return 0


@command("wm")
def wm(session: Session, argv: list[str], io: IO) -> int:
    """wm size | wm density (the simulated screen's size cannot be overridden)."""
    phone = session.phone
    args = argv[1:]
    sub = args[0] if args else ""
    if sub == "size" and len(args) == 1:
        io.print(f"Physical size: {phone.width}x{phone.height}")
        return 0
    if sub == "density" and len(args) == 1:
        io.print(f"Physical density: {round(phone.density * 160)}")
        return 0
    if sub in ("size", "density") and args[1] == "reset":
        return 0
    if sub in ("size", "density"):
        io.error(f"Error: the simulated phone's {sub} is fixed; start it with another --screen")
        return 255
    raise UsageError(f"Unknown command: {sub}" if sub else "usage: wm [size|density]", 255)


# ----- appops and the notification service -------------------------------------------------


# The op behind Settings' Install unknown apps: a package allowed as a source is the world's
# consent ``install_unknown_apps:<package>`` (what the Settings app flips).
INSTALL_OP = "REQUEST_INSTALL_PACKAGES"


class AppOps:
    """App-op modes set with ``appops set``; the helper may draw overlays unless told not to."""

    def __init__(self) -> None:
        self.modes: dict[tuple[str, str], str] = {}

    def mode(self, package: str, op: str) -> str:
        default = "allow" if (package, op) == (HELPER_PACKAGE, OVERLAY_OP) else "default"
        return self.modes.get((package, op), default)


def _op_mode(session: Session, package: str, op: str) -> str:
    if op == INSTALL_OP:
        allowed = session.phone.world.consents.get(f"install_unknown_apps:{package}")
        return {True: "allow", False: "deny", None: "default"}[allowed]
    return session.device.slot(AppOps).mode(package, op)


@command("appops")
def appops(session: Session, argv: list[str], io: IO) -> int:
    """appops get PACKAGE [OP] | appops set PACKAGE OP allow|deny|ignore|default."""
    args = [a for a in argv[1:] if not a.startswith("--user")]
    ops = session.device.slot(AppOps)
    if len(args) >= 2 and args[0] == "get":
        package = args[1]
        if not installed(package):
            io.error(f"Error: No UID for {package} in user 0")
            return 255
        listed = {op for pkg, op in ops.modes if pkg == package} | {OVERLAY_OP}
        if f"install_unknown_apps:{package}" in session.phone.world.consents:
            listed.add(INSTALL_OP)
        wanted = args[2:3] or sorted(listed)
        for op in wanted:
            mode = _op_mode(session, package, op)
            io.print(f"{op}: {mode}" if mode != "default" else "No operations.")
        return 0
    if len(args) == 4 and args[0] == "set":
        _, package, op, mode = args
        if mode not in ("allow", "deny", "ignore", "default", "foreground"):
            io.error(f"Error: Mode {mode} is not valid")
            return 255
        if op == INSTALL_OP:
            key = f"install_unknown_apps:{package}"
            consents = session.phone.world.consents
            if mode == "default":
                consents.pop(key, None)
            else:
                consents[key] = mode == "allow"
            return 0
        ops.modes[(package, op)] = mode
        return 0
    raise UsageError("usage: appops set|get PACKAGE [OP] [MODE]", 255)


def notification(session: Session, argv: list[str], io: IO) -> int:
    """cmd notification allow_listener|disallow_listener COMPONENT (the secure setting
    ``enabled_notification_listeners`` holds the allowed ones)."""
    args = argv[1:]
    if len(args) == 2 and args[0] in ("allow_listener", "disallow_listener"):
        key = "enabled_notification_listeners"
        current = setting_get(session, "secure", key)
        change = with_component if args[0] == "allow_listener" else without_component
        setting_put(session, "secure", key, change(current, args[1]))
        return 0
    raise UsageError("usage: cmd notification allow_listener|disallow_listener COMPONENT", 255)


# ----- cmd: the service front end ------------------------------------------------------------

_SERVICES = {
    "package": "pm",
    "activity": "am",
    "input": "input",
    "input_method": "ime",
    "settings": "settings",
    "window": "wm",
}


@command("cmd")
def cmd(session: Session, argv: list[str], io: IO) -> int:
    """cmd SERVICE ARGS: package, activity, input, settings, window, statusbar, overlay."""
    args = argv[1:]
    if not args or args[0] == "-l":
        io.print("Currently running services:")
        for name in sorted([*_SERVICES, "notification", "overlay", "statusbar"]):
            io.print(f"  {name}")
        return 0
    service, rest = args[0], args[1:]
    if service == "notification":  # a service with no shell command of its own
        return notification(session, [service, *rest], io)
    if service in _SERVICES:
        program = _SERVICES[service]
        return PROGRAMS[program](session, [program, *rest], io)
    if service == "statusbar":
        return _statusbar(session, rest)
    if service == "overlay":
        return overlay(session, [service, *rest], io)
    io.error(f"Can't find service: {service}")
    return 20


def _statusbar(session: Session, args: list[str]) -> int:
    phone = session.phone
    top = 1
    if args[:1] in (["expand-notifications"], ["expand-settings"]):
        session.act(
            Action(
                action_type="swipe",
                x=phone.width // 2,
                y=top,
                x2=phone.width // 2,
                y2=phone.height // 2,
            )
        )
    elif args[:1] == ["collapse"] and phone.shade_open:
        session.act(Action(action_type="navigate_back"))
    return 0
