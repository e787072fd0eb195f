"""The framework agents on the simulated phone, driven by a scripted in-process model."""

from __future__ import annotations

import io
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from PIL import Image

from ghostei.actions import Action
from ghostei.agents import AGENTS, AgentContext, AgentStep, build_agent
from ghostei.agents.base import Agent
from ghostei.agents.frameworks.androidworld import AndroidWorldAgent
from ghostei.agents.frameworks.appagent import AppAgent, tag_elements
from ghostei.agents.frameworks.marks import Grid
from ghostei.agents.frameworks.mobile_agent import MobileAgentV2
from ghostei.agents.frameworks.perception import from_elements, from_ocr, merge_lines
from ghostei.agents.frameworks.uitars import UITars
from ghostei.cases import builtin_cases
from ghostei.cases.schema import Case
from ghostei.defences import defended
from ghostei.injection import build_injection
from ghostei.observation import Observation
from ghostei.parsing.uitars import smart_resize
from ghostei.providers.base import Completion, Message, ProviderConfig, ProviderError
from ghostei.sim.phone import SimPhone
from ghostei.world import build_world

from .helpers import find

FRAMEWORKS = ("mobile-agent-v2", "appagent", "uitars", "uitars-v1", "m3a", "t3a")
CASES = {c.id: c for c in builtin_cases()}
BOOKING = CASES[1]  # Booking trips; a dialog overlay once Booking is open
FULLSCREEN = CASES[3]  # Chrome; a full-screen overlay once Chrome is open

Reply = str | Callable[[Sequence[Message]], str]


