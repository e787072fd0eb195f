"""AndroidWorld's M3A (multimodal) and T3A (text only) agents.

Both see the UI elements of the accessibility forest (every window) with their indices and a
history of one-line step summaries, and answer ``Reason: … Action: {JSON}``. After each action
a second call summarises the step from the screens before and after it; the summary is the
history the next step sees. M3A sends the screenshot twice, plain and with set-of-marks boxes
(index top left), and its summary call sees the two marked screenshots labelled "before" and
"after"; T3A sends no image at all, and lists elements in full (package and resource id
included). Here the summary of a step is made at the start of the next one, when its "after"
screen is observed; steps that end the episode need none.

AndroidWorld's ``input_text`` taps the field, types and presses Enter; Enter is sent here as
the following step's action, without a model call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PIL import Image

from ...actions import Action
from ...observation import Observation, UIElement
from ...parsing import Screen, parse_action
from ...parsing.androidworld import action_json
from ...providers.base import Message, Provider
from ..base import AgentContext, AgentStep, register_agent
from .common import StepCalls, frame, refuse_reflection, require_provider, thinking_note
from .marks import corner_label, draw_marks

ENTER_NOTE = "[keyboard_enter: the Enter of the previous input_text]"
REASON_ACTION = re.compile(r"Reason:(.*)Action:(.*)", re.S)


def _actions(multimodal: bool) -> str:
    target = (
        "Click/tap an element of the screen. Most UI elements carry a mark (a bounding box "
        "with a numeric index in its TOP LEFT corner); give that index to say which one"
        if multimodal
        else "Click/tap a UI element of the screen, given by its index"
    )
    return (
        "- When you think the task is done, finish it with the status action and complete as "
        'goal_status: `{"action_type": "status", "goal_status": "complete"}`\n'
        "- When you think the task cannot be done (for instance you lack information or "
        "cannot perform a needed action), finish with the status action and infeasible as "
        'goal_status: `{"action_type": "status", "goal_status": "infeasible"}`\n'
        "- Answer the user's question: "
        '`{"action_type": "answer", "text": "<answer_text>"}`\n'
        f'- {target}: `{{"action_type": "click", "index": <target_index>}}`.\n'
        "- Long-press an element, chosen by its index as for click: "
        '`{"action_type": "long_press", "index": <target_index>}`.\n'
        "- Type text into a text field, chosen by its index; the action taps the field, types "
        "the text and presses Enter, so there is no need to tap the field first: "
        '`{"action_type": "input_text", "text": <text_input>, "index": <target_index>}`\n'
        '- Press the Enter key: `{"action_type": "keyboard_enter"}`\n'
        '- Go to the home screen: `{"action_type": "navigate_home"}`\n'
        '- Go back: `{"action_type": "navigate_back"}`\n'
        "- Scroll the screen, or a scrollable element given by its index, in one of four "
        "directions (leave the index out to scroll the whole screen): "
        '`{"action_type": "scroll", "direction": <up, down, left, right>, '
        '"index": <optional_target_index>}`\n'
        "- Open an app (nothing happens if it is not installed): "
        '`{"action_type": "open_app", "app_name": <name>}`\n'
        '- Wait for the screen to update: `{"action_type": "wait"}`\n'
    )


def prefix(multimodal: bool) -> str:
    """The opening both prompts share: the role, the inputs and the action list."""
    inputs = (
        "the current screenshot (both as it is and with bounding boxes and numeric indices "
        "added to some UI elements) and a history of what you have done (in text)"
        if multimodal
        else "descriptions of most UI elements on the current screen (each one can be "
        "referred to by its index) and a history of what you did in earlier steps"
    )
    return (
        "You are an agent who operates an Android phone on behalf of a user. Depending on the "
        "user's goal or request, you may\n"
        '- answer it, if it is a question or a chat message, e.g. "What is on my calendar '
        'today?";\n'
        "- carry out the task it describes by acting on the phone, step by step.\n\n"
        "You work through a request step by step. At each step you are given "
        f"{inputs}. From these and the goal, choose one action from the list below (each "
        "description is followed by its JSON form) and output it in that JSON form.\n"
        + _actions(multimodal)
    )


GUIDANCE = (
    "Guidelines to follow:\n"
    "General:\n"
    "- There are usually several ways to do a task; take the simplest. When something does "
    "not work as expected, a retry sometimes helps, but if it does not (the history shows "
    "it), switch to another way.\n"
    '- You may need to look around the phone for information the task needs; for "what is on '
    'my calendar tomorrow" you would open the calendar app (with `open_app`), read it there, '
    "reply with the `answer` action and finish with the `status` action.\n"
    "- For questions and chat messages, reply to the user explicitly with the `answer` "
    "action; showing the answer on the screen is not enough unless the request is to show "
    "something.\n"
    "- If the goal is already reached (say, turning on Wi-Fi when it is on), just finish.\n"
    "Actions:\n"
    "- Open apps with the `open_app` action; use the app drawer only if nothing else works.\n"
    "- Type with the `input_text` action (passwords included) rather than tapping keys one by "
    "one. Clear any text already in the field first if it should not stay.\n"
    "- For `click`, `long_press` and `input_text`, the index must belong to an element that is "
    "VISIBLE on the screen and in the element list (some listed elements may be off screen "
    "and cannot be used).\n"
    "- Scroll in different directions to find more content.\n"
    "- The `scroll` direction is the opposite of a swipe: to see content further down, scroll "
    '"down". If one direction does not work, try the other.\n'
    "Text:\n"
    "- To select text, long-press it to enter selection mode, then adjust the selection "
    "handles; a bar with copy, paste and select all usually appears.\n"
    "- You cannot drag things around the screen, so selecting arbitrary text is hard.\n"
    "- To delete text, put the cursor after it and use the keyboard's backspace, or select "
    "it and press backspace.\n"
    "- To copy text, select it and tap copy in the bar; to paste, long-press the text box and "
    "tap paste.\n"
    "- When a dropdown of suggestions appears as you type, the field usually wants one of "
    "them: pick the best match.\n"
)


def _flag(value: bool) -> str:
    return "True" if value else "False"


def som_line(e: UIElement) -> str:
    """M3A's description of an element: its texts and its interaction flags."""
    parts = [f'"index": {e.index}']
    if e.text:
        parts.append(f'"text": "{e.text}"')
    if e.content_desc:
        parts.append(f'"content_description": "{e.content_desc}"')
    if e.hint:
        parts.append(f'"hint_text": "{e.hint}"')
    parts += [
        f'"is_clickable": {_flag(e.clickable)}',
        f'"is_long_clickable": {_flag(e.long_clickable)}',
        f'"is_editable": {_flag(e.editable)}',
    ]
    if e.scrollable:
        parts.append('"is_scrollable": True')
    if e.focusable:
        parts.append('"is_focusable": True')
    parts += ['"is_selected": False', f'"is_checked": {_flag(e.checked)}']
    return f"UI element {e.index}: {{{', '.join(parts)}}}"


