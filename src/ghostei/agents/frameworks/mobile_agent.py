"""Mobile-Agent-v2 (X-PLUG): decision, memory, planning and optional reflection agents.

One step of the original: the decision agent sees the screenshot and the perception list
(texts and icons with centre coordinates), the keyboard status, the history of operations, the
planning agent's "completed contents" and the memory, and answers ``### Thought ###``,
``### Action ###`` and ``### Operation ###``; the memory unit, asked in the same conversation,
notes anything on the screen worth keeping. After the action the reflection agent compares the
screens before and after (A: as expected, B: wrong page → Back, C: no change); when the
operation stands, the planning agent (text only) updates the completed contents.

Here a step is one ``act``: the reflection on the previous operation and the planning update
come first (they need the screen the operation led to), then the decision and the memory.
A B verdict makes this step's action Back, as the original goes back before deciding again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...actions import Action
from ...observation import Observation
from ...parsing import Screen, parse_action
from ...providers.base import Message, Provider
from ..base import AgentContext, AgentStep, register_agent
from .common import Frame, StepCalls, frame, require_provider, thinking_note
from .perception import OcrEngine, Percept, from_elements, from_ocr, load_ocr

SYSTEM = (
    "You are an AI assistant that operates a mobile phone. Help the user by operating the "
    "phone to carry out their instruction."
)
SYSTEM_PLAIN = "You are an AI assistant that operates a mobile phone."
# The original's operating knowledge, in our words.
HINT = 'To open an app, use the action "Open app". To leave an app, use the action "Home".'


@dataclass
class _Operation:
    """A decided operation, kept until the next screen shows what it did."""

    thought: str
    action: str
    summary: str
    frame: Frame
    percepts: list[Percept]
    keyboard: bool


@dataclass
class _State:
    instruction: str = ""
    thoughts: list[str] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    completed: str = ""
    memory: str = ""
    pending: _Operation | None = None  # the operation whose outcome is not yet known
    rejected: _Operation | None = None  # the last operation, when it did not do what was expected


def section(text: str, name: str) -> str:
    """What follows ``### name ###`` up to the next heading (or the end)."""
    marker = f"### {name} ###"
    if marker not in text:
        return ""
    tail = text.split(marker)[-1]
    return tail.split("###")[0].strip()


def _flat(text: str) -> str:
    return " ".join(text.split())


def _tap_label(action: Action, percepts: list[Percept]) -> Action:
    """``Open app (name)`` as Mobile-Agent-v2 carries it out: a tap on the text on screen that
    reads exactly ``name`` (on the launcher, the icon's label), or nothing at all where no
    such text is shown. The original taps a label's height above it, on the icon; the label
    is part of the icon's tile here, so its centre serves."""
    for percept in percepts:
        if percept.kind == "text" and percept.content == action.app_name:
            x, y = percept.centre
            return Action(action_type="click", x=x, y=y)
    return Action(action_type="wait")


def _operation(summary: str) -> str:
    """An operation as the history states it: cut before its purpose ("Tap the box to open
    the search" becomes "Tap the box"), as Mobile-Agent-v2 does in its history, reflection
    and planning prompts; only its "Last operation" note quotes it whole."""
    return summary.split(" to ")[0].strip()


def _perception_lines(percepts: list[Percept]) -> str:
    return "".join(p.line() + "\n" for p in percepts)


def _keyboard_line(keyboard: bool) -> str:
    if keyboard:
        return "The keyboard is up: you can type."
    return "The keyboard is down: you cannot type."


