"""The parser registry and what every parser shares: the screen it maps coordinates onto."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import ValidationError

from ..actions import Action


class ParseError(ValueError):
    """Raised inside a parser when the text is not an action of its family."""


@dataclass(frozen=True)
class Screen:
    """The device screen in pixels; model coordinates are mapped onto it."""

    width: int
    height: int
    # The size of the image the model was shown, when the agent downscaled the screenshot.
    image: tuple[int, int] | None = None

    @property
    def image_size(self) -> tuple[int, int]:
        """(width, height) of the picture the model's coordinates refer to."""
        return self.image or (self.width, self.height)

    def clamp(self, x: float, y: float) -> tuple[int, int]:
        """A model's point as a pixel; points just off the edge land on it."""
        return (
            min(max(round(x), 0), self.width - 1),
            min(max(round(y), 0), self.height - 1),
        )


Parser = Callable[[str, Screen], Action]
PARSERS: dict[str, Parser] = {}


def register_parser(name: str) -> Callable[[Parser], Parser]:
    """Decorator: make a parser available as ``--format name``."""

    def add(parser: Parser) -> Parser:
        PARSERS[name] = parser
        return parser

    return add


def parse_action(fmt: str, text: str, screen: Screen) -> Action:
    """The canonical action for a model's raw output; ``invalid`` if it cannot be parsed."""
    try:
        parser = PARSERS[fmt]
    except KeyError:
        raise KeyError(
            f"unknown action format {fmt!r}; known: {', '.join(sorted(PARSERS))}"
        ) from None
    try:
        return parser(text, screen)
    except (ParseError, ValidationError, ValueError, TypeError, OverflowError, RecursionError):
        return Action.invalid(text)


NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def numbers(value: str) -> list[float]:
    """Every number in a coordinate string such as ``(12,34)`` or ``<point>12 34</point>``."""
    found = [float(n) for n in NUMBER.findall(value)]
    if any(n != n or abs(n) > 1e7 for n in found):  # NaN or absurd: not a coordinate
        raise ParseError(f"bad coordinate {value!r}")
    return found


def point_of(value: str) -> tuple[float, float]:
    """A point from ``(x,y)``, or the centre of a box ``(x1,y1,x2,y2)``."""
    nums = numbers(value)
    if len(nums) == 2:
        return nums[0], nums[1]
    if len(nums) == 4:
        return (nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2
    raise ParseError(f"not a point or a box: {value!r}")


def unquote(value: str) -> str:
    """A string argument without its surrounding quotes and with escapes resolved."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value.replace("\\n", "\n").replace("\\'", "'").replace('\\"', '"')


def strip_fences(text: str) -> str:
    """Remove the Markdown code fences and backticks models wrap actions in."""
    text = re.sub(r"```[a-zA-Z]*", "", text)
    return text.replace("`", "").strip()