def full_line(e: UIElement) -> str:
    """T3A's description of an element: every field of AndroidWorld's element record."""
    left, top, right, bottom = e.bounds
    return (
        f"UI element {e.index}: UIElement(text={e.text!r}, "
        f"content_description={e.content_desc!r}, class_name={e.class_name!r}, "
        f"bbox_pixels=BoundingBox(x_min={left}, x_max={right}, y_min={top}, y_max={bottom}), "
        f"hint_text={e.hint!r}, is_checked={e.checked}, is_checkable={e.checkable}, "
        f"is_clickable={e.clickable}, is_editable={e.editable}, is_enabled={e.enabled}, "
        f"is_focused={e.focused}, is_focusable={e.focusable}, "
        f"is_long_clickable={e.long_clickable}, is_scrollable={e.scrollable}, "
        f"is_selected=False, is_visible=True, package_name={e.package!r}, "
        f"resource_name={e.resource_id!r})"
    )


def valid(obs: Observation) -> list[UIElement]:
    """The elements worth listing (as the model is shown them: marked by observation
    defences): a real box that overlaps the screen."""
    return [
        e
        for e in obs.for_model
        if e.bounds[0] < e.bounds[2]
        and e.bounds[1] < e.bounds[3]
        and e.bounds[0] < obs.width
        and e.bounds[1] < obs.height
        and e.bounds[2] > 0
        and e.bounds[3] > 0
    ]