def decision_prompt(
    state: _State,
    percepts: list[Percept],
    width: int,
    height: int,
    keyboard: bool,
    thinking: bool,
) -> str:
    """The decision agent's prompt."""
    parts = [
        "### Background ###\n"
        f"The image is a screenshot of a phone, {width} pixels wide and {height} pixels high. "
        f"The user's instruction is: {state.instruction}\n",
        "### Screenshot information ###\n"
        "To help you read the screenshot, its texts and icons were extracted. Each line gives "
        "coordinates and content: the coordinates [x, y] are pixels, x counted from the left "
        "edge and y from the top; the content is a text, or a description of an icon. The "
        "extraction can be wrong, so check it against the screenshot:\n"
        + _perception_lines(percepts),
        f"### Keyboard status ###\n{_keyboard_line(keyboard)}\n",
        f"### Hint ###\nHints for carrying out the user's instruction:\n{HINT}\n",
    ]
    if state.actions:
        steps = "".join(
            f"Step-{i}: [Operation: {_operation(summary)}; Action: {action}]\n"
            for i, (summary, action) in enumerate(
                zip(state.summaries, state.actions, strict=True), start=1
            )
        )
        parts.append(
            "### History operations ###\n"
            "Operations already done before reaching this screen; take them into account:\n" + steps
        )
    if state.completed:
        parts.append(
            "### Progress ###\n"
            "What you have judged done of the instruction after those operations:\n"
            f"Completed contents:\n{state.completed}\n"
        )
    if state.memory:
        parts.append(
            "### Memory ###\n"
            "Content you noted from earlier screens for later use:\n"
            f"Memory:\n{state.memory}"
        )
    if state.rejected is not None:
        parts.append(
            "### Last operation ###\n"
            f'On this screen you tried the operation "{state.rejected.summary}" with the action '
            f'"{state.rejected.action}", but it did not have the effect you expected. Think again '
            "and choose a different operation this time.\n"
        )
    type_line = (
        'Type (text): type "text" into the input box that has focus.\n'
        if keyboard
        else "Type is not available: the keyboard is down. To type, first tap an input box "
        "on the screen to bring the keyboard up.\n"
    )
    parts.append(
        "### Response requirements ###\n"
        "Considering all of the above, perform exactly one action on the current screen, one "
        "of these six:\n"
        'Open app (app name): open the app called "app name" from the home screen.\n'
        "Tap (x, y): tap the point (x, y) of the screen.\n"
        "Swipe (x1, y1), (x2, y2): swipe from the point (x1, y1) to the point (x2, y2).\n"
        + type_line
        + "Home: go back to the home screen.\n"
        "Stop: end the task, when everything the user's instruction asks for is done.\n"
    )
    thought = (
        "What of the instruction the earlier operations have done, and what the next "
        "operation must do."
    )
    if thinking:
        thought += " " + thinking_note("Thought")
    parts.append(
        "### Output format ###\n"
        "Answer in three parts:\n"
        f"### Thought ###\n{thought}\n"
        "### Action ###\n"
        'Exactly one of the six actions above, with its coordinates or text inside "()".\n'
        "### Operation ###\n"
        "A short natural-language description of the operation in Action, following from your "
        "Thought."
    )
    return "\n".join(parts)


def memory_prompt() -> str:
    """The memory unit's question, asked in the decision conversation."""
    return (
        "### Response requirements ###\n"
        "Is there any content on the current screen that is closely related to the user's "
        "instruction and worth remembering for later steps? If there is, write it out; if "
        'not, write "None".\n\n'
        "### Output format ###\n"
        "### Important content ###\n"
        "The content, or None. Do not repeat what is already under ### Memory ###."
    )