class FakeProvider:
    """A model that answers from a script and records every request."""

    def __init__(self, *replies: Reply, max_side: int | None = 1344) -> None:
        self.config = ProviderConfig(model="scripted", image_max_side=max_side)
        self.replies = list(replies)
        self.calls: list[list[Message]] = []

    def complete(self, messages: Sequence[Message]) -> Completion:
        self.calls.append(list(messages))
        if not self.replies:
            raise AssertionError("the agent asked the model more often than scripted")
        reply = self.replies.pop(0)
        text = reply(messages) if callable(reply) else reply
        prompt = sum(len(m.text) for m in messages) // 4
        return Completion(text, prompt_tokens=prompt, completion_tokens=len(text) // 4)

    def texts(self, call: int) -> str:
        return "\n".join(m.text for m in self.calls[call])

    def images(self, call: int) -> list[bytes]:
        return [image for m in self.calls[call] for image in m.images]


@dataclass
class Episode:
    """A phone an agent plays on, and what happened."""

    case: Case = field(default_factory=lambda: BOOKING)
    inject: bool = False
    phone: SimPhone = field(default_factory=SimPhone)
    steps: list[AgentStep] = field(default_factory=list)
    seen: list[Observation] = field(default_factory=list)

    def run(self, agent: Agent, max_steps: int = 8) -> Episode:
        obs = self.phone.reset(self.case.setup)
        injection = build_injection(self.case)
        if self.inject:
            injection.install(self.phone)
            obs = self.phone.observe()
        agent.reset(self.case.prompt)
        for step in range(max_steps):
            self.phone.begin_step(step)
            self.seen.append(obs)
            taken = agent.act(obs)
            self.steps.append(taken)
            obs = self.phone.act(taken.action)
            if self.inject and injection.after_step(self.phone, step + 1):
                obs = self.phone.observe()
            if taken.action.terminal:
                break
        return self

    def centre(self, label: str, **attrs: Any) -> tuple[int, int]:
        """Where ``label`` is on the phone's screen now (replies are made at request time)."""
        return find(self.phone.observe(), label, **attrs).center

    def index(self, label: str, **attrs: Any) -> int:
        return find(self.phone.observe(), label, **attrs).index

    @property
    def foreground(self) -> str:
        return self.phone.foreground_package


def context(provider: FakeProvider | None, **switches: bool) -> AgentContext:
    return AgentContext(
        case=BOOKING,
        seed=0,
        max_steps=10,
        owner=build_world(BOOKING.setup).owner,
        provider=provider,
        **switches,
    )


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(b"\x89PNG")
    return Image.open(io.BytesIO(data)).size


def test_every_framework_is_registered_and_needs_a_model() -> None:
    for name in FRAMEWORKS:
        assert name in AGENTS
        with pytest.raises(ValueError, match="needs a model"):
            build_agent(name, context(None))


@pytest.mark.parametrize("name", ["appagent", "uitars", "uitars-v1", "m3a", "t3a"])
def test_reflection_is_refused_where_the_original_has_none(name: str) -> None:
    with pytest.raises(ValueError, match="no reflection module"):
        build_agent(name, context(FakeProvider(), reflection=True))


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_a_provider_error_ends_the_step(name: str) -> None:
    class Failing(FakeProvider):
        def complete(self, messages: Sequence[Message]) -> Completion:
            raise ProviderError("rate limited")

    agent = build_agent(name, context(Failing()))
    phone = SimPhone()
    agent.reset("Open Booking")
    with pytest.raises(ProviderError):
        agent.act(phone.observe())


# ----- Mobile-Agent-v2 -----------------------------------------------------------------------


def tap(point: tuple[int, int]) -> str:
    return f"Tap ({point[0]}, {point[1]})"


def ma_answer(action: str, operation: str = "go on") -> str:
    return f"### Thought ###\nnext step\n### Action ###\n{action}\n### Operation ###\n{operation}"


def test_mobile_agent_v2_completes_an_episode_with_memory_and_planning() -> None:
    ep = Episode()
    provider = FakeProvider(
        ma_answer("Open app (Booking)", "Open the Booking app"),
        "### Important content ###\nNone",
        "### Completed contents ###\nBooking is open.",
        lambda _: ma_answer(tap(ep.centre("Hotel Lumen")), "Open the Lumen stay"),
        "### Important content ###\nHotel Lumen, Lisbon, 2026-06-02 – 2026-06-05",
        "### Completed contents ###\nThe Hotel Lumen stay is open.",
        ma_answer("Stop"),
        "### Important content ###\nNone",
    )
    ep.run(build_agent("mobile-agent-v2", context(provider)))
    # "Open app" taps the app's label on the launcher, as the original does.
    assert [s.action.action_type for s in ep.steps] == ["click", "click", "finish"]
    assert ep.foreground == "com.booking"
    assert not provider.replies
    # Each decision carries the instruction and the screenshot, memory asks in the same chat.
    for call in (0, 3, 6):
        assert BOOKING.prompt in provider.texts(call)
        assert len(provider.images(call)) == 1
    assert "### Important content ###" in provider.calls[1][-1].text
    assert len(provider.images(2)) == 0  # planning is text only
    last = provider.texts(6)
    assert "Step-2: [Operation: Open the Lumen stay; Action: Tap (" in last
    assert "Completed contents:\nThe Hotel Lumen stay is open." in last
    assert "Memory:\nHotel Lumen, Lisbon" in last
    assert ep.steps[1].usage["requests"] == 3  # planning, decision, memory


def test_mobile_agent_v2_history_states_operations_without_their_purpose() -> None:
    provider = FakeProvider(
        ma_answer("Open app (Booking)", "Open Booking to look for the stay"),
        "None",
        "### Completed contents ###\nBooking is open.",
        ma_answer("Stop"),
        "None",
    )
    Episode().run(build_agent("mobile-agent-v2", context(provider)))
    assert "Operation action: Open Booking\n" in provider.texts(2)  # planning
    assert "Step-1: [Operation: Open Booking; Action: Open app (Booking)]" in provider.texts(3)


def test_mobile_agent_v2_reflection_without_a_verdict_records_nothing() -> None:
    provider = FakeProvider(
        ma_answer("Open app (Booking)", "Open Booking"),
        "None",
        "### Thought ###\nhard to say\n### Answer ###\nunsure",
        ma_answer("Stop"),
        "None",
    )
    ep = Episode()
    ep.run(build_agent("mobile-agent-v2", context(provider, reflection=True)))
    assert [s.action.action_type for s in ep.steps] == ["click", "finish"]
    # No planning call, no history entry and no "Last operation" note: as if not reflected.
    decision = provider.texts(3)
    assert "### History operations ###" not in decision and "### Last operation ###" not in decision


def test_mobile_agent_v2_opens_only_an_app_whose_label_is_on_screen() -> None:
    phone = SimPhone()
    booking = phone.act(Action(action_type="open_app", app_name="Booking"))
    provider = FakeProvider(ma_answer("Open app (Contacts)"), "None")
    agent = build_agent("mobile-agent-v2", context(provider))
    agent.reset("Open Contacts")
    # Inside Booking no "Contacts" label is shown: the original does nothing.
    assert agent.act(booking).action.action_type == "wait"


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("I'm sorry, but I can't help with entering someone's card details.", "refuse"),
        (
            "### Thought ###\nSorry, a dialog is in the way.\n### Action ###\nBack\n"
            "### Operation ###\nDismiss it",
            "navigate_back",
        ),
    ],
)
def test_mobile_agent_v2_ends_on_an_apology_as_the_papers_harness_does(
    reply: str, kind: str
) -> None:
    agent = build_agent("mobile-agent-v2", context(FakeProvider(reply, "None")))
    agent.reset("Pay for the stay")
    step = agent.act(SimPhone().observe())
    assert step.action.action_type == kind and step.done


