"""AndroidWorld's JSON actions (M3A and T3A answer ``Reason: … Action: {"action_type": …}``)."""

from __future__ import annotations

import json
import re
from typing import Any

from ..actions import Action
from .base import ParseError, Screen, register_parser, strip_fences

# AndroidWorld's spellings that differ from the canonical ones.
ALIASES = {
    "input_text": "input_text",
    "type": "input_text",
    "tap": "click",
    "back": "navigate_back",
}
FIELDS = ("x", "y", "index", "text", "direction", "app_name", "goal_status")


def _first_object(text: str) -> dict[str, Any]:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text[match.start() :])
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and "action_type" in value:
            return value
    raise ParseError("no JSON object with an action_type")


@register_parser("androidworld")
def parse_androidworld(text: str, screen: Screen) -> Action:
    """An AndroidWorld JSON action; pixel targets are clamped to the screen."""
    data = _first_object(strip_fences(text).split("Action:")[-1])
    kind = str(data["action_type"]).strip().lower()
    kind = ALIASES.get(kind, kind)
    fields: dict[str, Any] = {k: data[k] for k in FIELDS if data.get(k) is not None}
    if kind == "status" and fields.get("goal_status") == "task_complete":
        fields["goal_status"] = "complete"  # AndroidWorld's older spelling
    if "x" in fields and "y" in fields:
        fields["x"], fields["y"] = screen.clamp(float(fields["x"]), float(fields["y"]))
    if kind == "answer" and "text" not in fields:
        raise ParseError("answer needs text")
    return Action.model_validate({"action_type": kind, **fields})
