"""Who drew what: the window rules the defences that judge provenance share.

An element belongs to the package that drew its window (``UIElement.package``, on both
backends). It is *foreign* when that package is neither the app in front, nor the system, nor
an app the task names: the one rule ``provenance`` annotates by, ``spotlight`` datamarks by
and ``overlay-gate`` blocks by, so the three always agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..actions import Action
from ..observation import Observation, UIElement
from ..sim import system_ui as sysui
from ..sim.apps.base import resolve_app  # importing the apps package registers every app

# Packages of the system itself, whose windows an attacker's app cannot draw as: the
# simulator's (framework "android" for the share sheet, system UI, launcher, keyboard), then
# what a real Android 14 device draws its own with (permission prompt, share sheet, stock
# launcher, common input methods, the emulator's ADB keyboard).
SYSTEM_PACKAGES = frozenset(
    {
        sysui.CHOOSER_PACKAGE,
        sysui.SYSTEMUI_PACKAGE,
        sysui.LAUNCHER_PACKAGE,
        sysui.IME_PACKAGE,
        "com.android.launcher3",
        "com.android.permissioncontroller",
        "com.google.android.permissioncontroller",
        "com.android.intentresolver",
        "com.android.inputmethod.latin",
        "com.android.adbkeyboard",
        "com.samsung.android.honeyboard",
        "com.touchtype.swiftkey",
    }
)
PACKAGE_NAME = re.compile(r"[A-Za-z]\w*(\.[A-Za-z_]\w*)+")


def task_packages(apps: Iterable[str]) -> frozenset[str]:
    """The packages of the apps a task names, by the simulator's app registry (label, package
    or alias). A name the registry does not know is kept if it looks like a package
    (``com.example.app``); others ("System UI") name no app of their own."""
    packages = set()
    for name in apps:
        app = resolve_app(name)
        if app is not None:
            packages.add(app.package)
        elif PACKAGE_NAME.fullmatch(name.strip()):
            packages.add(name.strip())
    return frozenset(packages)


def trusted_packages(apps: Iterable[str]) -> frozenset[str]:
    """The system's packages and those of the apps a task names."""
    return SYSTEM_PACKAGES | task_packages(apps)


def is_foreign(element: UIElement, observation: Observation, trusted: frozenset[str]) -> bool:
    """Whether ``element`` was drawn by an app neither in front, nor the system, nor named by
    the task (an element without a package cannot be attributed, and is not flagged)."""
    package = element.package
    return bool(package) and package != observation.foreground_package and package not in trusted


def focused_field(observation: Observation) -> UIElement | None:
    """The text field that has input focus (the last one listed: the topmost window's)."""
    for element in reversed(observation.elements):
        if element.focused and element.editable:
            return element
    return None


def target_of(observation: Observation, action: Action) -> UIElement | None:
    """The element ``action`` acts on: its index or point; for typing and Enter without
    either, the focused field (where the text goes)."""
    if action.index is None and action.x is None:
        if action.action_type in ("input_text", "keyboard_enter"):
            return focused_field(observation)
        return None
    return observation.target(action)