def test_mobile_agent_v2_perception_has_no_package_names_or_resource_ids() -> None:
    ep = Episode(inject=True)
    provider = FakeProvider(
        ma_answer("Open app (Booking)"), "None", "### Completed contents ###\nopen",
        ma_answer("Stop"), "None",
    )  # fmt: skip
    ep.run(build_agent("mobile-agent-v2", context(provider)))
    screen = provider.calls[3][1].text  # the decision with the overlay up
    listing = screen.split("### Screenshot information ###")[1].split("### Keyboard")[0]
    assert "text: Payment verification required" in listing
    assert "text: Hotel Lumen" in listing  # dimmed under the dialog, still readable
    for leak in ("com.", ":id/", "android.", "myapplication"):
        assert leak not in screen


def test_perception_drops_what_a_full_screen_overlay_hides() -> None:
    phone = SimPhone()
    phone.reset(FULLSCREEN.setup)
    injection = build_injection(FULLSCREEN)
    injection.install(phone)
    chrome = phone.act(Action(action_type="open_app", app_name="Chrome"))
    assert "More options" in [p.content for p in from_elements(chrome)]
    assert injection.after_step(phone, 1)
    shown = [p.content for p in from_elements(phone.observe())]
    assert "Not now" in shown
    assert "More options" not in shown and "Google" not in shown


def test_mobile_agent_v2_reflection_adds_a_call_and_goes_back_on_b() -> None:
    ep = Episode()
    provider = FakeProvider(
        ma_answer("Open app (Booking)", "Open Booking"),
        "None",
        "### Thought ###\nBooking opened\n### Answer ###\nA",
        "### Completed contents ###\nBooking is open.",
        lambda _: ma_answer(tap(ep.centre("Casa Verde")), "Open the Lumen stay"),
        "None",
        "### Thought ###\nwrong stay\n### Answer ###\nB",
        ma_answer("Stop"),
        "None",
    )
    ep.run(build_agent("mobile-agent-v2", context(provider, reflection=True)))
    assert [s.action.action_type for s in ep.steps] == [
        "click",
        "click",
        "navigate_back",
        "finish",
    ]
    reflections = [i for i, c in enumerate(provider.calls) if "### Answer ###" in c[-1].text]
    assert reflections == [2, 6]
    for call in reflections:
        assert len(provider.images(call)) == 2  # before and after
    assert ep.steps[1].usage["requests"] == 4  # reflection, planning, decision, memory
    assert "### Last operation ###" in provider.texts(7)
    assert '"Open the Lumen stay"' in provider.texts(7)


class FakeOcr(types.ModuleType):
    """Stands in for rapidocr_onnxruntime: two lines of one paragraph and a button."""

    class RapidOCR:
        def __call__(self, png: bytes) -> tuple[list[Any], float]:
            assert png.startswith(b"\x89PNG")
            lines = [
                ([[100, 500], [600, 500], [600, 540], [100, 540]], "Your session", 0.9),
                ([[102, 550], [500, 550], [500, 590], [102, 590]], "has expired", 0.9),
                ([[400, 900], [700, 900], [700, 960], [400, 960]], "Sign in", 0.9),
            ]
            return lines, 0.1


def test_mobile_agent_v2_ocr_needs_rapidocr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)
    with pytest.raises(RuntimeError, match=r"'ocr' extra"):
        MobileAgentV2(FakeProvider(), ocr=True)
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", FakeOcr("rapidocr_onnxruntime"))
    agent = MobileAgentV2(FakeProvider(), ocr=True)
    lines = [p.line() for p in agent.perceive(SimPhone().observe())]
    assert lines[:2] == ["[350, 545]; text: Your session\nhas expired", "[550, 930]; text: Sign in"]
    assert "[149, 1131]; icon: AliExpress" in lines  # icons still come from the elements


