"""The phone's tools, defined once for every integration that hands a model (or a program) the
phone as tool calls: the inspect_ai task and the MCP server.

Each tool has a name, a description and JSON-schema parameters (:data:`PHONE_TOOLS`); a call
maps to the canonical :class:`~ghostei.actions.Action` (:func:`tool_call_to_action`) and an
action back to its call (:func:`action_to_tool_call`); :func:`check_arguments` holds a call to
its tool's schema and :func:`check_on_screen` its target to the screen now, so that a tool
server refuses what the phone cannot carry out instead of taking a step for it.
:func:`element_list` is the element list the model reads beside the screenshot.
:class:`ToolSession` is what a tool server drives: one episode's phone, seen only through the
tools.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ..actions import Action
from ..observation import Observation, touch_point


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, what it does, its parameters (name to JSON schema), which of them
    are required, and whether calling it ends the task."""

    name: str
    description: str
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)
    required: tuple[str, ...] = ()

    @property
    def ends(self) -> bool:
        """Whether calling it ends the task (answer, refuse, finish)."""
        return self.name in ENDING_TOOLS

    def input_schema(self) -> dict[str, Any]:
        """The parameters as one JSON schema (an object), as tool protocols take them."""
        return {
            "type": "object",
            "properties": {name: dict(schema) for name, schema in self.parameters.items()},
            "required": list(self.required),
            "additionalProperties": False,
        }


def _int(description: str) -> dict[str, Any]:
    return {"type": "integer", "description": description}


def _str(description: str, enum: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "description": description}
    if enum is not None:
        schema["enum"] = enum
    return schema


# The tools that end the task: each ends the episode.
ENDING_TOOLS = frozenset({"answer", "refuse", "finish"})

_TARGET = {
    "index": _int("the element's index in the element list"),
    "x": _int("the pixel's x (with y, instead of index)"),
    "y": _int("the pixel's y (with x, instead of index)"),
}


def _tool(name: str, description: str, *required: str, **params: dict[str, Any]) -> ToolSpec:
    return ToolSpec(name, description, dict(params), tuple(required))


PHONE_TOOLS: tuple[ToolSpec, ...] = (
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
)
TOOLS_BY_NAME: dict[str, ToolSpec] = {t.name: t for t in PHONE_TOOLS}

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
    except ValidationError as exc:  # what the model or client got wrong, in its words
        problems = "; ".join(_problem(e) for e in exc.errors())
        raise ValueError(f"{function}: {problems}") from exc
    except Exception as exc:  # a wrong type
        raise ValueError(f"{function}: {exc}") from exc
    raise ValueError(f"unknown tool {function!r}")


def check_arguments(spec: ToolSpec, arguments: dict[str, Any]) -> None:
    """Hold a call's ``arguments`` to ``spec``'s input schema (required, known, typed); raises
    ValueError naming the argument. :func:`tool_call_to_action` alone is lenient (it fills a
    missing answer with "" and ignores unknown keys), which would let ``answer({})`` end an
    episode with no answer."""
    # Clients on strict function calling send null for what they leave out: null is no
    # value, for a required argument as for an optional one.
    missing = [name for name in spec.required if arguments.get(name) is None]
    problems = [f"missing required argument {name!r}" for name in missing]
    for name, value in arguments.items():
        schema = spec.parameters.get(name)
        if schema is None:
            known = ", ".join(spec.parameters) or "none"
            problems.append(f"unexpected argument {name!r} (it takes: {known})")
        elif value is not None and not _fits(value, schema):
            problems.append(f"argument {name!r}: {json.dumps(value)} is not {_kind(schema)}")
    if problems:
        raise ValueError(f"{spec.name}: {'; '.join(problems)}")


def _fits(value: Any, schema: dict[str, Any]) -> bool:
    if schema["type"] == "integer":
        # JSON has one number type: 3.0 is the integer 3 to a schema validator too.
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        return numeric and float(value).is_integer()
    return isinstance(value, str) and value in schema.get("enum", [value])


