"""The phone's actions as tools, and the conversions between tool calls and ``Action``."""

from __future__ import annotations

from typing import Any

from inspect_ai.tool import ToolCall, ToolInfo, ToolParam, ToolParams

from ...actions import Action


def _int(description: str) -> ToolParam:
    return ToolParam(type="integer", description=description)


def _str(description: str, enum: list[str] | None = None) -> ToolParam:
    return ToolParam(type="string", description=description, enum=enum)


_TARGET = {
    "index": _int("the element's index in the element list"),
    "x": _int("the pixel's x (with y, instead of index)"),
    "y": _int("the pixel's y (with x, instead of index)"),
}


def _tool(name: str, description: str, *required: str, **params: ToolParam) -> ToolInfo:
    return ToolInfo(
        name=name,
        description=description,
        parameters=ToolParams(properties=dict(params), required=list(required)),
    )


PHONE_TOOLS: list[ToolInfo] = [
    _tool("tap", "Tap an element (by index) or a pixel (x, y).", **_TARGET),
    _tool("double_tap", "Double-tap an element (by index) or a pixel (x, y).", **_TARGET),
    _tool("long_press", "Long-press an element (by index) or a pixel (x, y).", **_TARGET),
    _tool(
        "type_text",
        "Type text into a text field (by index or x, y; else the focused field).",
        "text",
        text=_str("the text to type"),
        **_TARGET,
    ),
    _tool("enter", "Press the keyboard's Enter key."),
    _tool(
        "scroll",
        "Scroll the screen (or the element at index) to reveal content in a direction.",
        "direction",
        direction=_str("where to reveal more content", ["up", "down", "left", "right"]),
        index=_TARGET["index"],
    ),
    _tool(
        "swipe",
        "Swipe from (x, y) to (x2, y2).",
        "x",
        "y",
        "x2",
        "y2",
        x=_int("start x"),
        y=_int("start y"),
        x2=_int("end x"),
        y2=_int("end y"),
    ),
    _tool("open_app", "Open an app by its name.", "app_name", app_name=_str("the app's name")),
    _tool("back", "Press the system Back button."),
    _tool("home", "Go to the home screen."),
    _tool("wait", "Wait for the screen to change."),
    _tool(
        "answer",
        "Answer the user's question; ends the task.",
        "text",
        text=_str("the answer"),
    ),
    _tool(
        "refuse",
        "Refuse to go on (the request is unsafe or cannot be done); ends the task.",
        "reason",
        reason=_str("why"),
    ),
    _tool("finish", "Report the task done; ends the task."),
]

_SIMPLE = {
    "enter": "keyboard_enter",
    "back": "navigate_back",
    "home": "navigate_home",
    "wait": "wait",
    "finish": "finish",
}
_TARGETED = {"tap": "click", "double_tap": "double_tap", "long_press": "long_press"}


def _target(args: dict[str, Any]) -> dict[str, Any]:
    return {k: args[k] for k in ("index", "x", "y") if args.get(k) is not None}


def tool_call_to_action(function: str, arguments: dict[str, Any]) -> Action:
    """The action a tool call asks for; raises ValueError for a malformed call."""
    args = dict(arguments)
    try:
        if function in _SIMPLE:
            return Action(action_type=_SIMPLE[function])  # type: ignore[arg-type]
        if function in _TARGETED:
            return Action(action_type=_TARGETED[function], **_target(args))  # type: ignore[arg-type]
        if function == "type_text":
            return Action(action_type="input_text", text=args.get("text"), **_target(args))
        if function == "scroll":
            return Action(
                action_type="scroll", direction=args.get("direction"), index=args.get("index")
            )
        if function == "swipe":
            return Action(action_type="swipe", **{k: args.get(k) for k in ("x", "y", "x2", "y2")})
        if function == "open_app":
            return Action(action_type="open_app", app_name=args.get("app_name"))
        if function == "answer":
            return Action(action_type="answer", text=str(args.get("text", "")))
        if function == "refuse":
            return Action(action_type="refuse", text=str(args.get("reason", "")))
    except Exception as exc:  # pydantic's ValidationError, or a wrong type
        raise ValueError(f"{function}: {exc}") from exc
    raise ValueError(f"unknown tool {function!r}")


def action_to_tool_call(action: Action) -> tuple[str, dict[str, Any]]:
    """The tool call (name, arguments) that gives ``action`` back: how a scripted agent's
    actions are replayed through the task. Raises ValueError for an action no tool does."""
    kind = action.action_type
    point = {k: v for k, v in (("index", action.index), ("x", action.x), ("y", action.y))}
    target = {k: v for k, v in point.items() if v is not None}
    for tool, action_type in (*_SIMPLE.items(), *_TARGETED.items()):
        if kind == action_type:
            return tool, target if tool in _TARGETED else {}
    if kind == "input_text":
        return "type_text", {"text": action.text, **target}
    if kind == "scroll":
        args: dict[str, Any] = {"direction": action.direction}
        return "scroll", args if action.index is None else {**args, "index": action.index}
    if kind == "swipe":
        return "swipe", {"x": action.x, "y": action.y, "x2": action.x2, "y2": action.y2}
    if kind == "open_app":
        return "open_app", {"app_name": action.app_name}
    if kind == "answer":
        return "answer", {"text": action.text or ""}
    if kind == "refuse":
        return "refuse", {"reason": action.text or ""}
    if kind == "status":
        if action.goal_status == "complete":
            return "finish", {}
        return "refuse", {"reason": action.text or "infeasible"}
    raise ValueError(f"no tool does {kind}")


def call_to_action(call: ToolCall) -> Action:
    """The action of a model's tool call; a malformed call is an ``invalid`` action."""
    try:
        return tool_call_to_action(call.function, call.arguments)
    except ValueError as exc:
        return Action.invalid(f"{call.function}({call.arguments}): {exc}")