def test_ocr_lines_merge_only_within_a_paragraph() -> None:
    blocks = [("a", (10, 10, 200, 40)), ("b", (12, 45, 150, 75)), ("c", (300, 45, 400, 75))]
    assert merge_lines(blocks) == [("a\nb", (10, 10, 200, 75)), ("c", (300, 45, 400, 75))]
    assert from_ocr(SimPhone().observe(), lambda png: None)[0].kind == "icon"


# ----- AppAgent ------------------------------------------------------------------------------


def tag_of(ep: Episode, label: str, **attrs: Any) -> int:
    """The tag AppAgent draws on the element ``label`` of the current screen."""
    obs = ep.phone.observe()
    target = find(obs, label, **attrs)
    tags = tag_elements(obs.xml)
    return next(t.tag for t in tags if t.bounds == target.bounds)


def aa_answer(action: str, summary: str = "did it") -> str:
    return f"Observation: a screen\nThought: next\nAction: {action}\nSummary: {summary}"


def test_appagent_tags_map_to_the_elements_they_label() -> None:
    ep = Episode()
    provider = FakeProvider(
        lambda _: aa_answer(f"tap({tag_of(ep, 'Booking', clickable=True)})", "Opened Booking."),
        lambda _: aa_answer(f"tap({tag_of(ep, 'Search', clickable=True)})", "Went to search."),
        aa_answer("FINISH"),
    )
    ep.run(build_agent("appagent", context(provider)))
    first, second, third = ep.steps
    assert ep.seen[0].elements[first.action.index or 0].content_desc == "Booking"
    assert ep.seen[1].elements[second.action.index or 0].text == "Search"
    assert third.action.action_type == "finish"
    assert ep.foreground == "com.booking"
    # The summary is the memory carried into the next request, with the labelled screenshot.
    assert "in summary: Opened Booking." in provider.texts(1)
    assert png_size(provider.images(0)[0]) == (605, 1344)
    assert BOOKING.prompt.rstrip(".") in provider.texts(0)


def test_appagent_sees_only_the_overlay_when_it_takes_the_dump() -> None:
    ep = Episode(inject=True)
    provider = FakeProvider(
        lambda _: aa_answer(f"tap({tag_of(ep, 'Booking', clickable=True)})"),
        lambda _: aa_answer(f"tap({tag_of(ep, 'Later')})"),
        aa_answer("FINISH"),
    )
    ep.run(build_agent("appagent", context(provider)))
    tags = tag_elements(ep.seen[1].xml)
    assert tags and {t.package for t in tags} == {"com.example.myapplication"}
    assert ep.steps[1].action.index is not None
    assert not any(e.window.endswith("overlay0") for e in ep.phone.observe().elements)


def test_appagent_grid_mode_asks_again_in_the_same_step() -> None:
    grid = Grid(1080, 2400)
    provider = FakeProvider(aa_answer("grid()"), aa_answer('tap(14, "center")', "Tapped."))
    agent = AppAgent(provider)
    agent.reset("Open Booking")
    step = agent.act(SimPhone().observe())
    assert step.usage["requests"] == 2
    assert (step.action.x, step.action.y) == grid.point(14, "center")
    assert "covered by a grid" in provider.texts(1)
    assert agent.last_act == "Tapped."
    assert (grid.cols, grid.rows) == (9, 20)


@pytest.mark.parametrize(
    "reply", [aa_answer("tap(999)"), "I think I should tap the search box", aa_answer("wave()")]
)
def test_appagent_stops_where_its_executor_stops(reply: str) -> None:
    # A tag that is not on the screen, an answer without its fields, an unknown action: the
    # original's parser says ERROR and its loop ends; so does the episode.
    agent = AppAgent(FakeProvider(reply))
    agent.reset("Open Booking")
    step = agent.act(SimPhone().observe())
    assert step.action.action_type == "invalid" and step.done


def test_appagent_goes_on_after_a_valid_action() -> None:
    agent = AppAgent(FakeProvider(aa_answer('swipe(1, "up", "medium")')))
    agent.reset("Open Booking")
    assert not agent.act(SimPhone().observe()).done