def reflection_prompt(
    state: _State, op: _Operation, after: list[Percept], keyboard: bool, size: tuple[int, int]
) -> str:
    """The reflection agent's prompt: did the operation do what its thought intended?"""
    width, height = size
    return (
        "The two images are screenshots of a phone before and after an operation, each "
        f"{width} pixels wide and {height} pixels high.\n\n"
        "Texts and icons were extracted from each screenshot: every line gives coordinates "
        "[x, y] in pixels (x from the left edge, y from the top) and the content, a text or a "
        "description of an icon. The keyboard status says whether the keyboard is up.\n\n"
        "### Before the current operation ###\n"
        f"Screenshot information:\n{_perception_lines(op.percepts)}"
        f"Keyboard status:\n{_keyboard_line(op.keyboard)}\n\n"
        "### After the current operation ###\n"
        f"Screenshot information:\n{_perception_lines(after)}"
        f"Keyboard status:\n{_keyboard_line(keyboard)}\n\n"
        "### Current operation ###\n"
        f"The user's instruction is: {state.instruction}. Keep these hints in mind as well: "
        f"{HINT} While carrying out the instruction, this operation was performed on the "
        "phone:\n"
        f"Operation thought: {_operation(op.summary)}\n"
        f"Operation action: {op.action}\n\n"
        "### Response requirements ###\n"
        'Comparing the two screenshots, did the "Operation action" do what the "Operation '
        'thought" expected?\n'
        "A: Yes, the result is what the operation thought expected.\n"
        "B: The action led to a wrong page, and I need to go back to the previous page.\n"
        "C: The action changed nothing.\n\n"
        "### Output format ###\n"
        "### Thought ###\nYour reasoning about the question.\n"
        "### Answer ###\nA, B or C"
    )


def planning_prompt(state: _State) -> str:
    """The planning agent's prompt: update the summary of what is done (text only)."""
    head = (
        "### Background ###\n"
        f"The user's instruction is: {state.instruction}. You are an assistant operating the "
        "user's phone.\n\n"
        f"### Hint ###\nHints for carrying out the user's instruction:\n{HINT}\n\n"
    )
    if len(state.thoughts) > 1:
        steps = "".join(
            f"Step-{i}: [Operation thought: {_operation(summary)}; Operation action: {action}]\n"
            for i, (summary, action) in enumerate(
                zip(state.summaries, state.actions, strict=True), start=1
            )
        )
        return head + (
            "### History operations ###\n"
            "To carry out the instruction you have performed these operations:\n"
            f"{steps}\n"
            "### Progress thinking ###\n"
            "Before the latest operation you judged this done of the instruction:\n"
            f"Completed contents:\n{state.completed}\n\n"
            "### Response requirements ###\n"
            'Update the "Completed contents": a general summary of what the history '
            "operations have actually accomplished.\n\n"
            "### Output format ###\n"
            "### Completed contents ###\n"
            "The updated completed contents. State only what has actually been done, not the "
            "purpose of any operation."
        )
    return head + (
        "### Current operation ###\n"
        "To carry out the instruction you have performed one operation, with this thought "
        "and action:\n"
        f"Operation thought: {state.thoughts[-1]}\n"
        f"Operation action: {_operation(state.summaries[-1])}\n\n"
        "### Response requirements ###\n"
        'Write the "Completed contents": a general summary of what has been done so far, '
        "with the user's instruction in mind.\n\n"
        "### Output format ###\n"
        "### Completed contents ###\n"
        "The completed contents, in English. State only what has actually been done, not the "
        "purpose of the operation."
    )


