"""What a device shows an agent: UI elements, the uiautomator XML, and a screenshot on demand."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xxhash
from isal import isal_zlib
from PIL import Image

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


# Frames are deflated by ISA-L (the isal package) at its level 1: on a 1080x2400 frame
# (7.8 MB of rows) it takes about 1.5 ms against zlib level 1's ~28 ms, for about the same
# size (124 KB against 122 KB on average over the default run's frames; libdeflate took
# 16 ms for 98 KB, zlib-ng level 1 wrote 45 % more; benchmarks/bench_phone.py compares them).
# Any standard PNG reader reads it. ISA-L's output for the same rows is not always the same
# bytes (it varied between the worker processes of one run), which is why a frame is named by
# its pixels (:func:`encode_frame`), never by its PNG bytes.
PNG_COMPRESS_LEVEL = 1


def encode_frame(image: Image.Image) -> tuple[bytes, str]:
    """A frame as PNG, and its name: a 128-bit hash of its size and pixels (xxh3).

    Pillow's encoder spends much of its time choosing a filter for every row; screen frames
    (flat colours, text) compress as well with no filter at all, so we write the PNG
    ourselves: rows with filter byte 0, one deflate stream, the three chunks PNG requires.
    Hashing the rows costs 0.2 ms where a SHA-256 of them took 4.7.
    """
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    width, height = rgb.size
    # Each row behind its filter byte (0), in one copy rather than a Python loop over rows;
    # the deflater and the hash read the array in place.
    rows = np.empty((height, width * 3 + 1), np.uint8)
    rows[:, 0] = 0
    rows[:, 1:] = np.asarray(rgb).reshape(height, width * 3)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    name = xxhash.xxh3_128(header)
    name.update(rows.data)
    png = b"".join(
        (
            b"\x89PNG\r\n\x1a\n",
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", isal_zlib.compress(rows, PNG_COMPRESS_LEVEL)),
            _chunk(b"IEND", b""),
        )
    )
    return png, name.hexdigest()


def encode_png(image: Image.Image) -> bytes:
    """A frame as PNG (see :func:`encode_frame`)."""
    return encode_frame(image)[0]


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


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
