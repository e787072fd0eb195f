"""AppAgent (Tencent QQGY Lab), its task executor without app documentation.

Each round the original dumps the UI hierarchy with uiautomator (the active window only),
takes its clickable nodes and then its focusable ones (dropping any whose centre is within
30 px of a node already taken), draws their numbers 1, 2, … at their centres on the
screenshot, and asks for ``Observation/Thought/Action/Summary``; the summary is the only memory
carried to the next round. ``grid()`` switches to a numbered grid over the screen for the next
request; here that request is made in the same step, since the grid changes nothing on the
phone.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from ...actions import Action
from ...observation import Bounds, Observation
from ...parsing import Screen, parse_action
from ...parsing.base import unquote
from ...providers.base import Message, Provider
from ..base import AgentContext, AgentStep, register_agent
from .common import StepCalls, frame, refuse_reflection, require_provider, thinking_note
from .marks import Grid, draw_tags

MIN_DIST = 30  # px between element centres below which AppAgent keeps only the first
BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
SUMMARY = re.compile(r"\bSummary\s*:\s*(.*)", re.S | re.I)
ACTION_LINE = re.compile(r"\bAction\s*:\s*(.*?)(?:\n\s*\w+\s*:|$)", re.S | re.I)


@dataclass(frozen=True)
class Tagged:
    """A UI element AppAgent numbered: its tag, bounds, package and why it was taken."""

    tag: int
    bounds: Bounds
    package: str
    attr: str  # "clickable" or "focusable"

    @property
    def centre(self) -> tuple[int, int]:
        """Where the tag is drawn and where a tap on it lands."""
        left, top, right, bottom = self.bounds
        return (left + right) // 2, (top + bottom) // 2


def _close(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 <= MIN_DIST**2


def _nodes_with(root: ET.Element, attr: str) -> list[tuple[Bounds, str]]:
    """Nodes whose ``attr`` is true, in document order, thinned by MIN_DIST."""
    kept: list[tuple[Bounds, str]] = []
    for node in root.iter("node"):
        if node.get(attr) != "true":
            continue
        match = BOUNDS.fullmatch(node.get("bounds", ""))
        if match is None:
            continue
        left, top, right, bottom = (int(v) for v in match.groups())
        centre = ((left + right) // 2, (top + bottom) // 2)
        if any(_close(centre, ((b[0] + b[2]) // 2, (b[1] + b[3]) // 2)) for b, _ in kept):
            continue
        kept.append(((left, top, right, bottom), node.get("package", "")))
    return kept


def tag_elements(xml: str) -> list[Tagged]:
    """The elements AppAgent labels, from a uiautomator dump, numbered from 1."""
    root = ET.fromstring(xml.encode("utf-8"))
    clickable = _nodes_with(root, "clickable")
    chosen = [(b, p, "clickable") for b, p in clickable]
    for bounds, package in _nodes_with(root, "focusable"):
        centre = ((bounds[0] + bounds[2]) // 2, (bounds[1] + bounds[3]) // 2)
        if not any(_close(centre, ((b[0] + b[2]) // 2, (b[1] + b[3]) // 2)) for b, _ in clickable):
            chosen.append((bounds, package, "focusable"))
    return [Tagged(i, b, p, a) for i, (b, p, a) in enumerate(chosen, start=1)]


def element_for(tagged: Tagged, obs: Observation) -> int | None:
    """The observation's index of a tagged node: same bounds and package, topmost first."""
    for element in reversed(obs.elements):
        if element.bounds == tagged.bounds and element.package == tagged.package:
            return element.index
    return None


OUTPUT_FORMAT = (
    "Answer in exactly this format:\n"
    "Observation: <what you see in the image>\n"
    "Thought: <what the next step toward the task should be>\n"
    "Action: <one function call with its parameters; or FINISH if the task is complete or "
    "nothing is left to do. Nothing else may appear here.>\n"
    "Summary: <your past actions together with this one, in one or two sentences, without "
    "{numbers}>\n"
    "Take one action at a time: call the function directly."
)