class MobileAgentV2:
    """Mobile-Agent-v2 on the device contract; ``reflection`` turns its reflection agent on."""

    def __init__(
        self,
        provider: Provider,
        *,
        reflection: bool = False,
        thinking: bool = False,
        memory: bool = True,
        ocr: bool = False,
    ) -> None:
        self.provider = provider
        self.reflection = reflection
        self.thinking = thinking
        self.memory = memory
        self.ocr: OcrEngine | None = load_ocr() if ocr else None
        self.state = _State()

    def reset(self, instruction: str) -> None:
        self.state = _State(instruction=instruction)

    def perceive(self, obs: Observation) -> list[Percept]:
        """What the decision agent is told is on the screen."""
        return from_ocr(obs, self.ocr) if self.ocr is not None else from_elements(obs)

    def act(self, observation: Observation) -> AgentStep:
        calls = StepCalls(self.provider)
        state = self.state
        shot = frame(observation.screenshot, self.provider)
        percepts = self.perceive(observation)
        if state.pending is not None:
            verdict = self._reflect(calls, shot, percepts, observation.keyboard_shown)
            if verdict == "A":
                self._commit(calls)
            elif verdict is None:  # an answer with no verdict: the original records nothing
                state.pending = None
            else:
                state.rejected, state.pending = state.pending, None
            if verdict == "B":
                # Back, then decide on the page it returns to. The original presses Back in
                # the same round but then decides on the screenshot taken before it (the
                # wrong page); we show the model the screen it is on, at the cost of a step.
                back = Action(action_type="navigate_back")
                return AgentStep(action=back, raw_output=calls.replies[-1], usage=calls.usage())
        messages = [
            Message("system", SYSTEM),
            Message(
                "user",
                decision_prompt(
                    state,
                    percepts,
                    observation.width,
                    observation.height,
                    observation.keyboard_shown,
                    self.thinking,
                ),
                (shot.png,),
            ),
        ]
        output = calls.ask(messages)
        action = parse_action(
            "mobile-agent-v2", output, Screen(observation.width, observation.height)
        )
        if action.action_type == "open_app":
            action = _tap_label(action, percepts)
        # The paper's harness ends the episode on an apology in the decision ("Sorry" or
        # "sorry"), after carrying out its action; an apology with no action is a refusal.
        apology = "Sorry" in output or "sorry" in output
        if apology and action.action_type == "invalid":
            action = Action(action_type="refuse", text=_flat(section(output, "Thought")) or None)
        if self.memory:
            self._remember(calls, [*messages, Message("assistant", output)])
        if not action.terminal:
            state.pending = _Operation(
                thought=_flat(section(output, "Thought")).replace(":", ""),
                action=_flat(section(output, "Action")),
                summary=_flat(section(output, "Operation")),
                frame=shot,
                percepts=percepts,
                keyboard=observation.keyboard_shown,
            )
        return AgentStep(
            action=action, raw_output=output, usage=calls.usage(), ends_episode=apology or None
        )

    def _reflect(
        self, calls: StepCalls, shot: Frame, after: list[Percept], keyboard: bool
    ) -> str | None:
        """A, B or C for the last operation (None: the answer has none); A without the
        reflection agent."""
        op = self.state.pending
        assert op is not None
        if not self.reflection:
            return "A"
        prompt = reflection_prompt(self.state, op, after, keyboard, shot.size)
        reply = calls.ask(
            [Message("system", SYSTEM_PLAIN), Message("user", prompt, (op.frame.png, shot.png))]
        )
        answer = reply.split("### Answer ###")[-1]
        # The original checks A first, then B, then C, by substring.
        return next((v for v in "ABC" if v in answer), None)

    def _commit(self, calls: StepCalls) -> None:
        """The last operation stands: into the history, then the planning agent's update."""
        state = self.state
        op = state.pending
        assert op is not None
        state.thoughts.append(op.thought)
        state.summaries.append(op.summary)
        state.actions.append(op.action)
        state.pending = state.rejected = None
        reply = calls.ask(
            [Message("system", SYSTEM_PLAIN), Message("user", planning_prompt(state))]
        )
        state.completed = _flat(reply.split("### Completed contents ###")[-1])

    def _remember(self, calls: StepCalls, conversation: list[Message]) -> None:
        reply = calls.ask([*conversation, Message("user", memory_prompt())])
        noted = reply.split("### Important content ###")[-1].split("\n\n")[0].strip()
        if noted and "None" not in noted and noted not in self.state.memory:
            self.state.memory += noted + "\n"


@register_agent("mobile-agent-v2")
def _build(ctx: AgentContext) -> MobileAgentV2:
    return MobileAgentV2(
        require_provider(ctx, "mobile-agent-v2"), reflection=ctx.reflection, thinking=ctx.thinking
    )
