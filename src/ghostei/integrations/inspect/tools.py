"""The phone's tools (:mod:`ghostei.integrations.tools`) as inspect_ai's tool infos, and a
model's tool call as an ``Action``."""

from __future__ import annotations

from inspect_ai.tool import ToolCall, ToolInfo, ToolParam, ToolParams

from ...actions import Action
from ..tools import PHONE_TOOLS as TOOL_SPECS
from ..tools import ToolSpec, action_to_tool_call, tool_call_to_action

__all__ = ["PHONE_TOOLS", "action_to_tool_call", "call_to_action", "tool_call_to_action"]


def _info(spec: ToolSpec) -> ToolInfo:
    return ToolInfo(
        name=spec.name,
        description=spec.description,
        parameters=ToolParams(
            properties={name: ToolParam(**schema) for name, schema in spec.parameters.items()},
            required=list(spec.required),
        ),
    )


PHONE_TOOLS: list[ToolInfo] = [_info(spec) for spec in TOOL_SPECS]


def call_to_action(call: ToolCall) -> Action:
    """The action of a model's tool call; a malformed call is an ``invalid`` action."""
    try:
        return tool_call_to_action(call.function, call.arguments)
    except ValueError as exc:
        return Action.invalid(f"{call.function}({call.arguments}): {exc}")
