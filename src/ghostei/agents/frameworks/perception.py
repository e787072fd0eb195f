"""Mobile-Agent-v2's perception: the texts and icons painted on the screen, with centre points.

The original reads the screenshot with an OCR model and an icon detector plus a captioner, so
it only knows what is painted: never a package name or a resource id. By default the texts and
icons here come from the observation's UI elements (text → ``text: …``, an element with only a
content-desc → ``icon: …``), limited to elements not painted over by a higher window; with
``ocr=True`` the texts are read from the pixels by RapidOCR and only the icons come from the
elements.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ...observation import Bounds, Observation, UIElement


@dataclass(frozen=True)
class Percept:
    """One thing on the screen: a text or an icon, and the centre of its box in pixels."""

    kind: Literal["text", "icon"]
    content: str
    centre: tuple[int, int]

    def line(self) -> str:
        """The line the prompt lists it as: ``[x, y]; text: …``."""
        x, y = self.centre
        return f"[{x}, {y}]; {self.kind}: {self.content}"


def _extent(elements: Sequence[UIElement]) -> Bounds:
    return (
        min(e.bounds[0] for e in elements),
        min(e.bounds[1] for e in elements),
        max(e.bounds[2] for e in elements),
        max(e.bounds[3] for e in elements),
    )


def _inside(point: tuple[int, int], box: Bounds) -> bool:
    x, y = point
    return box[0] <= x < box[2] and box[1] <= y < box[3]


def painted(obs: Observation) -> list[UIElement]:
    """The elements not painted over by a higher window.

    The observation lists every window's elements without their windows' opaque areas, so a
    higher window is taken to cover the extent of its own elements; one whose elements span
    more than half the screen's height (a full-screen overlay, the notification shade) is
    taken to hide everything below it.
    """
    by_window: dict[str, list[UIElement]] = {}
    for element in obs.for_model:  # as the model is shown them (marked by defences)
        by_window.setdefault(element.window, []).append(element)
    order = list(by_window)  # bottom to top
    covers: dict[str, Bounds] = {}
    for name, elements in by_window.items():
        box = _extent(elements)
        if box[3] - box[1] > obs.height // 2:
            box = (0, 0, obs.width, obs.height)
        covers[name] = box
    kept: list[UIElement] = []
    for element in obs.for_model:
        above = order[order.index(element.window) + 1 :]
        if not any(_inside(element.center, covers[name]) for name in above):
            kept.append(element)
    return kept


def _by_position(percepts: list[Percept]) -> list[Percept]:
    return sorted(percepts, key=lambda p: (p.centre[1], p.centre[0]))


def _icons(elements: Sequence[UIElement]) -> list[Percept]:
    # An element with text is read by OCR; only text-less ones are left to the icon detector.
    icons = [e for e in elements if e.content_desc and not e.text]
    return _by_position([Percept("icon", e.content_desc, e.center) for e in icons])


def from_elements(obs: Observation) -> list[Percept]:
    """Texts, then icons, each top to bottom, as the original lists OCR and detector results."""
    elements = painted(obs)
    texts = [
        Percept("text", e.text or e.hint, e.center)
        for e in elements
        # An empty field shows its hint as placeholder text, which OCR reads.
        if e.text or (e.editable and e.hint)
    ]
    return _by_position(texts) + _icons(elements)


# ----- real OCR ---------------------------------------------------------------------------------

OcrEngine = Callable[[bytes], Any]

OCR_HINT = (
    "mobile-agent-v2 with ocr=True reads the screen with RapidOCR, which is not installed: "
    "install the 'ocr' extra (pip install 'ghostei[ocr]', i.e. rapidocr-onnxruntime)"
)


def load_ocr() -> OcrEngine:
    """RapidOCR's engine, imported only when OCR is asked for; a clear error without it."""
    try:
        module = importlib.import_module("rapidocr_onnxruntime")
    except ImportError as exc:
        raise RuntimeError(OCR_HINT) from exc
    engine: OcrEngine = module.RapidOCR()
    return engine


Block = tuple[str, Bounds]


def _blocks(result: Any) -> list[Block]:
    """RapidOCR's ``[[corners, text, score], …]`` (None when it read nothing) as boxes."""
    blocks: list[Block] = []
    for corners, text, _score in result or []:
        xs = [round(float(p[0])) for p in corners]
        ys = [round(float(p[1])) for p in corners]
        if str(text).strip():
            blocks.append((str(text), (min(xs), min(ys), max(xs), max(ys))))
    return blocks


def merge_lines(blocks: Sequence[Block]) -> list[Block]:
    """Join lines of one paragraph, as the original does before listing OCR results.

    Lines join when they start at the same x (within 10 px), have the same height (within
    10 px) and the next begins at most 30 px below the previous one.
    """
    ordered = sorted(blocks, key=lambda b: (b[1][1], b[1][0]))
    used = [False] * len(ordered)
    merged: list[Block] = []
    for i, (text, box) in enumerate(ordered):
        if used[i]:
            continue
        used[i] = True
        lines, last = [text], box
        for j in range(i + 1, len(ordered)):
            if used[j]:
                continue
            other = ordered[j][1]
            gap = other[1] - last[3]
            same_height = abs((last[3] - last[1]) - (other[3] - other[1])) < 10
            if abs(other[0] - last[0]) < 10 and -10 <= gap < 30 and same_height:
                lines.append(ordered[j][0])
                used[j] = True
                box = (
                    min(box[0], other[0]),
                    min(box[1], other[1]),
                    max(box[2], other[2]),
                    max(box[3], other[3]),
                )
                last = other
        merged.append(("\n".join(lines), box))
    return merged


def from_ocr(obs: Observation, engine: OcrEngine) -> list[Percept]:
    """Texts read from the frame by OCR, then the icons of the painted elements."""
    result = engine(obs.png)
    # RapidOCR returns (result, timings); accept a bare result too.
    if isinstance(result, tuple):
        result = result[0]
    texts = [
        Percept("text", text, ((b[0] + b[2]) // 2, (b[1] + b[3]) // 2))
        for text, b in merge_lines(_blocks(result))
    ]
    return texts + _icons(painted(obs))
