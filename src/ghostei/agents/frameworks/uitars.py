"""UI-TARS (ByteDance): the screenshot and the recent turns, the official mobile prompt.

The official client sends one conversation per step: a generic system message, the prompt
with the user's instruction, then every earlier answer as an assistant turn with the
screenshot it answered just before it — but only the last ``history_n`` screenshots
(the current one included; 5 by default); older answers stay as text alone. The model answers
``Thought: … Action: …``. UI-TARS-1.5 points in pixels of the image as Qwen2.5-VL resized it,
the first UI-TARS in thousandths of the image: the parsers (``uitars``, ``uitars-v1``) know
both, given the size of the image actually sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ...actions import Action
from ...observation import Observation
from ...parsing import Screen, parse_action
from ...providers.base import Message, Provider
from ..base import AgentContext, AgentStep, register_agent
from .common import StepCalls, frame, refuse_reflection, require_provider, thinking_note

Version = Literal["1.5", "1.0"]

BOX = "'<|box_start|>(x1,y1)<|box_end|>'"
END_BOX = "'<|box_start|>(x3,y3)<|box_end|>'"
ESCAPES = "escape \\', \\\" and \\n inside content so that it parses as a Python string"

# UI-TARS-1.5's mobile action space (README's MOBILE_USE), comments in our words.
ACTIONS_15 = (
    f"click(start_box={BOX})\n"
    f"long_press(start_box={BOX})\n"
    "type(content='') # to submit what you type, end content with \"\\n\"\n"
    f"scroll(start_box={BOX}, direction='down or up or right or left')\n"
    "open_app(app_name='')\n"
    f"drag(start_box={BOX}, end_box={END_BOX})\n"
    "press_home()\n"
    "press_back()\n"
    f"finished(content='xxx') # {ESCAPES}\n"
)
# The first UI-TARS's mobile action space (its README's mobile prompt): no open_app, and
# scroll is a gesture from one point to another.
ACTIONS_10 = (
    f"click(start_box={BOX})\n"
    f"long_press(start_box={BOX}, time='')\n"
    "type(content='')\n"
    f"scroll(start_box={BOX}, end_box={END_BOX})\n"
    "press_home()\n"
    "press_back()\n"
    "finished(content='') # end the task, whether it succeeded or failed\n"
)

SYSTEM = "You are a helpful assistant."
ENTER_NOTE = "[keyboard_enter: the submit of the previous type(content='…\\n')]"
SUBMIT = re.compile(r"type\s*\(\s*content\s*=\s*(['\"])(.*)\1\s*\)", re.S)


def mobile_prompt(instruction: str, version: Version, thinking: bool) -> str:
    """The official mobile prompt in our words, with the user's instruction."""
    notes = (
        "- Write the Thought part in English.\n"
        "- In the Thought part, sketch a short plan, then state your next action and the "
        "element it targets in one sentence.\n"
    )
    if thinking:
        notes += "- " + thinking_note("Thought") + "\n"
    return (
        "You are a GUI agent. You are given a task, the history of your actions and "
        "screenshots; choose the next action that moves the task forward.\n\n"
        "## Output Format\n```\nThought: ...\nAction: ...\n```\n\n"
        "## Action Space\n"
        + (ACTIONS_15 if version == "1.5" else ACTIONS_10)
        + "\n## Note\n"
        + notes
        + f"\n## User Instruction\n{instruction}\n"
    )


def submits(output: str) -> bool:
    """Whether the answer types text ending in a newline, UI-TARS's way to submit it."""
    match = SUBMIT.search(output.split("Action:")[-1])
    return match is not None and match.group(2).endswith(("\\n", "\n"))


@dataclass(frozen=True)
class _Turn:
    png: bytes
    answer: str


class UITars:
    """UI-TARS with the official client's conversation and screenshot window."""

    def __init__(
        self,
        provider: Provider,
        *,
        version: Version = "1.5",
        history_n: int = 5,
        thinking: bool = False,
    ) -> None:
        if history_n < 1:
            raise ValueError("history_n counts the current screenshot: it must be at least 1")
        self.provider = provider
        self.version: Version = version
        self.history_n = history_n
        self.thinking = thinking
        self.instruction = ""
        self.turns: list[_Turn] = []
        self.enter_next = False

    def reset(self, instruction: str) -> None:
        self.instruction = instruction
        self.turns = []
        self.enter_next = False

    def messages(self, current: bytes) -> list[Message]:
        """The conversation for this step: prompt, earlier turns, the current screenshot."""
        out = [
            Message("system", SYSTEM),
            Message("user", mobile_prompt(self.instruction, self.version, self.thinking)),
        ]
        with_image = len(self.turns) - (self.history_n - 1)
        for i, turn in enumerate(self.turns):
            if i >= with_image:
                out.append(Message("user", "", (turn.png,)))
            out.append(Message("assistant", turn.answer))
        out.append(Message("user", "", (current,)))
        return out

    def act(self, observation: Observation) -> AgentStep:
        if self.enter_next:
            # The official client presses Enter right after typing a text ending in "\n".
            self.enter_next = False
            return AgentStep(action=Action(action_type="keyboard_enter"), raw_output=ENTER_NOTE)
        calls = StepCalls(self.provider)
        shot = frame(observation.screenshot, self.provider)
        output = calls.ask(self.messages(shot.png))
        fmt = "uitars" if self.version == "1.5" else "uitars-v1"
        screen = Screen(observation.width, observation.height, image=shot.size)
        action = parse_action(fmt, output, screen)
        self.turns.append(_Turn(shot.png, output))
        self.enter_next = action.action_type == "input_text" and submits(output)
        return AgentStep(action=action, raw_output=output, usage=calls.usage())


@register_agent("uitars")
def _build_15(ctx: AgentContext) -> UITars:
    refuse_reflection(ctx, "uitars")
    return UITars(require_provider(ctx, "uitars"), version="1.5", thinking=ctx.thinking)


@register_agent("uitars-v1")
def _build_10(ctx: AgentContext) -> UITars:
    refuse_reflection(ctx, "uitars-v1")
    return UITars(require_provider(ctx, "uitars-v1"), version="1.0", thinking=ctx.thinking)
