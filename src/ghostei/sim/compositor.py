"""Frames composed from per-window surfaces, the way Android's compositor builds a screen.

Each window keeps the pixels it last drew (its *surface*, a crop of its frame) under a key of
everything that decided them: its laid-out subtree (:func:`render.paint_key`) and, for a
window that does not cover its frame with an opaque colour (the status bar's clock over the
app, a dialog's scrim), the keys of the windows beneath it. A frame is the windows' surfaces
pasted bottom to top; only a window whose key is new is drawn, onto the composition as it
stands at that window's place in the z-order. That is exactly what a full redraw does at that
point, so the frame is byte-identical to :meth:`render.Renderer.render` (a test compares the
two on every built-in case).

Most steps change one window, or none (an agent waiting, a tap on nothing): the activity
under a new clock is pasted, not drawn; an unchanged screen is not even composed again, and
its PNG is not encoded again. The caches are per process and shared by every phone of the
same screen, since the episodes of a run revisit the same screens (the home screen, a case's
first screen for each agent). Access is locked: episodes may run in threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import cast

from PIL import Image

from ..observation import encode_frame
from .render import BACKGROUND, Renderer, paint_key
from .ui import is_empty
from .windows import Window

# Surfaces kept per process, by bytes: about eight full-screen layers of a 1080x2400 phone.
SURFACE_BUDGET = 64 << 20
# Encoded frames kept per process: a few hundred screens at ~150 kB.
PNG_BUDGET = 48 << 20


class _LRU:
    """A least-recently-used map bounded by the total size of its values."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self.items: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()

    def get(self, key: Hashable) -> object | None:
        hit = self.items.get(key)
        if hit is None:
            return None
        self.items.move_to_end(key)
        return hit[0]

    def put(self, key: Hashable, value: object, size: int) -> None:
        if size > self.budget:
            return
        old = self.items.pop(key, None)
        if old is not None:
            self.used -= old[1]
        self.items[key] = (value, size)
        self.used += size
        while self.used > self.budget:
            _, (_, freed) = self.items.popitem(last=False)
            self.used -= freed


class Compositor:
    """Composes frames for one screen size and density from cached window surfaces."""

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer
        self._lock = threading.Lock()
        # A window's paint key, interned: composite keys are then tuples of small ints, cheap
        # to hash and compare, however deep the trees behind them.
        self._ids: dict[Hashable, int] = {}
        self._next_id = 0
        self._surfaces = _LRU(SURFACE_BUDGET)
        self._pngs = _LRU(PNG_BUDGET)

    def frame_key(self, windows: list[Window]) -> tuple[int, ...]:
        """What decides the frame's pixels, as one small key (equal keys: equal frames)."""
        with self._lock:
            if len(self._ids) > 200_000:  # a long-lived process: start the caches afresh
                self._ids.clear()
                self._surfaces = _LRU(SURFACE_BUDGET)
                self._pngs = _LRU(PNG_BUDGET)
            ids = []
            for window in windows:
                key = paint_key(window)
                found = self._ids.get(key)
                if found is None:
                    # Never reused, not even after the caches start afresh: a key taken before
                    # (by a thread still composing) can only miss, never find another's surface.
                    found = self._ids[key] = self._next_id
                    self._next_id += 1
                ids.append(found)
            return tuple(ids)

    def render(self, windows: list[Window], key: tuple[int, ...] | None = None) -> Image.Image:
        """The frame of ``windows`` (bottom to top), identical to a full redraw."""
        key = self.frame_key(windows) if key is None else key
        r = self.renderer
        img: Image.Image | None = None
        for i, window in enumerate(windows):
            # An opaque window's pixels depend on nothing beneath it; the others' do.
            own = (key[i],) if _opaque(window, first=i == 0) else key[: i + 1]
            with self._lock:
                surface = self._surfaces.get(own)
            if img is None:
                if isinstance(surface, Image.Image) and window.frame == (0, 0, r.width, r.height):
                    img = surface.copy()
                    continue
                img = Image.new("RGB", (r.width, r.height), BACKGROUND)
            box = _clamped(window.frame, r.width, r.height)
            if isinstance(surface, Image.Image):
                img.paste(surface, box[:2])
                continue
            r.draw_window(img, window)
            crop = img.crop(box)
            with self._lock:
                self._surfaces.put(own, crop, crop.width * crop.height * 3)
        if img is None:
            img = Image.new("RGB", (r.width, r.height), BACKGROUND)
        return img

    def frame(self, windows: list[Window], image: Image.Image | None = None) -> tuple[bytes, str]:
        """The frame as PNG with its name; a screen seen lately in this process is not
        encoded again (``image``: the frame, if it was already rendered)."""
        key = self.frame_key(windows)
        with self._lock:
            found = self._pngs.get(key)
        if isinstance(found, tuple):
            return cast(tuple[bytes, str], found)
        frame = encode_frame(image if image is not None else self.render(windows, key))
        with self._lock:
            self._pngs.put(key, frame, len(frame[0]))
        return frame


def _opaque(window: Window, *, first: bool) -> bool:
    # Whether the window covers its whole frame with opaque colour before drawing anything
    # else, so that what lies beneath cannot show through. The bottom window is drawn on the
    # constant background, which amounts to the same.
    if window.scrim:
        return False
    if first or window.background is not None:
        return True
    root = window.root
    return (
        root.style.bg is not None
        and root.style.radius == 0
        and not root.style.elevation
        and root.bounds == window.frame
        and not is_empty(root.visible_bounds)
    )


def _clamped(
    frame: tuple[int, int, int, int], width: int, height: int
) -> tuple[int, int, int, int]:
    left, top, right, bottom = frame
    return (max(0, left), max(0, top), min(width, right), min(height, bottom))


_COMPOSITORS: dict[tuple[int, int, float], Compositor] = {}
_COMPOSITORS_LOCK = threading.Lock()


def compositor_for(width: int, height: int, density: float) -> Compositor:
    """The process's compositor for a screen: phones of one size share their surfaces."""
    with _COMPOSITORS_LOCK:
        found = _COMPOSITORS.get((width, height, density))
        if found is None:
            found = _COMPOSITORS[(width, height, density)] = Compositor(
                Renderer(width, height, density)
            )
        return found
