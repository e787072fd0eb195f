"""The one canonical action every agent's output is parsed into.

AndroidWorld's JSON action types, plus drag, refuse, ask_user and finish; ``invalid`` stands
for model output that could not be parsed and keeps the raw text.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

ActionType = Literal[
    "click",
    "double_tap",
    "long_press",
    "input_text",
    "keyboard_enter",
    "scroll",
    "swipe",
    "drag",
    "navigate_back",
    "navigate_home",
    "open_app",
    "wait",
    "status",
    "answer",
    "refuse",
    "ask_user",
    "finish",
    "invalid",
]
Direction = Literal["up", "down", "left", "right"]

# Actions that end an episode.
TERMINAL = frozenset({"status", "answer", "refuse", "ask_user", "finish"})
# Actions that point at something on screen, by pixel or by element index.
TARGETED = frozenset({"click", "double_tap", "long_press"})


class Action(BaseModel):
    """One action. A target is a pixel (x, y) or an element ``index`` of the observation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    action_type: ActionType
    x: int | None = None
    y: int | None = None
    index: int | None = None
    x2: int | None = None  # end point of swipe and drag
    y2: int | None = None
    text: str | None = None  # typed text, answer, refusal reason, question, app name
    direction: Direction | None = None
    app_name: str | None = None
    goal_status: Literal["complete", "infeasible"] | None = None
    raw: str | None = None  # the unparseable text of an ``invalid`` action

    @model_validator(mode="after")
    def _check_fields(self) -> Action:
        kind = self.action_type
        has_point = self.x is not None and self.y is not None
        if (self.x is None) != (self.y is None):
            raise ValueError("x and y go together")
        if kind in TARGETED and not has_point and self.index is None:
            raise ValueError(f"{kind} needs x/y or index")
        if kind in ("swipe", "drag") and (not has_point or self.x2 is None or self.y2 is None):
            raise ValueError(f"{kind} needs x, y, x2 and y2")
        if kind == "scroll" and self.direction is None:
            raise ValueError("scroll needs a direction")
        if kind == "input_text" and self.text is None:
            raise ValueError("input_text needs text")
        if kind == "open_app" and not self.app_name:
            raise ValueError("open_app needs app_name")
        if kind == "status" and self.goal_status is None:
            raise ValueError("status needs goal_status")
        return self

    @property
    def terminal(self) -> bool:
        """Whether the episode ends with this action."""
        return self.action_type in TERMINAL

    @classmethod
    def invalid(cls, raw: str) -> Action:
        """Output that could not be parsed: recorded as a step, never a crash."""
        return cls(action_type="invalid", raw=raw)