def task_prompt(task: str, last_act: str, thinking: bool) -> str:
    """The request for a screenshot with numbered elements."""
    note = "\n" + thinking_note("Thought") if thinking else ""
    return (
        "You are an agent trained to carry out everyday tasks on a smartphone. You are given a "
        "screenshot of the phone whose interactive UI elements carry numeric tags, starting "
        "from 1; each tag sits at the centre of its element.\n\n"
        "You control the phone by calling these functions:\n\n"
        "1. tap(element: int)\n"
        "Taps the UI element with the given numeric tag.\n"
        "Example: tap(5) taps the element tagged 5.\n\n"
        "2. text(text_input: str)\n"
        "Types text_input into the input field that has focus; wrap it in double quotes.\n"
        'Example: text("Hello, world!") types "Hello, world!". Typing normally works once a '
        "keyboard shows in the lower half of the screen.\n\n"
        "3. long_press(element: int)\n"
        "Presses and holds the UI element with the given numeric tag.\n"
        "Example: long_press(5) long-presses the element tagged 5.\n\n"
        "4. swipe(element: int, direction: str, dist: str)\n"
        "Swipes on the UI element with the given numeric tag, usually a scrollable list or a "
        'slider. direction is "up", "down", "left" or "right" and dist is "short", "medium" '
        'or "long", each in double quotes.\n'
        'Example: swipe(21, "up", "medium") swipes up on element 21 over a medium distance.\n\n'
        "5. grid()\n"
        "Call this when the element you need has no numeric tag and no tagged element can "
        "help. A numbered grid is then laid over the screen so that you can tap, long-press or "
        "swipe any part of it.\n\n"
        f"The task you need to complete is to {task.rstrip('. ')}. Your past actions toward it, in "
        f"summary: {last_act}\n"
        "Given the tagged screenshot, decide on the function call that moves the task forward. "
        + OUTPUT_FORMAT.format(numbers="the numeric tags")
        + note
    )


def grid_prompt(task: str, last_act: str, thinking: bool) -> str:
    """The request for a screenshot under AppAgent's numbered grid."""
    note = "\n" + thinking_note("Thought") if thinking else ""
    where = "center, top-left, top, top-right, left, right, bottom-left, bottom or bottom-right"
    return (
        "You are an agent trained to carry out everyday tasks on a smartphone. You are given a "
        "screenshot of the phone covered by a grid of small areas, each numbered in its "
        "top-left corner.\n\n"
        "You control the phone by calling these functions:\n\n"
        "1. tap(area: int, subarea: str)\n"
        f"Taps a part of the numbered area; subarea is one of {where}, in double quotes.\n"
        'Example: tap(5, "center") taps the centre of area 5.\n\n'
        "2. long_press(area: int, subarea: str)\n"
        "Presses and holds a part of the numbered area; subarea as for tap.\n"
        'Example: long_press(7, "top-left") long-presses the top-left part of area 7.\n\n'
        "3. swipe(start_area: int, start_subarea: str, end_area: int, end_subarea: str)\n"
        "Swipes from a part of one area to a part of another, e.g. to scroll a list or move a "
        "slider; subareas as for tap.\n"
        'Example: swipe(21, "center", 25, "right") swipes from the centre of area 21 to the '
        "right part of area 25.\n\n"
        f"The task you need to complete is to {task.rstrip('. ')}. Your past actions toward it, in "
        f"summary: {last_act}\n"
        "Given the gridded screenshot, decide on the function call that moves the task "
        "forward. " + OUTPUT_FORMAT.format(numbers="the area numbers") + note
    )


GRID_CALL = re.compile(r"(tap|long_press|swipe)\s*\((.*)\)", re.S | re.I)


