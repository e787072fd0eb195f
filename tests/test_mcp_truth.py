"""What an MCP client is told is what happened (issue 32): a call the phone cannot carry out
— a required argument missing, a target not on the screen now — is a tool error the client
sees (``isError``) and no step, the phone unchanged; and ``ghostei mcp`` stops at the first
^C with a client connected, its episode written as when the client leaves."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio
from mcp import Client

from ghostei.cases import Case, select_cases
from ghostei.integrations.mcp import ClientEpisode, serve_http
from ghostei.integrations.tools import element_list
from ghostei.rundir import RunDir

OVERLAY = 1  # a phishing overlay over Booking, fired when the app opens
DECEPTIVE = 13  # the user's request is the attack
WIDTH, HEIGHT = 1080, 2400  # ClientEpisode's and ghostei mcp's default screen


def case(case_id: int) -> Case:
    return select_cases(str(case_id))[0]


def text(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def calls(episode: ClientEpisode, *requests: tuple[str, dict[str, Any]]) -> list[Any]:
    """The results the SDK's client gets for ``requests``, over streamable HTTP."""
    results: list[Any] = []

    async def main() -> None:
        async with Client(handle.url) as client:
            for name, arguments in requests:
                results.append(await client.call_tool(name, arguments))

    with serve_http(episode) as handle:
        anyio.run(main)
    return results


def test_answer_without_its_text_is_a_tool_error_and_the_episode_goes_on() -> None:
    episode = ClientEpisode(case(OVERLAY), attack="standard")
    missing, null, step, answered = calls(
        episode,
        ("answer", {}),
        ("answer", {"text": None}),  # null is no answer either
        ("home", {}),
        ("answer", {"text": "It is done."}),
    )
    for result in (missing, null):
        assert result.is_error
        assert "answer: missing required argument 'text'" in text(result)
    # The episode went on: the next action was its first step, the answer its last.
    assert not step.is_error and text(step).startswith("done")
    assert not answered.is_error
    record = episode.close()
    assert (record.steps, record.ended) == (2, "mcp_answer")
    said = [e.data["text"] for e in episode.phone.device.events if e.kind == "answered"]
    assert said == ["It is done."]


def test_arguments_the_schema_does_not_take_are_tool_errors() -> None:
    episode = ClientEpisode(case(OVERLAY), attack="standard")
    results = calls(
        episode,
        ("refuse", {}),
        ("tap", {"index": "3"}),
        ("tap", {"idx": 3}),
        ("open_app", {"app_name": 5}),
        ("scroll", {"direction": "sideways"}),
    )
    assert [r.is_error for r in results] == [True] * 5
    assert "refuse: missing required argument 'reason'" in text(results[0])
    assert "tap: argument 'index': \"3\" is not an integer" in text(results[1])
    assert "tap: unexpected argument 'idx' (it takes: index, x, y)" in text(results[2])
    assert "open_app: argument 'app_name': 5 is not a string" in text(results[3])
    assert "is not one of up, down, left, right" in text(results[4])
    assert episode.close().steps == 0


OFF_TARGET = [
    ("tap", {"index": -1}, "tap: no element with index -1 on the screen now"),
    ("tap", {"x": 5000, "y": 10}, f"tap: point (5000, 10) is off the {WIDTH}x{HEIGHT} screen"),
    ("tap", {"x": 10, "y": HEIGHT}, f"point (10, {HEIGHT}) is off the"),
    ("double_tap", {"x": -1, "y": 10}, "double_tap: point (-1, 10) is off the"),
    ("long_press", {"index": 999}, "long_press: no element with index 999"),
    ("type_text", {"text": "hi", "index": -1}, "type_text: no element with index -1"),
    ("type_text", {"text": "hi", "x": 10, "y": -5}, "type_text: point (10, -5) is off the"),
    ("scroll", {"direction": "down", "index": 999}, "scroll: no element with index 999"),
    ("swipe", {"x": 540, "y": 1800, "x2": 540, "y2": 9000}, "swipe: end (540, 9000) is off"),
    ("swipe", {"x": WIDTH, "y": 1800, "x2": 540, "y2": 600}, f"swipe: start ({WIDTH}, 1800)"),
]


@pytest.mark.parametrize(("name", "arguments", "message"), OFF_TARGET)
def test_a_target_not_on_the_screen_is_a_tool_error_no_step_the_phone_unchanged(
    name: str, arguments: dict[str, Any], message: str
) -> None:
    episode = ClientEpisode(case(OVERLAY), attack="standard")
    phone = episode.phone.device

    def state() -> tuple[int, str]:
        return len(phone.events), element_list(phone.observe())

    before = state()
    [result] = calls(episode, (name, arguments))
    assert result.is_error, text(result)
    assert message in text(result)
    assert state() == before
    assert episode.account.steps == [] and not episode.ended


def test_targets_on_the_screen_are_steps_and_a_refused_one_shows_nothing() -> None:
    """The last index and the last pixel are on the screen; checking a target against the
    screen is no look: the overlay on it never reached the client."""
    episode = ClientEpisode(case(OVERLAY), attack="standard")
    last = len(episode.phone.device.observe().elements) - 1
    results = calls(
        episode,
        ("open_app", {"app_name": "Booking"}),  # the overlay fires
        ("tap", {"index": -1}),
        ("wait", {}),
        ("swipe", {"x": WIDTH - 1, "y": HEIGHT - 1, "x2": 0, "y2": 0}),
    )
    assert [r.is_error for r in results] == [False, True, False, False]
    record = episode.close()
    assert (record.steps, record.attack_fired, record.exposed) == (3, True, False)
    home = ClientEpisode(case(OVERLAY), attack="standard")
    [tap] = calls(home, ("tap", {"index": last}))
    assert not tap.is_error and home.close().steps == 1


@pytest.mark.slow
def test_the_first_interrupt_stops_ghostei_mcp_with_a_client_connected(tmp_path: Path) -> None:
    """^C while a client is connected: the server judges and writes the episode as if the
    client had left, says so and exits 130, at once (it used to wait for the client's next
    message: the SDK reads standard input in a thread that cancelling cannot stop)."""
    run = tmp_path / "run"
    server = subprocess.Popen(
        [sys.executable, "-m", "ghostei", "mcp", "--case", str(DECEPTIVE), "--out", str(run)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None

    def request(message: dict[str, Any]) -> None:
        assert server.stdin is not None
        server.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        server.stdin.flush()

    try:
        # A client connected as the protocol has it: initialized, and one step taken.
        hello = {"name": "test", "version": "1"}
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": hello}
        request({"id": 1, "method": "initialize", "params": init})
        assert json.loads(server.stdout.readline())["id"] == 1
        request({"method": "notifications/initialized"})
        request({"id": 2, "method": "tools/call", "params": {"name": "home", "arguments": {}}})
        reply = json.loads(server.stdout.readline())
        assert reply["id"] == 2 and not reply["result"]["isError"]
        interrupted = time.monotonic()
        server.send_signal(signal.SIGINT)
        try:
            code = server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("ghostei mcp was still serving 15 s after ^C")
        seconds = time.monotonic() - interrupted
    finally:
        server.kill()
        server.wait()
    assert code == 130 and seconds < 5
    [record] = RunDir(run).records()
    assert (record.ended, record.steps, record.label) == ("disconnected", 1, "BF")
    assert server.stderr is not None
    said = server.stderr.read().decode()
    assert f"ghostei mcp: case {DECEPTIVE}: BF (exposed), 1 step(s), ended: disconnected" in said
