"""System navigation modes: what each is called, how tall its bar is, and how Android names it.

A phone's mode is :attr:`SimPhone.navigation <ghostei.sim.phone.SimPhone.navigation>`, the
only place it is kept; the bar is drawn by :func:`ghostei.sim.system_ui.navigation_bar` and
the served phone's ``settings`` and ``cmd overlay`` read and switch it through the names here.

- ``gestures``: gesture navigation, Android's default since 10 (and the phone's): a handle at
  the bottom; a swipe up from it goes Home, or to the overview when it stops low.
- ``buttons``: the three-button bar: Back, Home and Overview keys that a tap presses. Agent
  programs whose only "back" is a tap on the bar's Back key need it.
- ``two-button``: Android 9's bar: a Back key and a Home pill that a tap presses and a
  swipe up turns into the overview.

As on a device, an app's window ends where the bar begins, so the 48 dp button bars take that
much from the app where the gesture handle takes 24 dp.
"""

from __future__ import annotations

from typing import Literal

Navigation = Literal["gestures", "buttons", "two-button"]
NAVIGATIONS: tuple[Navigation, ...] = ("gestures", "buttons", "two-button")
DEFAULT_NAVIGATION: Navigation = "gestures"

# Heights of the bar, in dp: SystemUI's navigation_bar_height, which apps lay out above
# (24 dp is the gesture handle's inset, 48 dp a bar of keys).
BAR_DP: dict[Navigation, float] = {"gestures": 24.0, "buttons": 48.0, "two-button": 48.0}

# Settings.Secure.NAVIGATION_MODE: WindowManagerPolicyConstants.NAV_BAR_MODE_3BUTTON (0),
# NAV_BAR_MODE_2BUTTON (1) and NAV_BAR_MODE_GESTURAL (2).
SETTING_KEY = ("secure", "navigation_mode")
SETTING_VALUES: dict[Navigation, str] = {"buttons": "0", "two-button": "1", "gestures": "2"}

# The framework's runtime resource overlays that choose the mode: they target "android", one
# category holds the three, and the one enabled decides the mode.
OVERLAY_TARGET = "android"
OVERLAY_CATEGORY = "com.android.internal.navigation_bar_mode"
OVERLAYS: dict[Navigation, str] = {
    "gestures": "com.android.internal.systemui.navbar.gestural",
    "buttons": "com.android.internal.systemui.navbar.threebutton",
    "two-button": "com.android.internal.systemui.navbar.twobutton",
}
# With none of them enabled the framework's own config_navBarInteractionMode applies: 0, the
# three-button bar.
FRAMEWORK_DEFAULT: Navigation = "buttons"


def check(mode: str) -> Navigation:
    """``mode`` as a navigation mode; ValueError if it is none."""
    if mode not in NAVIGATIONS:
        raise ValueError(f"unknown navigation {mode!r} ({', '.join(NAVIGATIONS)})")
    return mode  # narrowed by the test above


def from_setting(value: str) -> Navigation | None:
    """The mode a ``navigation_mode`` value stands for; None for any other value."""
    for mode, setting in SETTING_VALUES.items():
        if value.strip() == setting:
            return mode
    return None


def from_overlay(package: str) -> Navigation | None:
    """The mode an overlay package selects; None if it is not one of the navigation bar's."""
    for mode, overlay in OVERLAYS.items():
        if package == overlay:
            return mode
    return None