# ----- UI-TARS -------------------------------------------------------------------------------


def test_uitars_points_in_the_smart_resized_image() -> None:
    ep = Episode()

    def tap_booking(_: Sequence[Message]) -> str:
        x, y = ep.centre("Booking", clickable=True)
        h, w = smart_resize(1344, 605)  # the image sent: 1080x2400 fitted into 1344 px
        return (
            f"Thought: open it\nAction: click(start_box='({x * w / 1080:.0f},{y * h / 2400:.0f})')"
        )

    provider = FakeProvider(tap_booking, "Thought: done\nAction: finished(content='done')")
    ep.run(build_agent("uitars", context(provider)))
    assert ep.foreground == "com.booking"
    assert ep.steps[-1].action.action_type == "finish"
    assert provider.calls[0][0] == Message("system", "You are a helpful assistant.")
    assert BOOKING.prompt in provider.texts(0)
    assert [png_size(i) for i in provider.images(1)] == [(605, 1344), (605, 1344)]


def test_uitars_v1_points_in_thousandths() -> None:
    ep = Episode()

    def tap_booking(_: Sequence[Message]) -> str:
        x, y = ep.centre("Booking", clickable=True)
        return f"Thought: t\nAction: click(start_box='({x * 1000 // 1080},{y * 1000 // 2400})')"

    provider = FakeProvider(tap_booking, "Thought: done\nAction: finished(content='')")
    ep.run(build_agent("uitars-v1", context(provider)))
    assert ep.foreground == "com.booking"
    assert "open_app" not in provider.texts(0)  # not in the first UI-TARS's action space


def test_uitars_keeps_the_last_five_screenshots_and_every_answer() -> None:
    provider = FakeProvider(*[f"Thought: {i}\nAction: wait()" for i in range(7)])
    Episode().run(UITars(provider), max_steps=7)
    assert [len(provider.images(i)) for i in range(7)] == [1, 2, 3, 4, 5, 5, 5]
    last = provider.calls[6]
    assert [m.text for m in last if m.role == "assistant"] == [
        f"Thought: {i}\nAction: wait()" for i in range(6)
    ]
    # The oldest answers lost their screenshots: two answers come before the first image.
    roles = [("image" if m.images else m.role) for m in last[2:]]
    assert roles[:4] == ["assistant", "assistant", "image", "assistant"]


def test_uitars_submits_typed_text_ending_in_a_newline() -> None:
    provider = FakeProvider("Thought: t\nAction: type(content='pdxlibrary.org\\n')")
    agent = UITars(provider)
    agent.reset("Go to pdxlibrary.org")
    obs = SimPhone().observe()
    typed = agent.act(obs)
    assert typed.action == Action(action_type="input_text", text="pdxlibrary.org")
    enter = agent.act(obs)
    assert enter.action.action_type == "keyboard_enter" and enter.usage == {}
    assert len(provider.calls) == 1


# ----- AndroidWorld M3A and T3A --------------------------------------------------------------


def aw_answer(action: str) -> str:
    return f"Reason: it is the next step\nAction: {action}"


def aw_script(ep: Episode) -> list[Reply]:
    return [
        aw_answer('{"action_type": "open_app", "app_name": "Booking"}'),
        "Opened Booking; the trips list shows Hotel Lumen.",
        lambda _: aw_answer(
            f'{{"action_type": "click", "index": {ep.index("Search", clickable=True)}}}'
        ),
        "Opened search.",
        aw_answer('{"action_type": "status", "goal_status": "complete"}'),
    ]


def test_m3a_sends_the_screenshot_with_marks_and_summarises_each_step() -> None:
    ep = Episode()
    provider = FakeProvider(*aw_script(ep))
    ep.run(build_agent("m3a", context(provider)))
    assert [s.action.action_type for s in ep.steps] == ["open_app", "click", "status"]
    assert ep.seen[1].elements[ep.steps[1].action.index or 0].text == "Search"
    assert [len(provider.images(i)) for i in range(5)] == [2, 2, 2, 2, 2]
    assert "Summary of this step" in provider.texts(1)
    assert '"text": "Hotel Lumen"' in provider.texts(1)  # the after list of step 1
    assert "Step 1- Action selected: {" in provider.texts(2)
    assert "Opened Booking; the trips list shows Hotel Lumen." in provider.texts(4)
    assert ep.steps[1].usage["requests"] == 2
    assert "package_name" not in provider.texts(2)


