"""UI-TARS: ``Thought: … Action: click(start_box='<|box_start|>(x,y)<|box_end|>')``.

Two coordinate conventions, as in ByteDance's own action parser: UI-TARS-1.5 (Qwen2.5-VL)
answers in absolute pixels of the *smart-resized* image (sides rounded to multiples of 28,
pixel count bounded), the first UI-TARS (7B-SFT, Qwen2-VL) in relative units of 0-1000.
Points come as ``(x,y)``, as a box ``(x1,y1,x2,y2)`` (its centre), or as
``<point>x y</point>``; ``point=``/``start_point=`` are spellings of ``start_box=``.
"""

from __future__ import annotations

import math
import re

from ..actions import Action, Direction
from .base import ParseError, Screen, point_of, register_parser, unquote

FACTOR = 28
MIN_PIXELS = 100 * 28 * 28
MAX_PIXELS = 16384 * 28 * 28

CALL = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)\)?\s*$", re.S)
KWARG = re.compile(r"""(\w+)\s*=\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^,)]+)""", re.S)
CONTENT = re.compile(r"""content\s*=\s*(['"])(.*)\1\s*\)?\s*$""", re.S)
DIRECTIONS: dict[str, Direction] = {"up": "up", "down": "down", "left": "left", "right": "right"}


def smart_resize(height: int, width: int) -> tuple[int, int]:
    """The (height, width) Qwen2.5-VL resizes an image to before the model sees it."""
    h = max(FACTOR, round(height / FACTOR) * FACTOR)
    w = max(FACTOR, round(width / FACTOR) * FACTOR)
    if h * w > MAX_PIXELS:
        beta = math.sqrt(height * width / MAX_PIXELS)
        h = math.floor(height / beta / FACTOR) * FACTOR
        w = math.floor(width / beta / FACTOR) * FACTOR
    elif h * w < MIN_PIXELS:
        beta = math.sqrt(MIN_PIXELS / (height * width))
        h = math.ceil(height * beta / FACTOR) * FACTOR
        w = math.ceil(width * beta / FACTOR) * FACTOR
    return h, w


def _split(text: str) -> tuple[str, dict[str, str]]:
    """The function name and keyword arguments of the (last) action in the output."""
    body = text.split("Action:")[-1].strip() if "Action:" in text else text.strip()
    body = body.split("\n\n")[0].strip()  # one action per step on mobile
    body = re.sub(r"<point>\s*(-?[\d.]+)[\s,]+(-?[\d.]+)\s*</point>", r"(\1,\2)", body)
    body = body.replace("<|box_start|>", "").replace("<|box_end|>", "")
    match = CALL.match(body)
    if match is None:
        raise ParseError(f"no action call in {body!r}")
    name, args = match.group(1), match.group(2) or ""
    kwargs: dict[str, str] = {}
    content = CONTENT.search(args)
    if content is not None:  # typed text may hold quotes and commas: take it whole
        kwargs["content"] = unquote(content.group(1) + content.group(2) + content.group(1))
        args = args[: content.start()]
    for key, value in KWARG.findall(args):
        kwargs[key.replace("start_point", "start_box").replace("end_point", "end_box")] = value
    if "point" in kwargs:
        kwargs["start_box"] = kwargs.pop("point")
    return name, kwargs


def _parse(text: str, screen: Screen, to_pixels: tuple[float, float]) -> Action:
    name, kw = _split(text)
    sx, sy = to_pixels

    def at(key: str) -> tuple[int, int]:
        if key not in kw:
            raise ParseError(f"{name} needs {key}")
        x, y = point_of(kw[key])
        return screen.clamp(x * sx, y * sy)

    match name:
        case "click" | "left_single" | "tap":
            x, y = at("start_box")
            return Action(action_type="click", x=x, y=y)
        case "left_double" | "double_click":
            x, y = at("start_box")
            return Action(action_type="double_tap", x=x, y=y)
        case "long_press":
            x, y = at("start_box")
            return Action(action_type="long_press", x=x, y=y)
        case "type":
            content = kw.get("content", "")
            # A trailing newline means "and submit"; the canonical action types the text only.
            return Action(action_type="input_text", text=content.rstrip("\n"))
        case "scroll" if "end_box" in kw and "direction" not in kw:
            # UI-TARS v1 scrolls from one point to another: a swipe.
            (x, y), (x2, y2) = at("start_box"), at("end_box")
            return Action(action_type="swipe", x=x, y=y, x2=x2, y2=y2)
        case "scroll":
            said = unquote(kw.get("direction", "")).strip().lower()
            if said not in DIRECTIONS:
                raise ParseError(f"scroll direction {said!r}")
            direction = DIRECTIONS[said]
            if "start_box" in kw:
                x, y = at("start_box")
                return Action(action_type="scroll", direction=direction, x=x, y=y)
            return Action(action_type="scroll", direction=direction)
        case "drag" | "swipe":
            (x, y), (x2, y2) = at("start_box"), at("end_box")
            return Action(action_type="drag" if name == "drag" else "swipe", x=x, y=y, x2=x2, y2=y2)
        case "open_app":
            return Action(action_type="open_app", app_name=unquote(kw.get("app_name", "")))
        case "press_home" | "home":
            return Action(action_type="navigate_home")
        case "press_back" | "back":
            return Action(action_type="navigate_back")
        case "enter" | "press_enter":
            return Action(action_type="keyboard_enter")
        case "wait":
            return Action(action_type="wait")
        case "finished" | "finish":
            return Action(action_type="finish", text=unquote(kw.get("content", "")) or None)
        case "call_user":
            return Action(action_type="ask_user", text=unquote(kw.get("content", "")) or None)
    raise ParseError(f"unknown UI-TARS action {name!r}")


@register_parser("uitars")
def parse_uitars(text: str, screen: Screen) -> Action:
    """UI-TARS-1.5: absolute coordinates in the smart-resized image."""
    width, height = screen.image_size
    h, w = smart_resize(height, width)
    return _parse(text, screen, (screen.width / w, screen.height / h))


@register_parser("uitars-v1")
def parse_uitars_v1(text: str, screen: Screen) -> Action:
    """UI-TARS (7B-SFT): coordinates relative to the image, 0-1000."""
    return _parse(text, screen, (screen.width / 1000, screen.height / 1000))
