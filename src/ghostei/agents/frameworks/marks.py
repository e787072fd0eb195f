"""Drawing what the frameworks put on a screenshot: numeric tags, set-of-marks boxes, a grid.

Everything is drawn on a copy with the pinned Roboto font, so a labelled frame is as
deterministic as the frame itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import fontpkg.pil  # type: ignore[import-untyped]
from PIL import Image, ImageDraw, ImageFont

from ...observation import Bounds


@lru_cache(maxsize=32)
def _font(size_px: int) -> ImageFont.FreeTypeFont:
    loaded: ImageFont.FreeTypeFont = fontpkg.pil.truetype("Roboto", max(8, size_px), weight=700)
    return loaded


def _text_box(font: ImageFont.FreeTypeFont, label: str) -> tuple[int, int]:
    left, top, right, bottom = font.getbbox(label)
    return round(right - left), round(bottom - top)


def draw_tags(
    image: Image.Image, centres: Sequence[tuple[int, int]], *, dark_mode: bool = False
) -> Image.Image:
    """AppAgent's labels: the numbers 1, 2, … on half-transparent boxes at element centres."""
    base = image.convert("RGBA")
    layer = Image.new("RGBA", base.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    font = _font(round(base.width / 30))
    box_rgb, text_rgb = (
        ((255, 250, 250), (10, 10, 10)) if dark_mode else ((10, 10, 10), (255, 250, 250))
    )
    pad = max(4, base.width // 108)
    for tag, (cx, cy) in enumerate(centres, start=1):
        label = str(tag)
        w, h = _text_box(font, label)
        box = (cx - w // 2 - pad, cy - h // 2 - pad, cx + w - w // 2 + pad, cy + h - h // 2 + pad)
        draw.rectangle(box, fill=(*box_rgb, 128))
        draw.text((cx, cy), label, font=font, fill=(*text_rgb, 255), anchor="mm")
    return Image.alpha_composite(base, layer).convert("RGB")


def draw_marks(image: Image.Image, marks: Sequence[tuple[int, Bounds]]) -> Image.Image:
    """AndroidWorld's set-of-marks: a green box round each element, its index top left."""
    out = image.convert("RGB")
    draw = ImageDraw.Draw(out)
    font = _font(round(out.width / 50))
    line = max(2, out.width // 540)
    for index, (left, top, right, bottom) in marks:
        if right <= left or bottom <= top:
            continue
        draw.rectangle((left, top, right - 1, bottom - 1), outline=(0, 255, 0), width=line)
        label = str(index)
        w, h = _text_box(font, label)
        draw.rectangle((left + 1, top + 1, left + w + 8, top + h + 8), fill=(255, 255, 255))
        draw.text((left + 4, top + 4), label, font=font, fill=(0, 0, 0), anchor="lt")
    return out


def corner_label(image: Image.Image, label: str) -> Image.Image:
    """A word (``before``, ``after``) on a white patch in the bottom-right corner."""
    out = image.convert("RGB")
    draw = ImageDraw.Draw(out)
    font = _font(round(out.width / 36))
    w, h = _text_box(font, label)
    right, bottom = out.width, out.height
    draw.rectangle((right - w - 40, bottom - h - 16, right, bottom), fill=(255, 255, 255))
    draw.text((right - 20, bottom - 8), label, font=font, fill=(0, 0, 0), anchor="rb")
    return out


SUBAREAS: dict[str, tuple[int, int]] = {
    # Quarter offsets (x, y) inside a cell, in fourths of its width and height.
    "top-left": (1, 1),
    "top": (2, 1),
    "top-right": (3, 1),
    "left": (1, 2),
    "center": (2, 2),
    "right": (3, 2),
    "bottom-left": (1, 3),
    "bottom": (2, 3),
    "bottom-right": (3, 3),
}


def _unit(length: int) -> int:
    """A cell side between 120 and 180 px that divides the screen side evenly, else 120."""
    return next((n for n in range(120, 181) if length % n == 0), 120)


@dataclass(frozen=True)
class Grid:
    """AppAgent's grid: square-ish numbered cells over the screen, counted row by row from 1."""

    width: int
    height: int

    @property
    def cell(self) -> tuple[int, int]:
        """(width, height) of a cell in pixels."""
        return _unit(self.width), _unit(self.height)

    @property
    def cols(self) -> int:
        """Cells in a row."""
        return self.width // self.cell[0]

    @property
    def rows(self) -> int:
        """Rows of cells."""
        return self.height // self.cell[1]

    def point(self, area: int, subarea: str) -> tuple[int, int]:
        """The pixel of ``subarea`` in cell ``area``; raises ValueError for a bad cell."""
        if not 1 <= area <= self.rows * self.cols:
            raise ValueError(f"grid area {area} is not on the screen")
        row, col = divmod(area - 1, self.cols)
        cw, ch = self.cell
        qx, qy = SUBAREAS.get(subarea.strip().lower(), SUBAREAS["center"])
        return col * cw + cw * qx // 4, row * ch + ch * qy // 4

    def draw(self, image: Image.Image) -> Image.Image:
        """The screenshot with the grid lines and each cell's number in its top-left corner."""
        out = image.convert("RGB")
        draw = ImageDraw.Draw(out)
        cw, ch = self.cell
        font = _font(round(cw * 0.3))
        colour = (255, 116, 113)
        for row in range(self.rows):
            for col in range(self.cols):
                left, top = col * cw, row * ch
                draw.rectangle((left, top, left + cw, top + ch), outline=colour, width=2)
                label = str(row * self.cols + col + 1)
                at = (left + cw * 0.05, top + ch * 0.05)
                draw.text((at[0] + 2, at[1] + 2), label, font=font, fill=(0, 0, 0))
                draw.text(at, label, font=font, fill=colour)
        return out
