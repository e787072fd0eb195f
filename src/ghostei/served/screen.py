"""The phone's windows as Android's window manager and accessibility name them.

Shared by ``dumpsys window``/``dumpsys activity`` (focus and resumed activity) and by
``uiautomator dump --windows``, whose format is uiautomator's own for that option (API 33+,
``AccessibilityNodeInfoDumper.dumpWindowsToFile``)::

    <?xml version='1.0' encoding='UTF-8' standalone='yes' ?><displays><display id="0">
    <window index="0" title="…" bounds="[0,0][1080,2400]" active="true" focused="true"
     accessibility-focused="false" id="…" layer="…" type="TYPE_APPLICATION">
    <hierarchy rotation="0"><node …/></hierarchy></window>…</display></displays>

with windows top to bottom (z-order, as ``UiAutomation.getWindowsOnAllDisplays`` lists them),
each holding the same node dump ``uiautomator dump`` gives for a single window.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sim.hierarchy import HEADER, dump, quoteattr
from ..sim.phone import SimPhone
from ..sim.windows import Window, active_window
from .packages import LAUNCHER, hash_hex, main_activity, short_component, stable

CHOOSER = "android/com.android.internal.app.ChooserActivity"
# kind -> (window tag, window-manager type, accessibility type, accessibility title)
_SYSTEM_WINDOWS = {
    "status_bar": ("StatusBar", "STATUS_BAR", "TYPE_SYSTEM", "Status bar"),
    "navigation_bar": ("NavigationBar0", "NAVIGATION_BAR", "TYPE_SYSTEM", "Navigation bar"),
    "heads_up": ("NotificationShade", "NOTIFICATION_SHADE", "TYPE_SYSTEM", "Notification shade"),
    "shade": ("NotificationShade", "NOTIFICATION_SHADE", "TYPE_SYSTEM", "Notification shade"),
    "keyboard": ("InputMethod", "INPUT_METHOD", "TYPE_INPUT_METHOD", "Gboard"),
}


@dataclass(frozen=True)
class WindowInfo:
    """One window as dumpsys and uiautomator describe it."""

    window: Window
    tag: str  # what Window{hash u0 TAG} shows
    wm_type: str
    a11y_type: str
    title: str
    focused: bool

    @property
    def token(self) -> str:
        """``Window{hash u0 tag}``."""
        return window_token(self.tag)


def window_token(tag: str) -> str:
    """How WindowState.toString names a window."""
    return f"Window{{{hash_hex('w' + tag)} u0 {tag}}}"


def task_id(phone: SimPhone, package: str) -> int:
    """The task of a package's activity: the launcher's is 1, apps count up from 11."""
    if package == LAUNCHER:
        return 1
    packages = [app.package for app in phone.apps.values()]
    return 11 + (packages.index(package) if package in packages else len(packages))


def activity_record(phone: SimPhone, package: str) -> str:
    """``ActivityRecord{hash u0 pkg/.Activity tN}`` for a package's launcher activity."""
    component = short_component(package, main_activity(package))
    return f"ActivityRecord{{{hash_hex('a' + package)} u0 {component} t{task_id(phone, package)}}}"


def describe(phone: SimPhone) -> list[WindowInfo]:
    """The windows on screen, top to bottom."""
    windows = phone.windows()
    focus = active_window(windows)
    out: list[WindowInfo] = []
    for window in reversed(windows):
        focused = window is focus
        if window.kind in _SYSTEM_WINDOWS:
            tag, wm_type, a11y, title = _SYSTEM_WINDOWS[window.kind]
            out.append(WindowInfo(window, tag, wm_type, a11y, title, focused))
        elif window.kind == "overlay":
            # An overlay window without a title is named by its package, as WindowState does.
            p = window.package
            out.append(WindowInfo(window, p, "APPLICATION_OVERLAY", "TYPE_SYSTEM", p, focused))
        elif window.kind == "chooser":
            out.append(
                WindowInfo(
                    window, CHOOSER, "BASE_APPLICATION", "TYPE_APPLICATION", "Share", focused
                )
            )
        else:
            package = window.package
            tag = f"{package}/{main_activity(package)}"
            label = phone.foreground or "Home"
            out.append(
                WindowInfo(window, tag, "BASE_APPLICATION", "TYPE_APPLICATION", label, focused)
            )
    return out


def focused_window(phone: SimPhone) -> WindowInfo | None:
    """The window with input focus (an overlay takes it from the app below)."""
    return next((w for w in describe(phone) if w.focused), None)


def windows_xml(phone: SimPhone, rotation: int = 0) -> str:
    """``uiautomator dump --windows``: every window's hierarchy, top to bottom."""
    infos = describe(phone)
    parts = [HEADER, "<displays>", '<display id="0">']
    for i, info in enumerate(infos):
        left, top, right, bottom = info.window.frame
        state = "true" if info.focused else "false"
        attrs = (
            f'index="{i}" title={quoteattr(info.title)} '
            f'bounds="[{left},{top}][{right},{bottom}]" active="{state}" focused="{state}" '
            f'accessibility-focused="false" id="{100 + stable(info.tag, 900)}" '
            f'layer="{len(infos) - i}" type="{info.a11y_type}"'
        )
        hierarchy = dump(info.window, rotation)[len(HEADER) :]
        parts.append(f"<window {attrs}>{hierarchy}</window>")
    parts += ["</display>", "</displays>"]
    return "".join(parts)