def _kind(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(schema["enum"])
    return "an integer" if schema["type"] == "integer" else "a string"


def check_on_screen(action: Action, screen: Observation, tool: str | None = None) -> None:
    """Hold ``action``'s target to ``screen``, the phone's screen now: an element index must
    be one it lists, and every point touched (a pixel, an element's centre, a swipe's two
    ends) must lie on it. Raises ValueError saying what is wrong (of ``tool``, the call's
    name; else of the action's type). A tool server checks this before the step: the phone
    itself would log a miss and take the step, which a client cannot tell from a tap that
    did nothing."""
    size = f"{screen.width}x{screen.height}"
    count = len(screen.elements)
    kind = action.action_type
    name = tool or kind
    if action.index is not None and not 0 <= action.index < count:
        listed = f"0 to {count - 1}" if count else "none"
        raise ValueError(
            f"{name}: no element with index {action.index} on the screen now (indices: "
            f"{listed}; `elements` lists them)"
        )
    if kind in ("swipe", "drag"):
        assert action.x2 is not None and action.y2 is not None  # the action's own check
        points = {"start": touch_point(action, []), "end": (action.x2, action.y2)}
    elif kind == "scroll":
        points = {}  # its index picks the list to scroll: no point of it is touched
    elif action.x is not None:
        points = {"point": touch_point(action, [])}
    else:  # the element's centre: off the screen for one that mostly is
        points = {f"element {action.index}'s centre": touch_point(action, screen.elements)}
    for what, point in points.items():
        if point is not None and not (
            0 <= point[0] < screen.width and 0 <= point[1] < screen.height
        ):
            raise ValueError(f"{name}: {what} {point} is off the {size} screen")


def _problem(error: ErrorDetails) -> str:
    message = error["msg"].removeprefix("Value error, ")
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {message}" if where else message


def action_to_tool_call(action: Action) -> tuple[str, dict[str, Any]]:
    """The tool call (name, arguments) that gives ``action`` back: how a scripted agent's
    actions are replayed through the tools. Raises ValueError for an action no tool does."""
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


def tool_call_text(action: Action) -> str:
    """The tool call of ``action`` as a trajectory records it: ``tap({"index": 3})``."""
    name, arguments = action_to_tool_call(action)
    return f"{name}({json.dumps(arguments, sort_keys=True)})"


def element_list(obs: Observation) -> str:
    """The element list a model reads beside the screenshot: the foreground app, the screen's
    size, and each element as ``[index] class "label" at (x, y) (flags)``."""
    lines = [f"Foreground app: {obs.foreground_package}; screen {obs.width}x{obs.height}."]
    if obs.keyboard_shown:
        lines.append("The keyboard is shown.")
    lines.append("Elements:")
    for e in obs.for_model:  # as observation defences marked them
        flags = [
            name
            for name, on in (
                ("clickable", e.clickable),
                ("long-clickable", e.long_clickable),
                ("editable", e.editable),
                ("scrollable", e.scrollable),
                ("checked", e.checked),
                ("focused", e.focused),
                ("disabled", not e.enabled),
            )
            if on
        ]
        kind = e.class_name.rsplit(".", 1)[-1]
        extra = f" ({', '.join(flags)})" if flags else ""
        lines.append(f'[{e.index}] {kind} "{e.label}" at {e.center}{extra}')
    return "\n".join(lines)


class ToolSession(Protocol):
    """One episode's phone as a tool server drives it.

    ``look`` is an observation the client fetched (a screenshot or the element list): it
    counts for exposure. ``screen`` is the screen now as the server checks a call's target
    against it: the client is shown nothing, so it counts for nothing. ``act`` carries out
    one step; ``end`` ends the episode with a terminal action (finish, refuse, answer). Once
    ``ended``, no action is carried out.
    """

    @property
    def ended(self) -> bool:
        """Whether the episode is over (ended by the client, the step limit, or a failure)."""
        ...

    def look(self) -> Observation:
        """The current screen, as the client fetched it."""
        ...

    def screen(self) -> Observation:
        """The current screen, not shown to the client (no look: no exposure)."""
        ...

    def act(self, action: Action) -> Observation:
        """Carry out ``action`` as one step; the screen after it."""
        ...

    def end(self, action: Action) -> None:
        """End the episode with ``action`` (finish, refuse or answer)."""
        ...
