"""Pillow rendering of laid-out windows, in the pinned font (:mod:`ghostei.fonts`: Roboto
through the fontpkg-roboto package, never the system's fonts, so frames are byte-identical
across machines)."""

from __future__ import annotations

import math
from collections.abc import Hashable
from functools import lru_cache
from typing import Any

from PIL import Image, ImageDraw

from ..fonts import font
from .ui import Color, Layout, Measurer, Node, Rect, is_empty
from .windows import Window


class FontMeasurer(Measurer):
    """Text metrics from the pinned font, so layout wraps text exactly where it is drawn."""

    def line_height(self, size_px: float) -> float:
        return round(size_px * 1.32)

    def width(self, value: str, size_px: float, weight: int) -> float:
        return float(_text_width(value, round(size_px), weight))


@lru_cache(maxsize=8192)
def _text_width(value: str, size_px: int, weight: int) -> int:
    return round(text_length(value, size_px, weight))


@lru_cache(maxsize=16384)
def text_length(value: str, size_px: int, weight: int) -> float:
    """The advance of a line of text, as drawn; cached, since a frame measures the same
    labels as the last one (measuring was a tenth of a frame's cost)."""
    return float(font(size_px, weight).getlength(value))


MEASURER = FontMeasurer()


def draw_text(
    draw: ImageDraw.ImageDraw,
    xy: tuple[float, float],
    value: str,
    size_px: int,
    weight: int,
    fill: Color,
) -> None:
    """``draw.text`` of one line, its glyphs rasterised once per string, font and subpixel
    offset: screens redraw the same labels again and again, and FreeType's rendering was a
    tenth of a frame. The mask and its blending are Pillow's own (``getmask2`` and the
    bitmap fill ``draw.text`` ends in); a test pins the pixels to ``draw.text``'s.
    """
    x, y = xy
    start = (math.modf(x)[0], math.modf(y)[0])
    mask, (dx, dy) = _text_mask(value, size_px, weight, start)
    ink = draw._getink(fill)[0]
    draw.draw.draw_bitmap((int(x) + dx, int(y) + dy), mask, ink)


@lru_cache(maxsize=8192)
def _text_mask(
    value: str, size_px: int, weight: int, start: tuple[float, float]
) -> tuple[Any, tuple[int, int]]:
    mask, offset = font(size_px, weight).getmask2(value, "L", anchor="la", start=start)
    return mask, offset


BACKGROUND: Color = (254, 247, 255)
SCRIM = (0, 0, 0, 110)


def make_layout(density: float) -> Layout:
    """The layout engine with the pinned font's metrics."""
    return Layout(density, MEASURER)


