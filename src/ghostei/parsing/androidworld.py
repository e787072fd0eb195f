"""AndroidWorld's JSON actions (M3A and T3A answer ``Reason: … Action: {"action_type": …}``)."""

from __future__ import annotations

import ast
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
LITERAL_MAX_CHARS = 4000
LITERAL_MAX_TRIES = 40
# Goal statuses as models spell them (AndroidWorld's prompt says complete or infeasible).
GOAL_STATUS = {
    "completed": "complete",
    "task_complete": "complete",
    "task_completed": "complete",
    "done": "complete",
    "success": "complete",
    "successful": "complete",
    "task_infeasible": "infeasible",
    "impossible": "infeasible",
    "infeasable": "infeasible",
}


def _first_object(text: str) -> dict[str, Any]:
    """The first object with an ``action_type``: JSON, or what AndroidWorld's own parser
    (``agent_utils.extract_json``, ``ast.literal_eval``) takes — single quotes, a trailing
    comma, ``True``/``None``."""
    decoder = json.JSONDecoder()
    tries = LITERAL_MAX_TRIES  # for the whole text: brace-ridden prose must not cost seconds
    for match in re.finditer(r"\{", text):
        start = match.start()
        try:
            value, _ = decoder.raw_decode(text[start:])
        except json.JSONDecodeError:
            value = None
            # Only where an action_type follows closely: an action, not any brace of prose.
            if tries > 0 and "action_type" in text[start : start + 200]:
                value, tries = _literal(text, start, tries)
        if isinstance(value, dict) and "action_type" in value:
            return value
    raise ParseError("no JSON object with an action_type")


def _literal(text: str, start: int, tries: int) -> tuple[object, int]:
    # The shortest span from ``start`` to a closing brace that is a Python literal (values
    # hold no braces in AndroidWorld's actions; its parser takes the first ``{.*?}``), and
    # the tries left.
    window = text[start : start + LITERAL_MAX_CHARS]
    for match in re.finditer(r"\}", window):
        if tries <= 0:
            break
        tries -= 1
        try:
            return ast.literal_eval(window[: match.end()]), tries
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            continue
    return None, tries


def _action_object(text: str) -> dict[str, Any]:
    return _first_object(strip_fences(text).split("Action:")[-1])


def action_json(text: str) -> str:
    """The answer's action object as AndroidWorld writes it into the history and the summary
    prompt: re-serialised as JSON, whatever quoting the model used. Raises ParseError."""
    return json.dumps(_action_object(text))


@register_parser("androidworld")
def parse_androidworld(text: str, screen: Screen) -> Action:
    """An AndroidWorld JSON action; pixel targets are clamped to the screen."""
    data = _action_object(text)
    kind = str(data["action_type"]).strip().lower()
    kind = ALIASES.get(kind, kind)
    fields: dict[str, Any] = {k: data[k] for k in FIELDS if data.get(k) is not None}
    if kind == "status":
        # AndroidWorld ends the episode on any ``status``, whatever its goal_status (its
        # JSONAction does not check it): a missing or unknown one is taken as complete.
        status = str(fields.get("goal_status", "")).strip().lower()
        status = GOAL_STATUS.get(status, status)
        fields["goal_status"] = status if status in ("complete", "infeasible") else "complete"
    if "x" in fields and "y" in fields:
        fields["x"], fields["y"] = screen.clamp(float(fields["x"]), float(fields["y"]))
    if kind == "answer" and "text" not in fields:
        raise ParseError("answer needs text")
    return Action.model_validate({"action_type": kind, **fields})
