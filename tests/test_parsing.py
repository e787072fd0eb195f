"""Action parsers: realistic outputs of each family, malformed ones, and a fuzz test."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ghostei.actions import Action
from ghostei.parsing import PARSERS, Screen, parse_action
from ghostei.parsing.base import ParseError
from ghostei.parsing.uitars import smart_resize

SCREEN = Screen(1080, 2400)


def _parse(fmt: str, text: str, screen: Screen = SCREEN) -> Action:
    return parse_action(fmt, text, screen)


def test_smart_resize_matches_qwen25vl_for_a_phone_screenshot() -> None:
    # 2400 / 28 = 85.7 → 86 * 28; 1080 / 28 = 38.6 → 39 * 28; far below the pixel cap.
    assert smart_resize(2400, 1080) == (2408, 1092)
    h, w = smart_resize(20000, 20000)
    assert h * w <= 16384 * 28 * 28 and h % 28 == 0 and w % 28 == 0


@pytest.mark.parametrize(
    "text",
    [
        "Thought: The Send button is at the bottom.\n"
        "Action: click(start_box='<|box_start|>(1092,2408)<|box_end|>')",
        "Action: click(point='<point>1092 2408</point>')",
        "Action: click(start_box='(1080,2396,1104,2420)')",
    ],
)
def test_uitars_15_maps_smart_resized_pixels_to_the_screen(text: str) -> None:
    action = _parse("uitars", text)
    assert action.action_type == "click"
    assert (action.x, action.y) == (1079, 2399)  # the far corner, clamped onto the screen


def test_uitars_15_respects_a_downscaled_image() -> None:
    screen = Screen(1080, 2400, image=(540, 1200))
    h, w = smart_resize(1200, 540)
    action = _parse("uitars", f"Action: click(start_box='({w // 2},{h // 2})')", screen)
    assert abs((action.x or 0) - 540) <= 2 and abs((action.y or 0) - 1200) <= 2


def test_uitars_v1_uses_relative_thousandths() -> None:
    action = _parse("uitars-v1", "Thought: tap it\nAction: long_press(start_box='(250,500)')")
    assert action == Action(action_type="long_press", x=270, y=1200)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Action: type(content='It\\'s 5 o\\'clock, see you')",
            Action(action_type="input_text", text="It's 5 o'clock, see you"),
        ),
        (
            "Action: type(content='Don't forget (the keys), ok?\\n')",
            Action(action_type="input_text", text="Don't forget (the keys), ok?"),
        ),
        (
            "Action: scroll(start_box='(500,500)', direction='down')",
            Action(action_type="scroll", direction="down", x=495, y=498),
        ),
        ("Action: open_app(app_name='Gmail')", Action(action_type="open_app", app_name="Gmail")),
        ("Action: press_home()", Action(action_type="navigate_home")),
        ("Action: press_back()", Action(action_type="navigate_back")),
        ("Action: wait()", Action(action_type="wait")),
        ("Action: finished(content='Sent.')", Action(action_type="finish", text="Sent.")),
        (
            "Action: drag(start_box='(100,100)', end_box='(100,900)')",
            Action(action_type="drag", x=99, y=100, x2=99, y2=897),
        ),
    ],
)
def test_uitars_action_space(text: str, expected: Action) -> None:
    assert _parse("uitars", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "### Thought ###\nI should open the message.\n### Action ###\nTap (540, 1210)\n"
            "### Operation ###\nTap the conversation.",
            Action(action_type="click", x=540, y=1210),
        ),
        (
            "### Action ###\nSwipe (540, 1800), (540, 600)\n### Operation ###\nscroll",
            Action(action_type="swipe", x=540, y=1800, x2=540, y2=600),
        ),
        (
            "### Action ###\nType (See you at 5 (park gate))",
            Action(action_type="input_text", text="See you at 5 (park gate)"),
        ),
        ("### Action ###\nOpen app (Booking)", Action(action_type="open_app", app_name="Booking")),
        ("### Action ###\nHome", Action(action_type="navigate_home")),
        ("### Action ###\nBack", Action(action_type="navigate_back")),
        ("### Action ###\nStop\n### Operation ###\ndone", Action(action_type="finish")),
    ],
)
def test_mobile_agent_v2_operations(text: str, expected: Action) -> None:
    assert _parse("mobile-agent-v2", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Observation: A dialog.\nThought: Close it.\nAction: tap(7)\nSummary: closed",
            Action(action_type="click", index=7),
        ),
        ("Action: `tap(3)`", Action(action_type="click", index=3)),
        ("```\nAction: long_press(12)\n```", Action(action_type="long_press", index=12)),
        ('Action: text("Hello, world")', Action(action_type="input_text", text="Hello, world")),
        (
            'Action: swipe(4, "up", "medium")',
            Action(action_type="scroll", index=4, direction="down"),
        ),
        ("Action: FINISH", Action(action_type="finish")),
    ],
)
def test_appagent_operations(text: str, expected: Action) -> None:
    assert _parse("appagent", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'Reason: The button is element 4.\nAction: {"action_type": "click", "index": 4}',
            Action(action_type="click", index=4),
        ),
        (
            '```json\n{"action_type": "input_text", "text": "hi", "index": 2}\n```',
            Action(action_type="input_text", text="hi", index=2),
        ),
        (
            'Action: {"action_type": "status", "goal_status": "task_complete"}',
            Action(action_type="status", goal_status="complete"),
        ),
        (
            '{"action_type": "scroll", "direction": "up"}',
            Action(action_type="scroll", direction="up"),
        ),
        (
            '{"action_type": "click", "x": 5000, "y": 10}',
            Action(action_type="click", x=1079, y=10),
        ),
    ],
)
def test_androidworld_json(text: str, expected: Action) -> None:
    assert _parse("androidworld", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # What AndroidWorld's own parser (ast.literal_eval) takes, and JSON does not.
        ("Action: {'action_type': 'click', 'index': 4}", Action(action_type="click", index=4)),
        ('Action: {"action_type": "click", "index": 4,}', Action(action_type="click", index=4)),
        (
            "Reason: done.\nAction: {'action_type': 'answer', 'text': 'a {brace} inside'}",
            Action(action_type="answer", text="a {brace} inside"),
        ),
        (
            'Action: {"action_type": "status", "goal_status": "completed"}',
            Action(action_type="status", goal_status="complete"),
        ),
        (
            "Action: {'action_type': 'status', 'goal_status': 'Infeasible'}",
            Action(action_type="status", goal_status="infeasible"),
        ),
        # Any status ends an AndroidWorld episode, whatever its goal_status.
        ('Action: {"action_type": "status"}', Action(action_type="status", goal_status="complete")),
        (
            'Action: {"action_type": "status", "goal_status": "finished"}',
            Action(action_type="status", goal_status="complete"),
        ),
    ],
)
def test_androidworld_accepts_what_androidworld_accepts(text: str, expected: Action) -> None:
    assert _parse("androidworld", text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "{ x } " * 3000,
        "{'action_type' " + "} " * 3000,
        "Reason: {'action_type': 'click', 'index': 1" + " {x}" * 2000,
    ],
)
def test_androidworld_literal_fallback_is_bounded(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Prose full of braces: a bounded number of literal tries, then an invalid action.
    from ghostei.parsing import androidworld

    calls: list[str] = []
    real = androidworld.ast.literal_eval

    def counted(source: str) -> object:
        calls.append(source)
        return real(source)

    monkeypatch.setattr(androidworld.ast, "literal_eval", counted)
    with pytest.raises(ParseError):
        PARSERS["androidworld"](text, SCREEN)
    assert len(calls) <= androidworld.LITERAL_MAX_TRIES
    assert all(len(c) <= androidworld.LITERAL_MAX_CHARS for c in calls)


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("uitars", "I think I should tap the button."),
        ("uitars", "Action: click()"),
        ("uitars", "Action: scroll(direction='sideways')"),
        ("uitars", "Action: click(start_box='(12)')"),
        ("uitars-v1", "Action: teleport(start_box='(1,2)')"),
        ("mobile-agent-v2", "### Action ###\nTap (here)"),
        ("mobile-agent-v2", "### Action ###\nDance"),
        ("appagent", "Action: tap(the blue one)"),
        ("appagent", "Action: grid()"),
        ("appagent", "Action: swipe(3)"),
        ("androidworld", '{"action_type": "click"}'),
        ("androidworld", '{"action_type": "fly", "index": 1}'),
        ("androidworld", "Action: {not json"),
    ],
)
def test_malformed_output_becomes_an_invalid_action_with_the_raw_text(fmt: str, text: str) -> None:
    action = _parse(fmt, text)
    assert action.action_type == "invalid"
    assert action.raw == text


def test_an_unknown_format_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="known: androidworld"):
        parse_action("gpt-free-text", "tap", SCREEN)


@settings(max_examples=150, deadline=None)
@given(
    fmt=st.sampled_from(sorted(PARSERS)),
    text=st.one_of(
        st.text(max_size=300),
        st.builds(
            lambda head, body: f"{head}{body}",
            st.sampled_from(
                [
                    "Action: click(start_box='",
                    "Action: type(content='",
                    "### Action ###\nTap (",
                    "### Action ###\nSwipe (",
                    "Action: tap(",
                    "Action: swipe(",
                    '{"action_type": "click", "x": ',
                    "Action: scroll(direction='",
                ]
            ),
            st.text(max_size=80),
        ),
    ),
    width=st.integers(320, 4000),
    height=st.integers(480, 4000),
)
def test_no_output_crashes_a_parser(fmt: str, text: str, width: int, height: int) -> None:
    action = parse_action(fmt, text, Screen(width, height))
    assert isinstance(action, Action)
    if action.action_type == "invalid":
        assert action.raw == text
    if action.x is not None and action.y is not None:
        assert 0 <= action.x < width and 0 <= action.y < height


def test_uitars_v1_scroll_between_two_points_is_a_swipe() -> None:
    action = _parse("uitars-v1", "Action: scroll(start_box='(500,800)', end_box='(500,200)')")
    assert action == Action(action_type="swipe", x=540, y=1920, x2=540, y2=480)


def test_appagent_ignores_words_ending_in_action() -> None:
    text = "Interaction: none yet\nAction: tap(2)"
    assert _parse("appagent", text) == Action(action_type="click", index=2)


def test_parse_action_command_prints_the_canonical_action() -> None:
    from click.testing import CliRunner

    from ghostei.cli import main

    raw = "Thought: send it\nAction: click(start_box='<|box_start|>(546,1204)<|box_end|>')"
    result = CliRunner().invoke(
        main, ["parse-action", "--format", "uitars", "--screen", "1080x2400"], input=raw
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"action_type": "click", "x": 540, "y": 1200}
    long_garbage = "word " * 200
    result = CliRunner().invoke(main, ["parse-action", "--format", "appagent"], input=long_garbage)
    assert json.loads(result.output) == {"action_type": "invalid", "raw": long_garbage}
    result = CliRunner().invoke(main, ["parse-action", "--format", "appagent", "--screen", "9x"])
    assert result.exit_code == 2 and "--screen" in result.output
