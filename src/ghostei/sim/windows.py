"""Windows as the window manager stacks them; a tap goes to the topmost one containing it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .ui import Color, Node, Rect, hit

WindowKind = Literal[
    "status_bar",
    "activity",
    "chooser",
    "overlay",
    "heads_up",
    "shade",
    "keyboard",
    "navigation_bar",
]


@dataclass
class Window:
    """A laid-out window. ``focusable`` windows can hold input focus (and so the dump)."""

    name: str
    kind: WindowKind
    package: str
    root: Node
    frame: Rect
    focusable: bool = False
    scrim: bool = False  # dims the windows below (modal dialogs)
    background: Color | None = None
    title: str = ""

    def contains(self, x: int, y: int) -> bool:
        """Whether a touch at (x, y) lands in this window."""
        return hit(self.frame, x, y)


def topmost_at(windows: list[Window], x: int, y: int) -> Window | None:
    """The window that receives a touch at (x, y): the highest one whose frame contains it."""
    for window in reversed(windows):
        if window.contains(x, y):
            return window
    return None


def active_window(windows: list[Window]) -> Window | None:
    """The window uiautomator dumps: the topmost focusable one."""
    for window in reversed(windows):
        if window.focusable:
            return window
    return None


def target_at(root: Node, x: int, y: int) -> Node | None:
    """The deepest actionable node under (x, y), as Android's touch dispatch finds it."""
    found: Node | None = None

    def visit(node: Node) -> None:
        nonlocal found
        if not hit(node.visible_bounds, x, y):
            return
        if node.enabled and (node.clickable or node.editable or node.checkable or node.scrollable):
            found = node
        for child in node.children:
            visit(child)

    visit(root)
    return found
