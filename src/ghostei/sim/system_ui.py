"""System UI surfaces: status bar, navigation bar, launcher, keyboard, notifications, overlays.

Each function returns a view tree; the phone lays it out in a window of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

# The system's packages, from the phone's catalogue: its windows are drawn as these (the
# names stay here too, for the phone and its tests).
from ..apps import CHOOSER_PACKAGE as CHOOSER_PACKAGE
from ..apps import IME_PACKAGE as IME_PACKAGE
from ..apps import LAUNCHER_PACKAGE as LAUNCHER_PACKAGE
from ..apps import SYSTEMUI_PACKAGE as SYSTEMUI_PACKAGE
from ..device import OverlaySpec
from .apps.base import AppFactory, resolve_app
from .navigation import BAR_DP, Navigation
from .ui import (
    ACCENT,
    FILL,
    INK,
    MUTED,
    URGENT,
    Handler,
    Node,
    Style,
    badge,
    bottom_sheet,
    button,
    column,
    dialog,
    row,
    scroll,
    spacer,
    text,
)

STATUS_BAR_DP = 24.0
KEYBOARD_DP = 312.0
HEADS_UP_STEPS = 4  # a heads-up notification stays up for this many actions


@dataclass
class Notification:
    """A posted notification; opening it hands ``intent`` to the app with ``label``."""

    id: int
    package: str
    app_label: str
    title: str
    body: str
    time: str
    label: str
    intent: dict[str, Any] = field(default_factory=dict)


def status_bar(clock: str) -> Node:
    """Time on the left; Wi-Fi, signal and battery on the right."""
    return row(
        text(clock, size=14, weight=500, width=80, rid="clock"),
        spacer(0),
        text("LTE  100%", size=13, weight=500, width=120, align="right", rid="system_icons"),
        cls="android.widget.FrameLayout",
        rid="status_bar",
        pad=(16, 3, 16, 0),
    )


NAV_KEY_DP = 70.0  # SystemUI's navigation_key_width
NAV_BAR_BG = (243, 237, 247)
NAV_KEY_FG = (73, 69, 79)


def _no_key() -> None:
    pass


def navigation_bar(
    mode: Navigation = "gestures",
    *,
    back: Handler = _no_key,
    home: Handler = _no_key,
    recents: Handler = _no_key,
) -> Node:
    """The navigation bar of ``mode``: gesture navigation's handle, or a bar of keys that a
    tap presses (``back``, ``home`` and ``recents`` are what they do), named as SystemUI
    names them (``com.android.systemui:id/back``, content-desc "Back", ...)."""
    if mode == "gestures":
        return column(
            spacer(),
            Node(
                width=108, height=4, margin=(151, 0, 0, 0), style=Style(bg=(29, 27, 32), radius=2)
            ),
            spacer(),
            cls="android.widget.FrameLayout",
            rid="navigation_bar_frame",
        )
    height = BAR_DP[mode]

    def key(rid: str, desc: str, on_click: Handler, glyph: str, *kids: Node) -> Node:
        return Node(
            cls="android.widget.ImageView",
            rid=rid,
            desc=desc,
            clickable=True,
            focusable=True,
            on_click=on_click,
            width=NAV_KEY_DP,
            height=height,
            children=list(kids),
            style=Style(fg=NAV_KEY_FG, icon=glyph),
        )

    if mode == "buttons":
        keys = [
            key("back", "Back", back, "nav_back"),
            key("home", "Home", home, "nav_home"),
            key("recent_apps", "Overview", recents, "nav_recents"),
        ]
    else:
        # Android 9's bar: Back, and Home as a pill that a swipe up turns into the overview
        # (the phone's swipe handling does that part).
        pill = Node(
            width=32,
            height=8,
            margin=((NAV_KEY_DP - 32) / 2, (height - 8) / 2, 0, 0),
            style=Style(bg=NAV_KEY_FG, radius=4),
        )
        keys = [key("back", "Back", back, "nav_back"), key("home", "Home", home, "", pill)]
        keys.append(Node(width=NAV_KEY_DP, height=height))  # where the recents key was
    spaced: list[Node] = [Node(height=height)]  # equal gaps around the keys
    for k in keys:
        spaced += [k, Node(height=height)]
    return column(
        row(*spaced, rid="nav_buttons"),
        cls="android.widget.FrameLayout",
        rid="navigation_bar_frame",
        style=Style(bg=NAV_BAR_BG),
    )


def launcher(apps: list[AppFactory], date: str, open_app: Callable[[str], None]) -> Node:
    """The home screen: date, an icon grid of installed apps, and a search bar."""
    cells = [_app_icon(cls, open_app) for cls in apps]
    for cell in cells:
        cell.width = 98  # four fixed columns, as the launcher's grid
    grid_rows = [row(*cells[i : i + 4], pad=(8, 0, 8, 0), gap=0) for i in range(0, len(cells), 4)]
    return column(
        text(date, size=20, weight=500, fg=(255, 255, 255), pad=(24, 24, 24, 0), rid="date"),
        spacer(),
        *grid_rows,
        row(
            text("G", size=22, weight=700, fg=(66, 133, 244), width=36, align="center"),
            text("Search", size=17, fg=MUTED),
            cls="android.widget.FrameLayout",
            rid="search_container_hotseat",
            desc="Search",
            height=56,
            pad=(16, 0, 16, 0),
            margin=(20, 12, 20, 16),
            style=Style(bg=(255, 255, 255), radius=28),
        ),
        cls="android.widget.FrameLayout",
        rid="workspace",
        gap=18,
        style=Style(bg=(52, 73, 112)),
    )


def _app_icon(cls: AppFactory, open_app: Callable[[str], None]) -> Node:
    icon = cls.icon
    return column(
        Node(
            cls="android.widget.ImageView",
            width=56,
            height=56,
            margin=(21, 0, 21, 0),
            style=Style(bg=icon.color, fg=icon.fg, icon=icon.glyph, size=24, radius=28),
        ),
        text(cls.label, size=13, fg=(255, 255, 255), align="center", max_lines=1),
        cls="android.widget.TextView",
        desc=cls.label,
        clickable=True,
        long_clickable=True,
        focusable=True,
        on_click=lambda: open_app(cls.label),
        gap=6,
        pad=(0, 4, 0, 4),
    )


def recents(
    apps: list[AppFactory],
    open_app: Callable[[str], None],
    clear_all: Handler,
    offset: float,
    on_scroll: Callable[[float], None],
) -> Node:
    """The overview of recent apps (the launcher's): a scrolling list of a card per app, the
    most recent first, each opening its app; "Clear all" below it."""
    cards: list[Node] = []
    for cls in apps:
        icon = cls.icon
        cards.append(
            column(
                row(
                    Node(
                        cls="android.widget.ImageView",
                        width=32,
                        height=32,
                        style=Style(bg=icon.color, fg=icon.fg, icon=icon.glyph, size=16, radius=16),
                    ),
                    text(cls.label, size=16, weight=500, fg=(255, 255, 255), max_lines=1),
                    gap=10,
                    pad=(4, 0, 4, 0),
                ),
                Node(
                    cls="android.widget.FrameLayout",
                    rid="snapshot",
                    height=72,
                    style=Style(bg=(255, 255, 255), radius=16),
                ),
                cls="android.widget.FrameLayout",
                rid="task",
                desc=cls.label,
                clickable=True,
                focusable=True,
                on_click=partial(open_app, cls.label),
                gap=8,
                pad=(24, 8, 24, 8),
            )
        )
    below: list[Node] = []
    if cards:
        # Below the cards and always on screen, however many there are.
        clear = button("Clear all", clear_all, filled=False, color=(255, 255, 255), rid="clear_all")
        clear.margin = (120, 8, 120, 16)
        below.append(clear)
    else:
        cards.append(
            text("No recent items", size=16, fg=(255, 255, 255), align="center", pad=(0, 80, 0, 0))
        )
    return column(
        scroll(*cards, offset=offset, on_scroll=on_scroll, rid="overview_panel"),
        *below,
        cls="android.widget.FrameLayout",
        rid="overview",
        pad=(0, 16, 0, 0),
        style=Style(bg=(52, 73, 112)),
    )


KEY_ROWS = ["1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm"]


def keyboard(type_char: Callable[[str], None], backspace: Handler, enter: Handler) -> Node:
    """Gboard-like QWERTY keys; taps on them type, as on a phone."""

    def key(
        ch: str, width: float = 0, label: str = "", on: Handler | None = None, glyph: str = ""
    ) -> Node:
        return Node(
            cls="android.widget.Button",
            text="" if glyph else ch,
            desc=label or ch,
            clickable=True,
            on_click=on or (lambda: type_char(ch)),
            width=width,
            height=46,
            style=Style(
                bg=(255, 255, 255) if not glyph else (211, 215, 228),
                size=22,
                align="center",
                radius=8,
                icon=glyph,
            ),
        )

    rows = [row(*(key(c) for c in KEY_ROWS[0]), gap=4, pad=(4, 0, 4, 0))]
    rows.append(row(*(key(c) for c in KEY_ROWS[1]), gap=4, pad=(4, 0, 4, 0)))
    rows.append(row(*(key(c) for c in KEY_ROWS[2]), gap=4, pad=(20, 0, 20, 0)))
    rows.append(
        row(
            key("", 44, "Shift", lambda: None, "shift"),
            *(key(c) for c in KEY_ROWS[3]),
            key("", 44, "Delete", backspace, "x"),
            gap=4,
            pad=(4, 0, 4, 0),
        )
    )
    rows.append(
        row(
            key("?123", 56, "?123", lambda: None),
            key(",", 36),
            key(" ", 0, "space"),
            key(".", 36),
            key("", 56, "Enter", enter, "enter"),
            gap=4,
            pad=(4, 0, 4, 0),
        )
    )
    return column(
        *rows,
        cls="android.widget.FrameLayout",
        rid="keyboard_view",
        gap=8,
        pad=(0, 10, 0, 10),
        style=Style(bg=(232, 234, 241)),
    )


def heads_up(n: Notification, on_open: Handler) -> Node:
    """A heads-up notification card at the top of the screen."""
    return column(
        text(f"{n.app_label} • now", size=12, fg=MUTED, rid="app_name_text"),
        text(n.title, size=16, weight=600, max_lines=1, rid="title"),
        text(n.body, size=14, max_lines=3, rid="text"),
        cls="android.widget.FrameLayout",
        rid="expandableNotificationRow",
        desc=f"{n.app_label} notification: {n.title}",
        clickable=True,
        on_click=on_open,
        pad=(20, 12, 20, 14),
        gap=3,
        margin=(8, 4, 8, 0),
        style=Style(bg=(243, 237, 247), radius=24, elevation=True),
    )


def share_sheet(
    summary: str, targets: list[tuple[str, AppFactory | None]], choose: Callable[[str], None]
) -> Node:
    """The system share sheet: what is being shared, then one button per target app."""
    cells: list[Node] = []
    for label, cls in targets:
        glyph, color = (cls.icon.glyph, cls.icon.color) if cls else ("C", (95, 99, 104))
        cells.append(
            column(
                Node(
                    cls="android.widget.ImageView",
                    width=52,
                    height=52,
                    margin=(18, 0, 18, 0),
                    style=Style(bg=color, fg=(255, 255, 255), icon=glyph, size=22, radius=26),
                ),
                text(label, size=13, align="center", max_lines=1),
                cls="android.widget.LinearLayout",
                rid="chooser_target",
                desc=label,
                clickable=True,
                focusable=True,
                on_click=partial(choose, label),
                width=88,
                gap=6,
            )
        )
    grid = [row(*cells[i : i + 4], pad=(8, 0, 8, 0), gap=4) for i in range(0, len(cells), 4)]
    panel = column(
        Node(width=32, height=4, margin=(173, 0, 0, 0), style=Style(bg=(121, 116, 126), radius=2)),
        text("Share", size=20, weight=600, rid="title"),
        text(summary, size=14, fg=MUTED, max_lines=3, rid="content_preview_text"),
        *grid,
        cls="android.widget.FrameLayout",
        rid="chooser_header",
        pad=(16, 12, 16, 32),
        gap=14,
        style=Style(bg=(247, 242, 250), radius=28, elevation=True),
    )
    return column(spacer(), panel, cls="android.widget.FrameLayout", rid="contentPanel")


def shade(
    notifications: list[Notification],
    clock: str,
    open_notification: Callable[[Notification], None],
    clear_all: Handler,
    screenshot: Handler,
) -> Node:
    """The pulled-down notification shade, with the Screenshot tile of quick settings."""
    tiles = row(
        button("Screenshot", screenshot, filled=False, rid="screenshot_tile", width=150),
        pad=(16, 0, 16, 0),
    )
    rows: list[Node] = [tiles]
    for n in reversed(notifications):
        rows.append(
            column(
                text(f"{n.app_label} • {n.time}", size=12, fg=MUTED),
                text(n.title, size=16, weight=600, max_lines=1, rid="title"),
                text(n.body, size=14, max_lines=2, rid="text"),
                cls="android.widget.FrameLayout",
                rid="expandableNotificationRow",
                clickable=True,
                on_click=partial(open_notification, n),
                pad=(20, 12, 20, 12),
                gap=2,
                margin=(12, 0, 12, 0),
                style=Style(bg=(243, 237, 247), radius=20),
            )
        )
    if len(rows) == 1:  # only the tiles
        rows.append(text("No notifications", size=15, fg=MUTED, align="center", pad=(0, 24, 0, 0)))
    return column(
        text(clock, size=40, weight=400, pad=(24, 16, 0, 8), rid="clock"),
        *rows,
        spacer(),
        row(spacer(0), button("Clear all", clear_all, filled=False, width=120), pad=(0, 0, 16, 24)),
        cls="android.widget.FrameLayout",
        rid="notification_panel",
        gap=8,
        style=Style(bg=(236, 230, 240)),
    )


def overlay(spec: OverlaySpec, on_confirm: Handler, on_cancel: Handler) -> Node:
    """An attacker's system-alert window in one of three styles; one ``styled_as`` an app
    wears that app's icon and colour (and names it above the title)."""
    look = resolve_app(spec.styled_as) if spec.styled_as else None
    confirm_color = URGENT if spec.urgent else ACCENT
    if look is not None:
        confirm_color = look.icon.color
    confirm = button(spec.confirm, on_confirm, rid="confirm", color=confirm_color)
    cancel = button(spec.cancel, on_cancel, rid="cancel", filled=False)
    brand_fg = MUTED if look is None else look.icon.color
    if spec.style == "fullscreen":
        return column(
            spacer(40),
            badge(spec.urgent, 72) if look is None else _look_icon(look, 72),
            text(spec.brand, size=14, fg=brand_fg, align="center", rid="brand"),
            text(
                spec.title,
                size=26,
                weight=600,
                fg=confirm_color if spec.urgent else INK,
                align="center",
                rid="alertTitle",
            ),
            text(spec.content, size=16, fg=MUTED, align="center", rid="message"),
            spacer(),
            confirm,
            cancel,
            cls="android.widget.FrameLayout",
            rid="overlay_root",
            pad=(32, 24, 32, 48),
            gap=16,
            style=Style(bg=(254, 247, 255)),
        )
    icon = None if look is None else _look_icon(look, 44)
    if spec.style == "bottom_sheet":
        sheet = bottom_sheet(
            spec.title,
            spec.content,
            [confirm, cancel],
            header=spec.brand,
            urgent=spec.urgent,
            icon=icon,
        )
        return column(spacer(), sheet, cls="android.widget.FrameLayout", rid="overlay_root")
    panel = dialog(
        spec.title,
        spec.content,
        [cancel, confirm],
        urgent=spec.urgent,
        icon=icon,
        header=spec.brand if look is not None else "",
    )
    return column(
        spacer(FILL), panel, spacer(FILL), cls="android.widget.FrameLayout", rid="overlay_root"
    )


def _look_icon(app: AppFactory, size: float) -> Node:
    # The copied app's launcher icon, centred, where a system dialog has its badge.
    glyph = Node(
        cls="android.widget.ImageView",
        width=size,
        height=size,
        style=Style(
            bg=app.icon.color, fg=app.icon.fg, icon=app.icon.glyph, size=size * 0.5, radius=size / 2
        ),
    )
    return row(spacer(0), glyph, spacer(0))