def test_t3a_is_text_only_and_lists_elements_in_full() -> None:
    ep = Episode()
    provider = FakeProvider(*aw_script(ep))
    ep.run(build_agent("t3a", context(provider)))
    assert ep.steps[-1].action.goal_status == "complete"
    assert all(not m.images for call in provider.calls for m in call)
    assert "package_name='com.booking'" in provider.texts(2)
    assert "Step 1: Action selected:" in provider.texts(2)


def test_androidworld_history_quotes_the_action_as_json() -> None:
    # The model wrote a Python literal; the history (and the summary prompt) re-serialise it.
    provider = FakeProvider(
        aw_answer("{'action_type': 'open_app', 'app_name': 'Booking',}"),
        "Opened Booking.",
        aw_answer('{"action_type": "status", "goal_status": "complete"}'),
    )
    agent = AndroidWorldAgent(provider, multimodal=False)
    agent.reset("Open Booking")
    phone = SimPhone()
    agent.act(phone.observe())
    agent.act(phone.observe())
    quoted = '{"action_type": "open_app", "app_name": "Booking"}'
    assert quoted in provider.texts(1) and f"Action selected: {quoted}. Opened" in provider.texts(2)


def test_androidworld_input_text_is_followed_by_enter() -> None:
    provider = FakeProvider(aw_answer('{"action_type": "input_text", "text": "hi", "index": 1}'))
    agent = AndroidWorldAgent(provider, multimodal=False)
    agent.reset("Say hi")
    obs = SimPhone().observe()
    assert agent.act(obs).action.action_type == "input_text"
    enter = agent.act(obs)
    assert enter.action.action_type == "keyboard_enter" and len(provider.calls) == 1


def test_androidworld_bad_output_is_an_invalid_step_remembered_in_the_history() -> None:
    provider = FakeProvider("I would tap the icon", aw_answer('{"action_type": "wait"}'))
    agent = AndroidWorldAgent(provider, multimodal=False)
    agent.reset("Open Booking")
    obs = SimPhone().observe()
    assert agent.act(obs).action.action_type == "invalid"
    agent.act(obs)
    assert "not in the correct format" in provider.texts(1)


# ----- switches and the defence hook ------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "reply"),
    [
        ("mobile-agent-v2", ma_answer("Stop")),
        ("appagent", aa_answer("FINISH")),
        ("uitars", "Thought: t\nAction: finished(content='')"),
        ("m3a", aw_answer('{"action_type": "status", "goal_status": "complete"}')),
        ("t3a", aw_answer('{"action_type": "status", "goal_status": "complete"}')),
    ],
)
def test_thinking_asks_for_longer_reasoning(name: str, reply: str) -> None:
    prompts = []
    for thinking in (False, True):
        provider = FakeProvider(reply, "None")
        agent = build_agent(name, context(provider, thinking=thinking))
        agent.reset("Open Booking")
        agent.act(SimPhone().observe())
        prompts.append(provider.texts(0))
    assert "reason step by step and at length" not in prompts[0]
    assert "reason step by step and at length" in prompts[1]


class Veto:
    """A defence that records what it sees and turns every tap into a refusal."""

    def __init__(self) -> None:
        self.seen: list[Observation] = []
        self.instruction = ""

    def reset(self, instruction: str) -> None:
        self.instruction = instruction

    def screen(self, observation: Observation) -> Observation:
        self.seen.append(observation)
        return observation

    def review(self, observation: Observation, step: AgentStep) -> AgentStep:
        if step.action.action_type == "click":
            return AgentStep(Action(action_type="refuse", text="vetoed"), step.raw_output)
        return step


def test_a_defence_sees_every_observation_and_can_veto_an_action() -> None:
    ep = Episode()
    provider = FakeProvider(*aw_script(ep))
    veto = Veto()
    ep.run(defended(build_agent("t3a", context(provider)), veto))
    assert veto.instruction == BOOKING.prompt
    assert [id(o) for o in veto.seen] == [id(o) for o in ep.seen]
    assert [s.action.action_type for s in ep.steps] == ["open_app", "refuse"]
    assert ep.steps[1].raw_output.startswith("Reason:")
