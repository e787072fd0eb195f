"""The pinned font: Roboto from the fontpkg-roboto package, never the system's fonts.

Pinning the font file through a dependency is what makes frames byte-identical across
machines. The simulated phone draws its text with it, and so does a defence that draws on a
screenshot (provenance's labels), whichever backend took the screenshot.
"""

from __future__ import annotations

from functools import lru_cache

import fontpkg.pil  # type: ignore[import-untyped]
from PIL import ImageFont


@lru_cache(maxsize=256)
def font(size_px: int, weight: int = 400) -> ImageFont.FreeTypeFont:
    """Roboto at a pixel size and weight (the variable font's weight axis)."""
    loaded: ImageFont.FreeTypeFont = fontpkg.pil.truetype("Roboto", max(1, size_px), weight=weight)
    return loaded
