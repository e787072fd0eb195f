"""AppAgent: ``Action: tap(5)`` on numbered elements drawn over the screenshot.

Operations: ``tap(n)``, ``text("…")``, ``long_press(n)``, ``swipe(n, "up", "medium")``,
``grid()`` and ``FINISH``; models often wrap them in backticks or code fences. ``index`` of
the parsed action is the tag number as the model wrote it; the AppAgent framework maps its
tags onto the observation's elements.
"""

from __future__ import annotations

import re

from ..actions import Action, Direction
from .base import ParseError, Screen, register_parser, strip_fences, unquote

ACTION_LINE = re.compile(r"\bAction\s*:\s*(.+?)(?:\n\s*\w+\s*:|$)", re.S | re.I)
CALL = re.compile(r"([a-z_]+)\s*\((.*)\)", re.S | re.I)
# A finger swipe moves the content the other way: swiping up scrolls down.
SCROLL_FOR_SWIPE: dict[str, Direction] = {
    "up": "down",
    "down": "up",
    "left": "right",
    "right": "left",
}


def _tag(value: str) -> int:
    value = value.strip()
    if not value.isdigit() or len(value) > 6:
        raise ParseError(f"element tag {value!r} is not a number")
    return int(value)


@register_parser("appagent")
def parse_appagent(text: str, screen: Screen) -> Action:
    """One AppAgent operation; ``FINISH`` ends the task."""
    cleaned = strip_fences(text)
    match = ACTION_LINE.search(cleaned)
    line = (match.group(1) if match else cleaned).strip()
    if line.upper().startswith("FINISH"):
        return Action(action_type="finish")
    call = CALL.search(line)
    if call is None:
        raise ParseError(f"no AppAgent call in {line!r}")
    name, args = call.group(1).lower(), call.group(2)
    if name == "tap":
        return Action(action_type="click", index=_tag(args))
    if name == "long_press":
        return Action(action_type="long_press", index=_tag(args))
    if name == "text":
        return Action(action_type="input_text", text=unquote(args))
    if name == "swipe":
        parts = [p.strip() for p in args.split(",")]
        if len(parts) < 2:
            raise ParseError(f"swipe needs an element and a direction: {line!r}")
        direction = unquote(parts[1]).lower()
        if direction not in SCROLL_FOR_SWIPE:
            raise ParseError(f"swipe direction {direction!r}")
        return Action(
            action_type="scroll", index=_tag(parts[0]), direction=SCROLL_FOR_SWIPE[direction]
        )
    if name == "grid":
        raise ParseError("grid mode is not supported: the benchmark gives every element a tag")
    raise ParseError(f"unknown AppAgent operation {name!r}")
