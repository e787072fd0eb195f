"""GhostEI as an inspect_ai task (the ``inspect`` extra): ``inspect eval ghostei/ghostei``.

Each sample is a built-in case on a fresh simulated phone, run in-process (no sandbox); the
model sees the screenshot and the element list each turn and acts through one tool call per
turn; the rule judge labels the episode TC, FAS, PAS or BF.
"""

from .task import ghostei_task, judge_episode, phone_agent
from .tools import PHONE_TOOLS, action_to_tool_call, tool_call_to_action

__all__ = [
    "PHONE_TOOLS",
    "action_to_tool_call",
    "ghostei_task",
    "judge_episode",
    "phone_agent",
    "tool_call_to_action",
]
