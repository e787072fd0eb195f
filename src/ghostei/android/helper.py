"""The helper app's names on a device: its package, components and what it must be granted.

One place for what ``android/helper`` declares in its manifest, what ``ghostei android setup``
grants and ``doctor`` checks, and what the served phone has enabled by default.
"""

from __future__ import annotations

from ..device import DEFAULT_ATTACKER_PACKAGE

HELPER_PACKAGE = DEFAULT_ATTACKER_PACKAGE  # the upstream harness's overlay app's package
OVERLAY_RECEIVER = f"{HELPER_PACKAGE}/.AdbReceiver"
# The services that report what the screen and the notification shade show (GhostEI lines).
ACCESSIBILITY_SERVICE = f"{HELPER_PACKAGE}/.GhostAccessibilityService"
NOTIFICATION_LISTENER = f"{HELPER_PACKAGE}/.GhostNotificationListener"
OVERLAY_OP = "SYSTEM_ALERT_WINDOW"  # the app op that lets it draw over other apps
# Secure setting: 1 lets accessibility services read a password field's text (TextView gives
# them the dots otherwise), so the helper can report what was typed into one.
SPEAK_PASSWORD = "speak_password"
ADB_KEYBOARD_PACKAGE = "com.android.adbkeyboard"
ADB_KEYBOARD_IME = f"{ADB_KEYBOARD_PACKAGE}/.AdbIME"


def listed(value: str | None, component: str) -> bool:
    """Whether a secure setting's colon-separated component list holds ``component``."""
    return component in (value or "").split(":")


def with_component(value: str | None, component: str) -> str:
    """A colon-separated component list with ``component`` added (once)."""
    items = [c for c in (value or "").split(":") if c and c != "null"]
    return ":".join(items if component in items else [*items, component])


def without_component(value: str | None, component: str) -> str:
    """A colon-separated component list without ``component``."""
    return ":".join(c for c in (value or "").split(":") if c and c not in ("null", component))
