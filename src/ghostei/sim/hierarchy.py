"""The uiautomator-compatible XML dump (API 34 attribute set and order)."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape

from .ui import Node, is_empty
from .windows import Window

HEADER = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"


def dump(window: Window | None, rotation: int = 0) -> str:
    """The dump of one window, as ``uiautomator dump`` writes it for the active window."""
    parts = [HEADER, f'<hierarchy rotation="{rotation}">']
    if window is not None:
        _node(window.root, window.package, 0, 0, parts)
    parts.append("</hierarchy>")
    return "".join(parts)


def resource_id(node: Node, package: str) -> str:
    """A full resource id: ``android:`` ids stay, short ones get the window's package."""
    if not node.rid or ":id/" in node.rid:
        return node.rid
    return f"{package}:id/{node.rid}"


_ENTITIES = {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def quoteattr(value: str) -> str:
    """A double-quoted attribute value, escaped as Android's serializer does."""
    return '"' + escape(_NOT_XML.sub("", value), _ENTITIES) + '"'


def _b(value: bool) -> str:
    return "true" if value else "false"


def _node(node: Node, package: str, index: int, order: int, parts: list[str]) -> None:
    left, top, right, bottom = node.visible_bounds
    attrs = (
        f'index="{index}" text={quoteattr(node.text)} '
        f"resource-id={quoteattr(resource_id(node, package))} "
        f'class="{node.cls}" package="{package}" content-desc={quoteattr(node.desc)} '
        f'checkable="{_b(node.checkable)}" checked="{_b(node.checked)}" '
        f'clickable="{_b(node.clickable)}" enabled="{_b(node.enabled)}" '
        f'focusable="{_b(node.focusable)}" focused="{_b(node.focused)}" '
        f'scrollable="{_b(node.scrollable)}" long-clickable="{_b(node.long_clickable)}" '
        f'password="{_b(node.password)}" selected="{_b(node.selected)}" '
        f'bounds="[{left},{top}][{right},{bottom}]" drawing-order="{order}" '
        f"hint={quoteattr(node.hint)}"
    )
    kids = [c for c in node.children if not is_empty(c.visible_bounds)]
    if not kids:
        parts.append(f"<node {attrs} />")
        return
    parts.append(f"<node {attrs}>")
    for i, child in enumerate(kids):
        _node(child, package, i, i + 1, parts)
    parts.append("</node>")