class Renderer:
    """Draws windows bottom to top onto one RGB frame."""

    def __init__(self, width: int, height: int, density: float) -> None:
        self.width = width
        self.height = height
        self.density = density

    def render(self, windows: list[Window]) -> Image.Image:
        """The frame for windows ordered bottom to top."""
        img = Image.new("RGB", (self.width, self.height), BACKGROUND)
        for window in windows:
            self.draw_window(img, window)
        return img

    def draw_window(self, img: Image.Image, window: Window) -> None:
        """Draw one window onto what is beneath it."""
        if window.scrim:
            ImageDraw.Draw(img, "RGBA").rectangle((0, 0, self.width, self.height), fill=SCRIM)
        if window.background is not None:
            ImageDraw.Draw(img).rectangle(_box(window.frame), fill=window.background)
        self._draw(img, window.root, 0, 0)

    def _draw(self, img: Image.Image, node: Node, dx: int, dy: int) -> None:
        if is_empty(node.visible_bounds) and node.bounds != (0, 0, 0, 0):
            return
        if node.cls in ("android.widget.ScrollView", "android.webkit.WebView") and node.children:
            self._draw_scroll(img, node, dx, dy)
            return
        draw = ImageDraw.Draw(img)
        self._paint(draw, node, dx, dy)
        for child in node.children:
            self._draw(img, child, dx, dy)

    def _draw_scroll(self, img: Image.Image, node: Node, dx: int, dy: int) -> None:
        # Content is drawn on its own canvas so rows scrolled half out of view are clipped.
        left, top, right, bottom = node.bounds
        w, h = right - left, bottom - top
        if w <= 0 or h <= 0:
            return
        canvas = Image.new("RGB", (w, h), node.style.bg or _sample(img, left + dx, top + dy))
        for child in node.children:
            self._draw(canvas, child, dx - left, dy - top)
        img.paste(canvas, (left + dx, top + dy))
        if node.scrollable:  # a thin scrollbar, as Android shows while content overflows
            total = max(node.content_height * self.density, 1)
            bar_h = max(24, int(h * h / total))
            bar_y = int((h - bar_h) * (node.scroll_offset * self.density) / max(1, total - h))
            ImageDraw.Draw(img).rounded_rectangle(
                (right + dx - 8, top + dy + bar_y, right + dx - 4, top + dy + bar_y + bar_h),
                2,
                fill=(190, 184, 196),
            )

    def _paint(self, draw: ImageDraw.ImageDraw, node: Node, dx: int, dy: int) -> None:
        s = node.style
        box = _box(_offset(node.bounds, dx, dy))
        radius = round(s.radius * self.density)
        if s.elevation:
            shadow = (box[0] + 2, box[1] + 6, box[2] + 2, box[3] + 6)
            draw.rounded_rectangle(shadow, radius, fill=(120, 116, 126))
        if s.bg is not None or s.border is not None or node.focused:
            border = (103, 80, 164) if node.focused and node.editable else s.border
            width = 0 if border is None else (5 if node.focused else 3)
            draw.rounded_rectangle(box, radius, fill=s.bg, outline=border, width=width)
        if s.icon:
            self._icon(draw, node, box)
        if (node.lines or (node.editable and node.hint)) and s.icon != "switch":
            self._text(draw, node, box)
        if node.focused and node.editable:
            x = box[0] + round(node.pad[0] * self.density)
            if node.lines and node.text:
                size_px = round(s.size * self.density)
                line = self._fitted(node, node.lines[-1], box, size_px)
                x += round(text_length(line, size_px, s.weight))
            cy = (box[1] + box[3]) // 2
            half = round(s.size * self.density * 0.6)
            draw.line((x + 2, cy - half, x + 2, cy + half), fill=(103, 80, 164), width=3)

    def _text(self, draw: ImageDraw.ImageDraw, node: Node, box: tuple[int, int, int, int]) -> None:
        s = node.style
        size_px = round(s.size * self.density)
        lines = node.lines
        color = s.fg
        if node.editable and not node.text:
            lines, color = [node.hint], (121, 116, 126)
        line_h = MEASURER.line_height(size_px)
        left = box[0] + round(node.pad[0] * self.density)
        right = box[2] - round(node.pad[2] * self.density)
        block = line_h * len(lines)
        top = box[1] + node.pad[1] * self.density
        if node.height > 0:  # fixed-height controls centre their text vertically
            top = box[1] + ((box[3] - box[1]) - block) / 2
        for i, line in enumerate(lines):
            line = self._fitted(node, line, box, size_px)
            width = text_length(line, size_px, s.weight)
            if s.align == "center":
                x = left + (right - left - width) / 2
            elif s.align == "right":
                x = right - width
            else:
                x = left
            draw_text(draw, (round(x), round(top + i * line_h)), line, size_px, s.weight, color)

    def _fitted(self, node: Node, line: str, box: tuple[int, int, int, int], size_px: int) -> str:
        """What a one-line field shows of a value wider than itself, as Android's EditText
        scrolls it: the start while it is not focused (Chrome's omnibox shows the host), the
        end, where the cursor is, while it is. Every other text is wrapped by the layout."""
        if not (node.editable and node.height > 0) or not line:
            return line
        room = (box[2] - box[0]) - round((node.pad[0] + node.pad[2]) * self.density) - 8
        weight = node.style.weight
        if text_length(line, size_px, weight) <= room:
            return line
        if node.focused:
            cut = 0
            while cut < len(line) - 1 and text_length(line[cut:], size_px, weight) > room:
                cut += 1
            return line[cut:]
        cut = len(line)
        while cut > 1 and text_length(line[:cut], size_px, weight) > room:
            cut -= 1
        return line[:cut]

    def _icon(self, draw: ImageDraw.ImageDraw, node: Node, box: tuple[int, int, int, int]) -> None:
        glyph = node.style.icon
        fg = node.style.fg
        x0, y0, x1, y1 = box
        cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
        r = max(4, min(x1 - x0, y1 - y0) // 2)
        lw = max(3, round(2 * self.density))
        if glyph == "switch":
            thumb = r - 6
            tx = x1 - r if node.checked else x0 + r
            draw.ellipse(
                (tx - thumb, cy - thumb, tx + thumb, cy + thumb),
                fill=(255, 255, 255) if node.checked else (121, 116, 126),
            )
        elif glyph == "<":
            k = r // 2
            draw.line((cx - k, cy, cx + k, cy), fill=fg, width=lw)
            draw.line((cx - k, cy, cx, cy - k), fill=fg, width=lw)
            draw.line((cx - k, cy, cx, cy + k), fill=fg, width=lw)
        elif glyph == "send":
            k = r // 2
            draw.polygon(
                [(cx - k, cy - k), (cx + k, cy), (cx - k, cy + k), (cx - k // 3, cy)], fill=fg
            )
        elif glyph == "search":
            k = r // 3
            draw.ellipse((cx - k - 4, cy - k - 4, cx + k - 4, cy + k - 4), outline=fg, width=lw)
            draw.line((cx + k - 8, cy + k - 8, cx + k + 6, cy + k + 6), fill=fg, width=lw)
        elif glyph == "+":
            k = r // 2
            draw.line((cx - k, cy, cx + k, cy), fill=fg, width=lw)
            draw.line((cx, cy - k, cx, cy + k), fill=fg, width=lw)
        elif glyph == "x":
            k = r // 3
            draw.line((cx - k, cy - k, cx + k, cy + k), fill=fg, width=lw)
            draw.line((cx - k, cy + k, cx + k, cy - k), fill=fg, width=lw)
        elif glyph == "!" and node.style.bg is None:
            k = r // 2
            draw.polygon([(cx, cy - k), (cx + k, cy + k), (cx - k, cy + k)], outline=fg, width=lw)
            draw.line((cx, cy - k // 3, cx, cy + k // 3), fill=fg, width=lw)
        elif glyph == "shift":
            k = r // 3
            draw.polygon([(cx, cy - k), (cx + k, cy), (cx - k, cy)], outline=fg, width=lw)
            draw.rectangle((cx - k // 2, cy, cx + k // 2, cy + k), outline=fg, width=lw)
        elif glyph == "enter":
            k = r // 3
            draw.line((cx + k, cy - k, cx + k, cy), fill=fg, width=lw)
            draw.line((cx - k, cy, cx + k, cy), fill=fg, width=lw)
            draw.line((cx - k, cy, cx - k // 2, cy - k // 2), fill=fg, width=lw)
            draw.line((cx - k, cy, cx - k // 2, cy + k // 2), fill=fg, width=lw)
        elif glyph == "chart":  # a price line over the panel (a chart view)
            xs = [x0 + (x1 - x0) * i // 8 for i in range(9)]
            ys = [y0 + (y1 - y0) * k // 100 for k in (70, 60, 68, 45, 52, 34, 41, 26, 30)]
            draw.line(list(zip(xs, ys, strict=True)), fill=fg, width=lw, joint="curve")
        elif glyph == "menu":
            k = r // 2
            for off in (-k // 2, 0, k // 2):
                draw.line((cx - k, cy + off, cx + k, cy + off), fill=fg, width=lw)
        elif glyph == "chrome":
            draw.ellipse((x0, y0, x1, y1), fill=(219, 68, 55))
            draw.pieslice((x0, y0, x1, y1), 30, 150, fill=(15, 157, 88))
            draw.pieslice((x0, y0, x1, y1), 150, 270, fill=(244, 180, 0))
            inner = r // 2
            draw.ellipse(
                (cx - inner - 5, cy - inner - 5, cx + inner + 5, cy + inner + 5),
                fill=(255, 255, 255),
            )
            draw.ellipse((cx - inner, cy - inner, cx + inner, cy + inner), fill=(66, 133, 244))
        elif glyph == "gear":
            k = int(r * 0.55)
            for a in range(0, 360, 45):
                draw.regular_polygon((cx, cy, k + 6), 4, rotation=a, fill=fg)
            draw.ellipse((cx - k, cy - k, cx + k, cy + k), fill=fg)
            draw.ellipse(
                (cx - k // 2, cy - k // 2, cx + k // 2, cy + k // 2),
                fill=node.style.bg or (95, 99, 104),
            )
        elif glyph == "bubble":
            k = int(r * 0.5)
            draw.rounded_rectangle((cx - k, cy - k, cx + k, cy + k // 2), k // 3, fill=fg)
            draw.polygon(
                [(cx - k // 2, cy + k // 2 - 2), (cx - k // 2, cy + k), (cx, cy + k // 2 - 2)],
                fill=fg,
            )
        elif glyph in ("heart", "heart_outline"):  # a wishlist heart, filled once saved
            k = int(r * 0.5)
            lobes = [(cx - k, cy - k // 2), (cx - k // 10, cy - k // 2)]
            tip = [(cx - k + 1, cy - k // 6), (cx + k - 1, cy - k // 6), (cx, cy + k)]
            if glyph == "heart":
                for lx, ly in lobes:
                    draw.ellipse((lx, ly - k // 2, lx + k + k // 10, ly + k // 2), fill=fg)
                draw.polygon(tip, fill=fg)
            else:
                for (lx, ly), (start, end) in zip(lobes, ((150, 360), (180, 30)), strict=True):
                    draw.arc((lx, ly - k // 2, lx + k, ly + k // 2), start, end, fill=fg, width=lw)
                draw.line([tip[0], tip[2], tip[1]], fill=fg, width=lw)
        elif glyph == "person":
            k = int(r * 0.28)
            draw.ellipse((cx - k, cy - 2 * k, cx + k, cy), fill=fg)
            draw.pieslice((cx - 2 * k, cy + k // 2, cx + 2 * k, cy + 4 * k), 180, 360, fill=fg)
        elif glyph in ("star", "star_outline"):  # Gmail's star, filled once starred
            k = int(r * 0.6)
            points = [
                (
                    cx + (k if i % 2 == 0 else k * 0.4) * math.sin(math.pi * i / 5),
                    cy - (k if i % 2 == 0 else k * 0.4) * math.cos(math.pi * i / 5),
                )
                for i in range(10)
            ]
            if glyph == "star":
                draw.polygon(points, fill=fg)
            else:
                draw.polygon(points, outline=fg, width=max(2, lw - 1))
        elif glyph == "more":  # an overflow menu's three dots
            k = max(2, lw // 2 + 1)
            for off in (-r // 3, 0, r // 3):
                draw.ellipse((cx - k, cy + off - k, cx + k, cy + off + k), fill=fg)
        elif glyph == "trash":  # a bin: lid, handle, body
            k = r // 2
            draw.line((cx - k, cy - k // 2, cx + k, cy - k // 2), fill=fg, width=lw)
            draw.rectangle((cx - k // 4, cy - k, cx + k // 4, cy - k // 2), outline=fg, width=lw)
            draw.rectangle((cx - k + 3, cy - k // 2, cx + k - 3, cy + k), outline=fg, width=lw)
        elif glyph == "archive":  # a box with a lid and a down arrow
            k = r // 2
            draw.rectangle((cx - k, cy - k, cx + k, cy - k // 2), outline=fg, width=lw)
            draw.rectangle((cx - k + 2, cy - k // 2, cx + k - 2, cy + k), outline=fg, width=lw)
            draw.line((cx, cy - k // 4, cx, cy + k // 2), fill=fg, width=lw)
        elif glyph == "check":  # a tick (a selected item in a picker)
            k = r // 2
            tick = [(cx - k, cy), (cx - k // 3, cy + k * 2 // 3), (cx + k, cy - k // 2)]
            draw.line(tick, fill=fg, width=lw, joint="curve")
        elif glyph in ("nav_back", "nav_home", "nav_recents"):  # the navigation bar's keys
            k = round(r * 0.36)
            if glyph == "nav_back":
                points = [(cx - k, cy), (cx + k * 3 // 4, cy - k), (cx + k * 3 // 4, cy + k)]
                draw.polygon(points, outline=fg, width=lw)
            elif glyph == "nav_home":
                draw.ellipse((cx - k, cy - k, cx + k, cy + k), outline=fg, width=lw)
            else:
                k = k * 4 // 5
                draw.rounded_rectangle((cx - k, cy - k, cx + k, cy + k), 3, outline=fg, width=lw)
        elif glyph:
            size_px = max(8, round(node.style.size * self.density))
            w = text_length(glyph, size_px, 700)
            draw_text(draw, (cx - w / 2, cy - size_px * 0.62), glyph, size_px, 700, fg)


def paint_key(window: Window) -> Hashable:
    """Everything :meth:`Renderer.draw_window` reads of a window: equal keys, equal pixels.

    Kept beside the drawing code so the two change together; a field the renderer starts to
    read must join the key, or the compositor would paste a stale surface (the compositor's
    test compares it with full redraws on every built-in case).
    """
    return (window.frame, window.scrim, window.background, _node_key(window.root))


def _node_key(node: Node) -> Hashable:
    return (
        node.cls,
        node.bounds,
        node.clip,
        node.style,
        tuple(node.lines),
        node.hint if node.editable else "",
        bool(node.text),
        node.editable,
        node.focused,
        node.checked,
        node.pad,
        node.height,
        node.scrollable,
        node.scroll_offset,
        node.content_height,
        tuple(_node_key(child) for child in node.children),
    )


def _sample(img: Image.Image, x: int, y: int) -> tuple[int, int, int]:
    px = img.getpixel((min(max(x, 0), img.width - 1), min(max(y, 0), img.height - 1)))
    assert isinstance(px, tuple)
    return (int(px[0]), int(px[1]), int(px[2]))


def _offset(r: Rect, dx: int, dy: int) -> Rect:
    return (r[0] + dx, r[1] + dy, r[2] + dx, r[3] + dy)


def _box(r: Rect) -> tuple[int, int, int, int]:
    # PIL boxes are inclusive; bounds are half-open like Android's.
    return (r[0], r[1], max(r[0], r[2] - 1), max(r[1], r[3] - 1))