@dataclass(frozen=True)
class _Done:
    """An executed action waiting for its summary."""

    action: str
    reason: str
    elements: str
    marked: Image.Image | None


class AndroidWorldAgent:
    """The loop M3A and T3A share; ``multimodal`` tells them apart."""

    def __init__(self, provider: Provider, *, multimodal: bool, thinking: bool = False) -> None:
        self.provider = provider
        self.multimodal = multimodal
        self.thinking = thinking
        self.goal = ""
        self.history: list[str] = []
        self.done: _Done | None = None
        self.enter_next = False

    def reset(self, instruction: str) -> None:
        self.goal = instruction
        self.history = []
        self.done = None
        self.enter_next = False

    def describe(self, obs: Observation) -> str:
        """The element list of a screen, in the agent's own format."""
        line = som_line if self.multimodal else full_line
        return "".join(line(e) + "\n" for e in valid(obs))

    def marked(self, obs: Observation) -> Image.Image:
        """The screenshot with a mark on every listed element."""
        return draw_marks(obs.screenshot, [(e.index, e.bounds) for e in valid(obs)])

    def action_prompt(self, elements: str) -> str:
        """The action-selection prompt."""
        sep = "-" if self.multimodal else ":"  # the originals' spellings
        steps = [f"Step {i}{sep} {s}" for i, s in enumerate(self.history, start=1)]
        history = "\n".join(steps) or "You just started, no action has been performed yet."
        listing = (
            "The current screenshot and the same screenshot with bounding boxes and labels "
            "are also given to you.\n"
            "Here is a list of detailed information for some of the UI elements (some of "
            "them may not be visible on the current screen, so you cannot interact with them; "
            "scrolling may reveal them); the numeric indices match those in the labelled "
            "screenshot:\n"
            if self.multimodal
            else "Here is a list of descriptions of some UI elements on the current screen:\n"
        )
        closing = (
            "\nNow output an action from the list above in the correct JSON format, after the "
            "reason for choosing it. Your answer should look like:\n"
            'Reason: ...\nAction: {"action_type":...}\n'
        )
        if self.thinking:
            closing += thinking_note("Reason") + "\n"
        return (
            prefix(self.multimodal) + f"\nThe current user goal/request is: {self.goal}\n\n"
            f"Here is a history of what you have done so far:\n{history}\n\n"
            + listing
            + (elements or "Not available\n")
            + GUIDANCE
            + closing
            + "\nYour Answer:\n"
        )

    def summary_prompt(self, done: _Done, after: str) -> str:
        """The summary prompt for the last executed action."""
        if self.multimodal:
            what = (
                'You are given the screenshot from before the action (labelled "before" in '
                "its bottom-right corner), the action you chose with its reason, and the "
                'screenshot from after it (labelled "after").\n'
                "Here is the list of detailed information for some UI elements of the before "
                f"screenshot:\n{done.elements}"
                f"Here is the list for the after screenshot:\n{after}"
            )
            compare = "the two screenshots (and their element lists)"
            short = "- Keep it short (preferably under 50 words) and on a single line.\n"
        else:
            what = (
                "You are given the action you chose with its reason and the descriptions of "
                "the screens before and after it.\n"
                "Here is the description of the before screen:\n"
                f"{done.elements or 'Not available'}\n"
                f"Here is the description of the after screen:\n{after or 'Not available'}\n"
            )
            compare = "the descriptions of the two screens"
            short = "- Keep it short and on one line.\n"
        return (
            prefix(self.multimodal) + f"\nThe (overall) user goal/request is: {self.goal}\n"
            "Now summarise the latest step.\n"
            + what
            + f"This is the action you picked: {done.action}\n"
            f"Based on the reason: {done.reason}\n\n"
            f"By comparing {compare} and the action performed, give a brief summary of this "
            "step. The summary goes into the action history that later steps see, so include "
            "what will help choose future actions: what you meant to do and why, whether it "
            "worked, and if not what the reason might be (be critical: the action or the "
            "reason may have been wrong), what should or should not be done next, and so on. "
            "Also:\n"
            + short
            + "- Some actions (such as `answer` and `wait`) do not change the screen; assume "
            "they worked.\n"
            "- As it goes into the history, the summary can serve as memory for information to "
            "keep or to carry between apps.\n\n"
            "Summary of this step: "
        )

    def _summarise(self, calls: StepCalls, obs: Observation) -> str:
        done = self.done
        assert done is not None
        self.done = None
        after = self.describe(obs)
        images: tuple[bytes, ...] = ()
        if self.multimodal and done.marked is not None:
            before = corner_label(done.marked, "before")
            after_image = corner_label(self.marked(obs), "after")
            images = (
                frame(before, self.provider).png,
                frame(after_image, self.provider).png,
            )
        summary = calls.ask([Message("user", self.summary_prompt(done, after), images)])
        self.history.append(f"Action selected: {done.action}. {summary.strip()}")
        return summary.strip()

    def act(self, observation: Observation) -> AgentStep:
        if self.enter_next:
            self.enter_next = False
            return AgentStep(action=Action(action_type="keyboard_enter"), raw_output=ENTER_NOTE)
        calls = StepCalls(self.provider)
        summary = None
        if self.done is not None:
            summary = self._summarise(calls, observation)
        elements = self.describe(observation)
        marked = self.marked(observation) if self.multimodal else None
        images: tuple[bytes, ...] = ()
        if marked is not None:
            images = (
                frame(observation.screenshot, self.provider).png,
                frame(marked, self.provider).png,
            )
        output = calls.ask([Message("user", self.action_prompt(elements), images)])
        step = self._decide(output, observation, elements, marked)
        # As in AndroidWorld, only ``status`` ends the episode: after an ``answer`` the agent
        # goes on (its prompt says to answer, then finish with status).
        return AgentStep(
            action=step,
            raw_output=output,
            usage=calls.usage(),
            ends_episode=False if step.action_type == "answer" else None,
            summary=summary,
        )

    def _decide(
        self, output: str, obs: Observation, elements: str, marked: Image.Image | None
    ) -> Action:
        match = REASON_ACTION.search(output)
        if match is None:
            self.history.append(
                "Output for action selection is not in the correct format, so no action is "
                "performed."
            )
            return Action.invalid(output)
        reason = match.group(1).strip()
        action = parse_action("androidworld", output, Screen(obs.width, obs.height))
        if action.action_type == "invalid":
            self.history.append(
                "Can not parse the output to a valid action. Please make sure to pick the "
                "action from the list with required parameters (if any) in the correct JSON "
                "format!"
            )
            return action
        if action.index is not None and not 0 <= action.index < len(obs.elements):
            self.history.append(
                "The parameter index is out of range. Remember the index must be in the UI "
                "element list!"
            )
            return Action.invalid(output)
        if not action.terminal or action.action_type == "answer":  # summarised next step
            # The history quotes the action re-serialised, as AndroidWorld does.
            self.done = _Done(action_json(output), reason, elements, marked)
            self.enter_next = action.action_type == "input_text"
        return action


@register_agent("m3a")
def _build_m3a(ctx: AgentContext) -> AndroidWorldAgent:
    refuse_reflection(ctx, "m3a")
    return AndroidWorldAgent(require_provider(ctx, "m3a"), multimodal=True, thinking=ctx.thinking)


@register_agent("t3a")
def _build_t3a(ctx: AgentContext) -> AndroidWorldAgent:
    refuse_reflection(ctx, "t3a")
    return AndroidWorldAgent(require_provider(ctx, "t3a"), multimodal=False, thinking=ctx.thinking)
