"""What a device shows an agent: UI elements, the uiautomator XML, and a screenshot on demand."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PIL import Image

from .png import encode_frame, encode_png

if TYPE_CHECKING:
    from .actions import Action

__all__ = ["Bounds", "Observation", "UIElement", "encode_frame", "encode_png", "touch_point"]

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


def touch_point(action: Action, elements: Sequence[UIElement]) -> tuple[int, int] | None:
    """Where a device touches the screen for ``action``: its pixel (for a swipe or a drag,
    where the finger starts), else the centre of the element at its index; None for neither,
    or an index no element has. Both backends and the defences resolve a target with it."""
    if action.x is not None and action.y is not None:
        return action.x, action.y
    if action.index is not None and 0 <= action.index < len(elements):
        return elements[action.index].center
    return None


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
    # The elements as a model is to be shown them, where an observation defence marked their
    # text (same indices and bounds); None: as ``elements``. Agents act on ``elements``, which
    # a defence never rewrites, so what an agent matches on and hit-tests stays the device's.
    shown: list[UIElement] | None = field(default=None, repr=False)

    # Computed on first use and kept. Not functools.cached_property: on Python 3.11 it holds
    # one lock per property across *all* instances, so a render that waits on another
    # thread's observation (a served phone answering adb in-process) would deadlock.
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def for_model(self) -> list[UIElement]:
        """The elements a prompt lists: as observation defences marked them (``shown``), else
        ``elements``. Prompt builders read these; acting, matching and hit-testing never do."""
        return self.elements if self.shown is None else self.shown

    def element_at(self, x: int, y: int) -> UIElement | None:
        """The element a tap at (x, y) lands on: the last listed whose bounds hold the point
        (elements are listed bottom window first, parents before children)."""
        for element in reversed(self.elements):
            left, top, right, bottom = element.bounds
            if left <= x < right and top <= y < bottom:
                return element
        return None

    def target(self, action: Action) -> UIElement | None:
        """The element a touch of ``action`` lands on: the topmost at its :func:`touch_point`
        (None: no point, or nothing there). An index stands for its element's centre, as on
        the device, so a window drawn over that centre is what is touched."""
        point = touch_point(action, self.elements)
        return None if point is None else self.element_at(*point)

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
