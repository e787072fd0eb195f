"""What a device shows an agent: UI elements, the uiautomator XML, and a screenshot on demand."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PIL import Image

from .png import encode_frame, encode_png

if TYPE_CHECKING:
    from .actions import Action

__all__ = ["Bounds", "Observation", "UIElement", "encode_frame", "encode_png"]

Bounds = tuple[int, int, int, int]


@dataclass(frozen=True)
class UIElement:
    """One element of the accessibility forest, every window included."""

    index: int
    text: str
    content_desc: str
    resource_id: str
    class_name: str
    bounds: Bounds
    package: str
    window: str
    clickable: bool = False
    long_clickable: bool = False
    focusable: bool = False
    focused: bool = False
    checkable: bool = False
    checked: bool = False
    enabled: bool = True
    scrollable: bool = False
    editable: bool = False
    password: bool = False
    hint: str = ""

    @property
    def center(self) -> tuple[int, int]:
        """The point a tap on this element goes to."""
        left, top, right, bottom = self.bounds
        return (left + right) // 2, (top + bottom) // 2

    @property
    def label(self) -> str:
        """The most telling name of the element: its text, else content-desc, else hint."""
        return self.text or self.content_desc or self.hint


@dataclass
class Observation:
    """One moment of the device. The screenshot and XML are produced only when asked for."""

    width: int
    height: int
    elements: list[UIElement]
    foreground_package: str
    keyboard_shown: bool
    step: int
    render: Callable[[], Image.Image] = field(repr=False)
    dump_xml: Callable[[], str] = field(repr=False)
    # How the frame becomes PNG and its name, given the screenshot if it was already
    # rendered; by default :func:`encode_frame` here. The simulated phone passes its
    # compositor's, which remembers both for every screen it composed lately.
    encode: Callable[[Image.Image | None], tuple[bytes, str]] | None = field(
        default=None, repr=False
    )
    # Whether ``render`` still draws this moment after the device acts again (the simulated
    # phone's observations hold their laid-out windows; a real device's screen moves on).
    lasting: bool = True

    # Computed on first use and kept. Not functools.cached_property: on Python 3.11 it holds
    # one lock per property across *all* instances, so a render that waits on another
    # thread's observation (a served phone answering adb in-process) would deadlock.
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def element_at(self, x: int, y: int) -> UIElement | None:
        """The element a tap at (x, y) lands on: the last listed whose bounds hold the point
        (elements are listed bottom window first, parents before children)."""
        for element in reversed(self.elements):
            left, top, right, bottom = element.bounds
            if left <= x < right and top <= y < bottom:
                return element
        return None

    def target(self, action: Action) -> UIElement | None:
        """The element an action acts on: by index, or at its point (None: no element)."""
        if action.index is not None:
            return self.elements[action.index] if 0 <= action.index < len(self.elements) else None
        if action.x is not None and action.y is not None:
            return self.element_at(action.x, action.y)
        return None

    @property
    def screenshot(self) -> Image.Image:
        """The frame as a PIL image (RGB)."""
        if "screenshot" not in self._cache:
            self._cache["screenshot"] = self.render()
        image: Image.Image = self._cache["screenshot"]
        return image

    @property
    def png(self) -> bytes:
        """The frame as PNG bytes."""
        return self.frame[0]

    @property
    def frame(self) -> tuple[bytes, str]:
        """The frame as PNG bytes, and the name it is stored under (a hash of its pixels)."""
        if "frame" not in self._cache:
            if self.encode is None:
                self._cache["frame"] = encode_frame(self.screenshot)
            else:
                self._cache["frame"] = self.encode(self._cache.get("screenshot"))
        frame: tuple[bytes, str] = self._cache["frame"]
        return frame

    @property
    def xml(self) -> str:
        """The uiautomator dump of the active window."""
        if "xml" not in self._cache:
            self._cache["xml"] = self.dump_xml()
        text: str = self._cache["xml"]
        return text

    def frame_later(self) -> Callable[[], tuple[bytes, str]]:
        """A way to produce :attr:`frame` later that does not hold on to a screenshot."""
        if "frame" in self._cache or not self.lasting:
            frame = self.frame
            return lambda: frame
        render, encode = self.render, self.encode
        if encode is not None:
            return lambda: encode(None)
        return lambda: encode_frame(render())

    def xml_later(self) -> Callable[[], str]:
        """A way to produce the dump later (fetched now where the device moves on)."""
        if "xml" in self._cache or not self.lasting:
            text = self.xml
            return lambda: text
        return self.dump_xml

    def windows(self) -> list[str]:
        """Window names present, bottom to top."""
        seen: list[str] = []
        for element in self.elements:
            if element.window not in seen:
                seen.append(element.window)
        return seen
