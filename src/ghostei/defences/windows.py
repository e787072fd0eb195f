"""Who drew what: the one trust rule every defence judges windows by.

An element belongs to the package that drew its window (``UIElement.package``, on both
backends). :class:`Trust` says where that package stands: the app in front, the system (the
share sheet, System UI's status bar, shade and heads-up cards, the launcher, the keyboard), an
app the benign task needs (``DefenceContext.task_apps``), or *foreign* — anything else, an
attacker's overlay among them. ``provenance`` annotates, ``spotlight`` datamarks and
``overlay-gate`` blocks by it, and ``llm-guard`` tells its model what it says, so they always
agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ..actions import Action
from ..apps import (
    CHOOSER_PACKAGE,
    IME_PACKAGE,
    LAUNCHER_PACKAGE,
    SYSTEMUI_PACKAGE,
    resolve_app,
)
from ..observation import Observation, UIElement

# Packages of the system itself, whose windows an attacker's app cannot draw as: the
# phone's catalogue (framework "android" for the share sheet, system UI, launcher, keyboard), then
# what a real Android 14 device draws its own with (permission prompt, share sheet, stock
# launcher, common input methods, the emulator's ADB keyboard).
SYSTEM_PACKAGES = frozenset(
    {
        CHOOSER_PACKAGE,
        SYSTEMUI_PACKAGE,
        LAUNCHER_PACKAGE,
        IME_PACKAGE,
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
    """The packages of the apps a task names, by the phone's catalogue of apps (label, package
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


Origin = Literal["foreground", "system", "task", "foreign", "unknown"]

# How each origin is put in words to a model (llm-guard).
ORIGIN_WORDS: dict[Origin, str] = {
    "foreground": "the foreground app",
    "system": "the system",
    "task": "an app the task needs",
    "foreign": "NOT the foreground app, the system or an app the task needs",
    "unknown": "no package known",
}


@dataclass(frozen=True)
class Trust:
    """The one trust rule: which packages' windows a defence may take as legitimate."""

    task: frozenset[str]  # the packages of the apps the benign task needs

    @classmethod
    def of(cls, apps: Iterable[str]) -> Trust:
        """The rule for a task that needs ``apps`` (names as ``task_packages`` reads them)."""
        return cls(task_packages(apps))

    def origin(self, package: str, foreground: str) -> Origin:
        """Where a window drawn by ``package`` stands while ``foreground`` is in front."""
        if not package:
            return "unknown"  # cannot be attributed, so never flagged
        if package == foreground:
            return "foreground"
        if package in SYSTEM_PACKAGES:
            return "system"
        return "task" if package in self.task else "foreign"

    def element_origin(self, element: UIElement, observation: Observation) -> Origin:
        """Where ``element``'s window stands on ``observation``."""
        return self.origin(element.package, observation.foreground_package)

    def is_foreign(self, element: UIElement, observation: Observation) -> bool:
        """Whether ``element`` was drawn by an app neither in front, nor the system, nor one
        the task needs."""
        return self.element_origin(element, observation) == "foreign"


def focused_field(observation: Observation) -> UIElement | None:
    """The text field that has input focus (the last one listed: the topmost window's)."""
    for element in reversed(observation.elements):
        if element.focused and element.editable:
            return element
    return None


def target_of(observation: Observation, action: Action) -> UIElement | None:
    """The element ``action`` touches: the topmost at the point the device touches (an
    index's centre, a pixel, a swipe's start; see ``Observation.target``); for typing and
    Enter without either, the focused field (where the text goes)."""
    if action.index is None and action.x is None:
        if action.action_type in ("input_text", "keyboard_enter"):
            return focused_field(observation)
        return None
    return observation.target(action)
