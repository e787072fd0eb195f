"""Parsing ``uiautomator dump`` output into the UI elements the simulator gives agents.

A format every layer reads: the Android backend parses its device's dumps with it, and the
judges read the dumps a run folder keeps, whichever backend wrote them (the simulated phone
writes the same XML, :mod:`ghostei.sim.hierarchy`).

Two formats exist. A plain dump (``uiautomator dump FILE``) is one window, the active one:
``<hierarchy rotation=…><node …/></hierarchy>``. Android 13 added ``--windows``, which dumps
every window of every display::

    <displays><display id="0">
      <window index="0" title="…" bounds="[l,t][r,b]" active="true" focused="true"
              accessibility-focused="false" id="…" layer="…" type="TYPE_APPLICATION">
        <hierarchy rotation="0"><node …/></hierarchy>
      </window>
      …
    </display></displays>

Android lists windows topmost first and gives each a ``layer``; we order them bottom to top,
as the simulator's element list is. The soft keyboard (``TYPE_INPUT_METHOD``) is left out, as
the simulator leaves its keys out. Elements keep what the simulator keeps: nodes with an area
that are clickable, editable, checkable or scrollable or show text or a content description.

Window names are the simulator's, whatever the backend: ``PACKAGE/Title`` for an app,
``StatusBar``, ``NavigationBar``, ``HeadsUp`` (System UI's notification window while it covers
only the top of the screen), ``NotificationShade``, ``InputMethod``, and the title (or
``PACKAGE/overlay``) of another app's system window — so agents that tell windows apart by name
behave the same on both.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace

from .observation import Bounds, UIElement

XML_HEADER = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
IME_TYPE = "TYPE_INPUT_METHOD"
APPLICATION_TYPE = "TYPE_APPLICATION"
# Classes whose nodes take typed text (uiautomator reports no ``editable`` attribute).
_EDIT_CLASSES = ("EditText", "AutoCompleteTextView", "MultiAutoCompleteTextView")
_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_HIERARCHY = re.compile(r"<hierarchy\b.*?</hierarchy>|<hierarchy\b[^>]*/>", re.DOTALL)


class DumpError(ValueError):
    """The text is not a uiautomator dump."""


SYSTEMUI = "com.android.systemui"


@dataclass(frozen=True)
class DumpWindow:
    """One window of a dump, with where its ``<hierarchy>`` sits in the dump's text."""

    name: str  # the simulator's name for the window (see the module docstring)
    title: str
    type: str
    package: str  # the package of the window's root node
    bounds: Bounds
    layer: int
    active: bool
    focused: bool
    root: ET.Element | None  # the window's <hierarchy>, None when it has no content
    text: str  # the window's hierarchy as a standalone single-window dump


@dataclass(frozen=True)
class Screen:
    """What a dump tells: elements bottom to top, the foreground app, the active window."""

    elements: list[UIElement]
    windows: list[DumpWindow]
    foreground_package: str
    keyboard_shown: bool
    active_xml: str  # the active window as ``uiautomator dump`` writes it

    @property
    def active(self) -> DumpWindow | None:
        """The window that has input focus (what a plain dump would have shown)."""
        return _active(self.windows)


def parse_bounds(value: str) -> Bounds:
    """``[l,t][r,b]`` as a tuple."""
    m = _BOUNDS.fullmatch(value.strip())
    if m is None:
        raise DumpError(f"bad bounds {value!r}")
    left, top, right, bottom = (int(g) for g in m.groups())
    return left, top, right, bottom


def parse_dump(xml: str) -> Screen:
    """Parse either dump format."""
    text = xml.strip()
    if not text.startswith("<"):
        raise DumpError(f"not a uiautomator dump: {text[:80]!r}")
    try:
        root = ET.fromstring(text.encode("utf-8"))
    except ET.ParseError as exc:
        raise DumpError(f"not a uiautomator dump: {exc}") from exc
    if root.tag == "hierarchy":
        windows = [_single_window(root, text)]
    elif root.tag in ("displays", "display", "windows"):
        windows = _windows(root, text)
    else:
        raise DumpError(f"unknown dump root <{root.tag}>")
    elements: list[UIElement] = []
    for window in windows:
        if window.type == IME_TYPE or window.root is None:
            continue
        for node in window.root.iter("node"):
            element = _element(node, len(elements), window.name)
            if element is not None:
                elements.append(element)
    active = _active(windows)
    return Screen(
        elements=elements,
        windows=windows,
        foreground_package=_foreground(windows),
        keyboard_shown=any(w.type == IME_TYPE for w in windows),
        active_xml=active.text if active is not None else XML_HEADER + _EMPTY,
    )


_EMPTY = '<hierarchy rotation="0"></hierarchy>'


