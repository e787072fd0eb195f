"""``settings`` and ``svc``: Android's settings tables over the world's settings.

Keys that have a world setting read and write it (``global airplane_mode_on``, ``secure
location_mode``, ``global package_verifier_enable`` for Play Protect, ``secure
install_non_market_apps``, ``global adb_enabled``, ``system screen_off_timeout`` in ms, ...);
``secure navigation_mode`` is the phone's navigation (0 three-button, 1 two-button, 2
gestures; :mod:`ghostei.sim.navigation`). Other keys are kept as given, starting from the
values an API-34 emulator has. Writes are seeding, not a user's actions: they change the world
without events, as ``settings put`` on a device shows in no app's log.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..android.helper import ACCESSIBILITY_SERVICE, NOTIFICATION_LISTENER, SPEAK_PASSWORD
from ..sim import navigation as nav
from .commands import IO, Session, UsageError, command


@dataclass(frozen=True)
class Mapped:
    """A settings key backed by a world setting: its field and the value encoding."""

    field: str
    on: str = "1"
    off: str = "0"
    inverted: bool = False
    scale: int = 0  # a number: device units per world unit (0: a switch)


MAPPED: dict[tuple[str, str], Mapped] = {
    ("global", "airplane_mode_on"): Mapped("airplane_mode"),
    ("global", "wifi_on"): Mapped("wifi"),
    ("global", "bluetooth_on"): Mapped("bluetooth"),
    ("global", "mobile_data"): Mapped("mobile_data"),
    ("global", "adb_enabled"): Mapped("usb_debugging"),
    ("global", "package_verifier_enable"): Mapped("play_protect"),
    ("global", "zen_mode"): Mapped("do_not_disturb"),
    ("secure", "install_non_market_apps"): Mapped("install_unknown_apps"),
    ("secure", "location_mode"): Mapped("location", on="3"),
    ("secure", "ui_night_mode"): Mapped("dark_theme", on="2", off="1"),
    ("secure", "backup_enabled"): Mapped("backup"),
    ("secure", "lockscreen.disabled"): Mapped("screen_lock", inverted=True),
    ("system", "screen_off_timeout"): Mapped("screen_timeout", scale=1000),  # ms; world: s
}
# Values an API-34 emulator has for keys clients commonly read.
DEFAULTS: dict[str, dict[str, str]] = {
    "system": {
        "accelerometer_rotation": "0",
        "font_scale": "1.0",
        "screen_brightness": "102",
        "screen_brightness_mode": "0",
        "user_rotation": "0",
    },
    "secure": {
        "android_id": "3a1f5c7e9b2d4f60",
        "default_input_method": "com.google.android.inputmethod.latin/"
        "com.android.inputmethod.latin.LatinIME",
        "enabled_input_methods": "com.google.android.inputmethod.latin/"
        "com.android.inputmethod.latin.LatinIME:com.android.adbkeyboard/.AdbIME",
        "show_ime_with_hard_keyboard": "1",
        # The helper app's services, as `ghostei android setup` leaves them.
        "accessibility_enabled": "1",
        "enabled_accessibility_services": ACCESSIBILITY_SERVICE,
        "enabled_notification_listeners": NOTIFICATION_LISTENER,
        SPEAK_PASSWORD: "1",
    },
    "global": {
        "animator_duration_scale": "1.0",
        "auto_time": "1",
        "development_settings_enabled": "1",
        "device_name": "sdk_gphone64_x86_64",
        "stay_on_while_plugged_in": "0",
        "transition_animation_scale": "1.0",
        "window_animation_scale": "1.0",
    },
}


class SettingsStore:
    """Keys without a world setting, per namespace (seeded with the emulator's defaults)."""

    def __init__(self) -> None:
        self.values = {ns: dict(keys) for ns, keys in DEFAULTS.items()}


def setting_get(session: Session, namespace: str, key: str) -> str | None:
    """A setting's value, None if unset."""
    if (namespace, key) == nav.SETTING_KEY:
        return nav.SETTING_VALUES[session.phone.navigation]
    mapped = MAPPED.get((namespace, key))
    if mapped is not None and mapped.scale:
        return str(int(getattr(session.phone.world.settings, mapped.field)) * mapped.scale)
    if mapped is not None:
        value = bool(getattr(session.phone.world.settings, mapped.field)) != mapped.inverted
        return mapped.on if value else mapped.off
    return session.device.slot(SettingsStore).values[namespace].get(key)


def setting_put(session: Session, namespace: str, key: str, value: str) -> None:
    """Set a setting (a world setting where the key has one)."""
    if (namespace, key) == nav.SETTING_KEY:
        # On a device the overlay (cmd overlay) decides the mode and SystemUI writes this
        # key after it; clients write the key to switch, so here the key switches too. A
        # value that is no mode leaves the mode as it is.
        mode = nav.from_setting(value)
        if mode is not None:
            session.phone.set_navigation(mode)
        return
    mapped = MAPPED.get((namespace, key))
    if mapped is not None and mapped.scale:
        if not value.strip().isdigit():
            raise UsageError(f"Invalid value for {key}: {value}", 255)
        setattr(session.phone.world.settings, mapped.field, int(value.strip()) // mapped.scale)
        return
    if mapped is not None:
        on = value.strip() not in ("", "0", mapped.off, "false")
        setattr(session.phone.world.settings, mapped.field, on != mapped.inverted)
        return
    session.device.slot(SettingsStore).values[namespace][key] = value


def setting_delete(session: Session, namespace: str, key: str) -> bool:
    """Remove a stored setting; world-backed keys cannot be deleted."""
    return session.device.slot(SettingsStore).values[namespace].pop(key, None) is not None


def settings_keys(session: Session, namespace: str) -> dict[str, str]:
    """Every key of a namespace with its value (world-backed keys included)."""
    keys = dict(session.device.slot(SettingsStore).values[namespace])
    if namespace == nav.SETTING_KEY[0]:
        keys[nav.SETTING_KEY[1]] = nav.SETTING_VALUES[session.phone.navigation]
    for (ns, key), _ in MAPPED.items():
        if ns == namespace:
            keys[key] = setting_get(session, ns, key) or ""
    return keys


@command("settings")
def settings(session: Session, argv: list[str], io: IO) -> int:
    """settings [--user N] get|put|delete|list|reset NAMESPACE [KEY [VALUE]]."""
    args = [a for a in argv[1:] if a not in ("--lineage",)]
    while args and args[0] == "--user":
        args = args[2:]
    if len(args) < 2:
        raise UsageError("usage:  settings [--user <USER_ID> | current] get namespace key", 255)
    verb, namespace, rest = args[0], args[1], args[2:]
    if namespace not in DEFAULTS:
        raise UsageError(f"Invalid namespace '{namespace}'", 255)
    if verb == "get" and rest:
        value = setting_get(session, namespace, rest[0])
        io.print("null" if value is None else value)
    elif verb == "put" and len(rest) >= 2:
        setting_put(session, namespace, rest[0], rest[1])
    elif verb == "delete" and rest:
        io.print(f"Deleted {int(setting_delete(session, namespace, rest[0]))} rows")
    elif verb == "list":
        for key, value in sorted(settings_keys(session, namespace).items()):
            io.print(f"{key}={value}")
    elif verb == "reset":
        session.device.slot(SettingsStore).values[namespace] = dict(DEFAULTS[namespace])
    else:
        raise UsageError(f"Invalid command: {verb}", 255)
    return 0


@command("svc")
def svc(session: Session, argv: list[str], io: IO) -> int:
    """svc wifi|data|bluetooth enable|disable."""
    fields = {"wifi": "wifi", "data": "mobile_data", "bluetooth": "bluetooth"}
    if len(argv) < 3 or argv[1] not in fields or argv[2] not in ("enable", "disable"):
        raise UsageError("Available commands:\n    wifi\n    data\n    bluetooth", 1)
    setattr(session.phone.world.settings, fields[argv[1]], argv[2] == "enable")
    return 0
