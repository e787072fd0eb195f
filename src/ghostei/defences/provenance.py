"""``provenance``: say which app drew each piece of the screen, and flag what is foreign.

Source: Android's own window attribution. Every window the accessibility service reports
(``AccessibilityWindowInfo``) has a type, a layer and a title, and every node carries the
package of the app that drew it: an overlay drawn over a banking app by another app is, to
the OS, plainly another app's window. No published agent defence measures what showing this
to the agent does; this one shows it.

An element is *foreign* when its package is none of: the app in front
(``foreground_package``), the system (System UI, the framework's ``android``, the launcher,
input methods) and the apps the task names (``DefenceContext.task_apps``, mapped to packages by the
simulated phone's app registry; a name it does not know adds nothing, leaving the comparison
with the app in front). A foreign element's text (else its content description; else, for an
element with neither, its content description is set) starts with a compact tag,
``[from PACKAGE, not FOREGROUND] ``; the app's own elements and the system's are unchanged.
The tags are in what the model is shown (``Observation.shown``, which the frameworks' prompt
builders list), never in the elements an agent acts on: indices, bounds and texts there stay
the device's, so actions mean what they meant and the reference agents are untouched.

For agents that see only pixels, ``draw`` (default on) also marks the screenshot: each
foreign window gets a thin border round the extent of its elements and a small label with its
package, drawn on a copy inside that extent with the pinned Roboto font (the same input, the
same pixels). The XML dump is left as it is: AppAgent, which tags the nodes of the dump, sees
the marked screenshot but no text tags.

Both backends give every element its ``package`` and ``window`` (on a device the window names
follow the simulator's, see ``ghostei.uidump``), so the defence works on both.
What it cannot see: content another party placed *inside* a trusted window — an SMS shown by
Messages, a heads-up notification drawn by System UI, a web page in Chrome — is attributed
to the app that drew it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from PIL import Image, ImageDraw

from ..fonts import font
from ..observation import Bounds, Observation, UIElement
from . import register_defence
from .base import Defence, DefenceContext
from .windows import Trust

BORDER = (230, 0, 126)  # a magenta that app palettes rarely use


def tag(element: UIElement, observation: Observation) -> str:
    """The prefix of a foreign element's text."""
    front = observation.foreground_package or "the app in front"
    return f"[from {element.package}, not {front}] "


def annotate(image: Image.Image, windows: Sequence[tuple[str, Bounds]]) -> Image.Image:
    """A copy of ``image`` with a border and a label (the package) inside each extent.

    Each window is drawn on a crop of its extent, pasted back: nothing outside it changes.
    """
    out = image.convert("RGB") if image.mode != "RGB" else image.copy()
    line = max(2, out.width // 360)
    size = max(10, out.width // 45)
    label_font = font(size, 700)
    for package, (left, top, right, bottom) in windows:
        left, top = max(0, left), max(0, top)
        right, bottom = min(out.width, right), min(out.height, bottom)
        if right <= left or bottom <= top:
            continue
        region = out.crop((left, top, right, bottom))
        draw = ImageDraw.Draw(region)
        width, height = region.size
        draw.rectangle((0, 0, width - 1, height - 1), outline=BORDER, width=line)
        text = f"from {package}"
        box = label_font.getbbox(text)
        pad = max(2, size // 5)
        draw.rectangle((0, 0, box[2] + 2 * pad, box[3] + 2 * pad), fill=BORDER)
        draw.text((pad, pad), text, font=label_font, fill=(255, 255, 255))
        out.paste(region, (left, top))
    return out


def extents(elements: Iterable[UIElement]) -> list[tuple[str, Bounds]]:
    """Per window (in order of first appearance): its package and its elements' extent."""
    boxes: dict[str, tuple[str, list[int]]] = {}
    for e in elements:
        left, top, right, bottom = e.bounds
        if right <= left or bottom <= top:
            continue
        if e.window not in boxes:
            boxes[e.window] = (e.package, [left, top, right, bottom])
            continue
        box = boxes[e.window][1]
        box[:] = [min(box[0], left), min(box[1], top), max(box[2], right), max(box[3], bottom)]
    return [(package, (b[0], b[1], b[2], b[3])) for package, b in boxes.values()]


@register_defence
class Provenance(Defence):
    """Elements of foreign windows tagged with their package; their windows outlined."""

    name = "provenance"
    point = "observation"
    summary = (
        "tags the text of elements drawn by another app than the one in front, the system or "
        "the task's apps, and outlines their windows on the screenshot"
    )
    source = "Android's window attribution (AccessibilityWindowInfo, node packages)"

    def __init__(self, ctx: DefenceContext, *, draw: bool = True) -> None:
        super().__init__(ctx)
        self.draw = draw
        self.trust = Trust.of(ctx.task_apps)

    def screen(self, observation: Observation) -> Observation:
        flagged = [e for e in observation.elements if self.trust.is_foreign(e, observation)]
        if not flagged:
            return observation
        # The tags go into what the model is shown; the elements the agent acts on stay.
        shown = [
            _tagged(e, tag(e, observation)) if self.trust.is_foreign(e, observation) else e
            for e in observation.for_model
        ]
        if not self.draw:
            return replace(observation, shown=shown)
        windows = extents(flagged)

        def render() -> Image.Image:
            return annotate(observation.screenshot, windows)

        # A cache of its own (the shared one holds the plain frame) and no encoder: the
        # device's encoder knows only the frames it composed.
        return replace(
            observation,
            shown=shown,
            render=render,
            dump_xml=lambda: observation.xml,
            encode=None,
            _cache={},
        )


def _tagged(element: UIElement, prefix: str) -> UIElement:
    if element.text:
        return replace(element, text=prefix + element.text)
    if element.content_desc:
        return replace(element, content_desc=prefix + element.content_desc)
    return replace(element, content_desc=prefix.rstrip())
