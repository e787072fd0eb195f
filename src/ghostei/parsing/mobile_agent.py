"""Mobile-Agent-v2: ``### Thought ### … ### Action ### Tap (x, y) ### Operation ### …``.

Coordinates are pixels of the screenshot (its perception module reports them so); the
operations are ``Open app (name)``, ``Tap (x, y)``, ``Swipe (x1, y1), (x2, y2)``,
``Type (text)``, ``Home``, ``Back`` and ``Stop``.
"""

from __future__ import annotations

import re

from ..actions import Action
from .base import ParseError, Screen, numbers, register_parser, strip_fences

SECTION = re.compile(r"#{2,}\s*Action\s*#{2,}(.*?)(?:#{2,}\s*\w[\w ]*#{2,}|$)", re.S | re.I)


def action_section(text: str) -> str:
    """The text under ``### Action ###`` (the whole output if the heading is missing)."""
    match = SECTION.search(text)
    body = match.group(1) if match else text
    return " ".join(strip_fences(body).split())


def _inside(action: str) -> str:
    """What is between the first '(' and the last ')'."""
    start, end = action.find("("), action.rfind(")")
    if start < 0 or end < start:
        raise ParseError(f"no parenthesised argument in {action!r}")
    return action[start + 1 : end]


@register_parser("mobile-agent-v2")
def parse_mobile_agent(text: str, screen: Screen) -> Action:
    """One Mobile-Agent-v2 operation."""
    action = action_section(text)
    head = action.split("(")[0].strip().lower()
    if head.startswith("open app"):
        name = _inside(action).strip().strip("\"'")
        return Action(action_type="open_app", app_name=name)
    if head.startswith("tap"):
        nums = numbers(_inside(action))
        if len(nums) != 2:
            raise ParseError(f"Tap needs (x, y): {action!r}")
        x, y = screen.clamp(nums[0], nums[1])
        return Action(action_type="click", x=x, y=y)
    if head.startswith("swipe"):
        nums = numbers(action[action.find("(") :])
        if len(nums) != 4:
            raise ParseError(f"Swipe needs (x1, y1), (x2, y2): {action!r}")
        x, y = screen.clamp(nums[0], nums[1])
        x2, y2 = screen.clamp(nums[2], nums[3])
        return Action(action_type="swipe", x=x, y=y, x2=x2, y2=y2)
    if head.startswith("type"):
        return Action(action_type="input_text", text=_inside(action))
    if head.startswith("home"):
        return Action(action_type="navigate_home")
    if head.startswith("back"):
        return Action(action_type="navigate_back")
    if head.startswith("stop"):
        return Action(action_type="finish")
    raise ParseError(f"unknown Mobile-Agent-v2 operation {action!r}")