def _single_window(root: ET.Element, text: str) -> DumpWindow:
    first = root.find("node")
    package = first.get("package", "") if first is not None else ""
    bounds = parse_bounds(first.get("bounds", "[0,0][0,0]")) if first is not None else (0,) * 4
    return DumpWindow(
        name=package,
        title=package,
        type=APPLICATION_TYPE,
        package=package,
        bounds=(bounds[0], bounds[1], bounds[2], bounds[3]),
        layer=0,
        active=True,
        focused=True,
        root=root,
        text=text if text.startswith("<?xml") else XML_HEADER + text,
    )


def _windows(root: ET.Element, text: str) -> list[DumpWindow]:
    # The k-th <hierarchy> element in document order is the k-th in the text: hierarchies do
    # not nest, and attribute values escape "<".
    slices = [m.group(0) for m in _HIERARCHY.finditer(text)]
    hierarchies = list(root.iter("hierarchy"))
    if len(slices) != len(hierarchies):
        raise DumpError("hierarchies in the dump do not match its text")
    position = {id(h): i for i, h in enumerate(hierarchies)}
    found: list[DumpWindow] = []
    display = root if root.tag == "display" else None
    displays = [display] if display is not None else list(root.iter("display")) or [root]
    for disp in displays:
        if disp.get("id", "0") != "0":
            continue  # agents see the default display
        found.extend(_window(w, slices, position) for w in disp.iter("window"))
    screen_height = max((w.bounds[3] for w in found), default=0)
    found = [replace(w, name=_name(w, screen_height)) for w in found]
    # Android lists the topmost window first; ties in layer keep that order, reversed.
    found.reverse()
    found.sort(key=lambda w: w.layer)
    return found


def _window(node: ET.Element, slices: list[str], position: dict[int, int]) -> DumpWindow:
    hierarchy = node.find("hierarchy")
    first = hierarchy.find("node") if hierarchy is not None else None
    text = XML_HEADER + (slices[position[id(hierarchy)]] if hierarchy is not None else _EMPTY)
    return DumpWindow(
        name="",
        title=node.get("title", ""),
        type=node.get("type", APPLICATION_TYPE),
        package=first.get("package", "") if first is not None else "",
        bounds=parse_bounds(node.get("bounds", "[0,0][0,0]")),
        layer=int(node.get("layer", "0") or 0),
        active=node.get("active") == "true",
        focused=node.get("focused") == "true",
        root=hierarchy,
        text=text,
    )


def _name(window: DumpWindow, screen_height: int) -> str:
    title, package = window.title, window.package
    if window.type == IME_TYPE:
        return "InputMethod"
    if window.type == APPLICATION_TYPE:
        return f"{package}/{title}" if package and title else package or title
    if package == SYSTEMUI or title in ("Status bar", "Navigation bar", "Notification shade"):
        low = title.casefold()
        if "status" in low:
            return "StatusBar"
        if "navigation" in low:
            return "NavigationBar"
        if "notification" in low:
            top, bottom = window.bounds[1], window.bounds[3]
            return "HeadsUp" if bottom - top < screen_height / 2 else "NotificationShade"
    return title if "/" in title else f"{package}/overlay"


def _active(windows: list[DumpWindow]) -> DumpWindow | None:
    for flag in ("active", "focused"):
        for window in reversed(windows):
            if getattr(window, flag) and window.root is not None:
                return window
    apps = [w for w in windows if w.type == APPLICATION_TYPE and w.root is not None]
    return apps[-1] if apps else None


def _foreground(windows: list[DumpWindow]) -> str:
    # The foreground app is the topmost application window; an overlay above it (a system
    # window of another package) does not change which app is in front.
    apps = [w for w in windows if w.type == APPLICATION_TYPE and w.package]
    if apps:
        return apps[-1].package
    active = _active(windows)
    return active.package if active is not None else ""


def _flag(node: ET.Element, name: str) -> bool:
    return node.get(name) == "true"


def _element(node: ET.Element, index: int, window: str) -> UIElement | None:
    bounds = parse_bounds(node.get("bounds", "[0,0][0,0]"))
    if bounds[2] <= bounds[0] or bounds[3] <= bounds[1]:
        return None
    cls = node.get("class", "")
    text = node.get("text", "")
    desc = node.get("content-desc", "")
    editable = cls.endswith(_EDIT_CLASSES)
    clickable, checkable, scrollable = (
        _flag(node, "clickable"),
        _flag(node, "checkable"),
        _flag(node, "scrollable"),
    )
    if not (clickable or editable or checkable or scrollable or text or desc):
        return None
    return UIElement(
        index=index,
        text=text,
        content_desc=desc,
        resource_id=node.get("resource-id", ""),
        class_name=cls,
        bounds=bounds,
        package=node.get("package", ""),
        window=window,
        clickable=clickable,
        long_clickable=_flag(node, "long-clickable"),
        focusable=_flag(node, "focusable"),
        focused=_flag(node, "focused"),
        checkable=checkable,
        checked=_flag(node, "checked"),
        enabled=node.get("enabled", "true") == "true",
        scrollable=scrollable,
        editable=editable,
        password=_flag(node, "password"),
        hint=node.get("hint", ""),
    )