def parse_grid(text: str, grid: Grid) -> Action:
    """An action from an answer in grid mode; ``invalid`` when it is not one."""
    match = ACTION_LINE.search(text)
    line = (match.group(1) if match else text).replace("`", "").strip()
    if line.upper().startswith("FINISH"):
        return Action(action_type="finish")
    call = GRID_CALL.search(line)
    try:
        if call is None:
            raise ValueError("no grid call")
        name = call.group(1).lower()
        args = [unquote(a) for a in call.group(2).split(",")]
        x, y = grid.point(int(args[0]), args[1] if len(args) > 1 else "center")
        if name == "tap":
            return Action(action_type="click", x=x, y=y)
        if name == "long_press":
            return Action(action_type="long_press", x=x, y=y)
        x2, y2 = grid.point(int(args[2]), args[3] if len(args) > 3 else "center")
        return Action(action_type="swipe", x=x, y=y, x2=x2, y2=y2)
    except (ValueError, IndexError):
        return Action.invalid(text)


def _summary(text: str) -> str | None:
    match = SUMMARY.search(text)
    return " ".join(match.group(1).split()) if match else None


def _is_grid_call(text: str) -> bool:
    match = ACTION_LINE.search(text)
    line = (match.group(1) if match else "").replace("`", "").strip()
    return line.lower().startswith("grid(")


def _step(action: Action, output: str, calls: StepCalls) -> AgentStep:
    # AppAgent's executor stops at an answer it cannot parse (its parser's ERROR), or at a
    # tag that is not on the screen, where other frameworks note the failure and go on.
    return AgentStep(
        action=action,
        raw_output=output,
        usage=calls.usage(),
        ends_episode=True if action.action_type == "invalid" else None,
    )


class AppAgent:
    """AppAgent's task executor: numbered elements from the uiautomator dump, or a grid."""

    def __init__(self, provider: Provider, *, thinking: bool = False) -> None:
        self.provider = provider
        self.thinking = thinking
        self.task = ""
        self.last_act = "None"

    def reset(self, instruction: str) -> None:
        self.task = instruction
        self.last_act = "None"

    def act(self, observation: Observation) -> AgentStep:
        calls = StepCalls(self.provider)
        tags = tag_elements(observation.xml)
        labelled = draw_tags(observation.screenshot, [t.centre for t in tags])
        prompt = task_prompt(self.task, self.last_act, self.thinking)
        output = calls.ask([Message("user", prompt, (frame(labelled, self.provider).png,))])
        if _is_grid_call(output):
            return self._grid_step(calls, observation)
        action = self._untag(
            parse_action("appagent", output, Screen(observation.width, observation.height)),
            tags,
            observation,
            output,
        )
        summary = _summary(output)
        if summary is not None and action.action_type != "invalid":
            self.last_act = summary
        return _step(action, output, calls)

    def _grid_step(self, calls: StepCalls, obs: Observation) -> AgentStep:
        # The original carries "grid" as the summary into the grid request.
        self.last_act = "grid"
        grid = Grid(obs.width, obs.height)
        image = frame(grid.draw(obs.screenshot), self.provider)
        prompt = grid_prompt(self.task, self.last_act, self.thinking)
        output = calls.ask([Message("user", prompt, (image.png,))])
        action = parse_grid(output, grid)
        summary = _summary(output)
        if summary is not None and action.action_type != "invalid":
            self.last_act = summary
        return _step(action, "\n\n".join(calls.replies), calls)

    @staticmethod
    def _untag(action: Action, tags: list[Tagged], obs: Observation, output: str) -> Action:
        """Replace a tag number by the element it labels (or its centre, if not an element)."""
        if action.index is None:
            return action
        if not 1 <= action.index <= len(tags):
            return Action.invalid(output)  # a tag that is not on the screen
        tagged = tags[action.index - 1]
        index = element_for(tagged, obs)
        if index is not None:
            return action.model_copy(update={"index": index})
        x, y = tagged.centre
        return action.model_copy(update={"index": None, "x": x, "y": y})


@register_agent("appagent")
def _build(ctx: AgentContext) -> AppAgent:
    refuse_reflection(ctx, "appagent")
    return AppAgent(require_provider(ctx, "appagent"), thinking=ctx.thinking)
