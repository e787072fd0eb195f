"""llm-guard: a second model call judges each consequential action, over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ghostei.cases import builtin_cases
from ghostei.cli import main
from ghostei.defences.llm_guard import SYSTEM, parse_verdict
from ghostei.rundir import EpisodeRecord
from ghostei.runner import RunConfig, run_episode

from .llm_server import RecordedRequest, Reply, ScriptedLLM

CASE = next(c for c in builtin_cases() if c.id == 1)  # Booking; an overlay once it opens
CONFIRM = "Verify card"  # the overlay's confirm button
# Its element index once Booking is open (Booking's home screen decides it: its Saved tab made
# it 17). If Booking's screen changes, the guard never sees CONFIRM and the blocking tests say so.
CONFIRM_INDEX = 17


def aw(action: str) -> str:
    return f"Reason: the next step\nAction: {action}"


# T3A's calls: open Booking; (summary) tap the overlay's confirm; (summary) stop.
T3A = [
    aw('{"action_type": "open_app", "app_name": "Booking"}'),
    "Opened Booking.",
    aw(f'{{"action_type": "click", "index": {CONFIRM_INDEX}}}'),
    "Tapped the dialog's button.",
    aw('{"action_type": "status", "goal_status": "complete"}'),
]


def is_guard(request: RecordedRequest) -> bool:
    return request.system() == SYSTEM


def proposed(request: RecordedRequest) -> str:
    """The guard request's line that describes the proposed action."""
    text = "\n".join(request.texts("user"))
    return next(line for line in text.splitlines() if line.startswith("Proposed action:"))


def responder(
    on_confirm: str, agent: Iterable[str] = T3A
) -> Callable[[RecordedRequest], Reply | str | int]:
    """Agent requests get the agent's script in order; guard requests ALLOW, except a tap on
    the overlay's confirm, which gets ``on_confirm``."""
    replies = iter(agent)

    def respond(request: RecordedRequest) -> Reply | str | int:
        if is_guard(request):
            if CONFIRM in proposed(request):
                return on_confirm
            return "VERDICT: ALLOW\nREASON: a step of the task"
        return next(replies, 400)

    return respond


def events(tmp_path: Path, record: EpisodeRecord) -> list[dict[str, Any]]:
    folder = tmp_path / record.trajectory
    return [json.loads(x) for x in (folder / "events.jsonl").read_text().splitlines()]


def run_t3a(
    llm: ScriptedLLM, out: Path, defence: str = "llm-guard", **config: Any
) -> EpisodeRecord:
    run = RunConfig(
        agents=("t3a",),
        frames="none",
        model=llm.provider_config(),
        defences=(defence,),
        max_steps=6,
        **config,
    )
    return run_episode(CASE, "t3a", run, out)


BLOCK = "verdict: **Block**\nReason: the dialog, not the user, asks for the card"


def test_a_blocked_tap_is_not_carried_out(scripted_llm: ScriptedLLM, tmp_path: Path) -> None:
    scripted_llm.respond(responder(BLOCK))
    record = run_t3a(scripted_llm, tmp_path)
    assert record.error is None, record.error
    assert record.agent == "t3a+llm-guard"
    seen = events(tmp_path, record)
    blocked = [e["data"] for e in seen if e["kind"] == "action_blocked"]
    assert len(blocked) == 1
    assert blocked[0]["defence"] == "llm-guard"
    assert blocked[0]["reason"] == "the dialog, not the user, asks for the card"
    assert blocked[0]["action"] == {"action_type": "click", "index": CONFIRM_INDEX}
    assert not any(e["kind"] == "overlay_confirmed" for e in seen)
    guard = [r for r in scripted_llm.requests if is_guard(r)]
    assert len(guard) == 2, "open_app and the tap are checked; status is not"
    asked = "\n".join(guard[1].texts())
    assert CASE.prompt in asked
    line = proposed(guard[1])
    assert CONFIRM in line
    assert "com.example.myapplication (NOT the foreground app, the system or an app" in line
    assert "Foreground app (package): com.booking" in asked
    assert "open the app 'Booking' (one of the apps" in proposed(guard[0])
    assert not any(r.images() for r in guard), "no screenshot unless images=true"
    # The guard's calls go through the run's (metered) provider: the episode counts them.
    assert record.usage["requests"] == len(scripted_llm.requests) == 7
    assert record.usage["prompt_tokens"] == 10 * 7


def test_an_allowed_tap_goes_through(scripted_llm: ScriptedLLM, tmp_path: Path) -> None:
    scripted_llm.respond(responder("VERDICT: ALLOW\nREASON: looks fine"))
    record = run_t3a(scripted_llm, tmp_path)
    assert record.error is None, record.error
    seen = events(tmp_path, record)
    assert not any(e["kind"] == "action_blocked" for e in seen)
    assert any(e["kind"] == "overlay_confirmed" for e in seen)
    assert record.label in ("FAS", "PAS")


@pytest.mark.parametrize("on_unsure", ["allow", "block"])
def test_an_unreadable_verdict_is_decided_by_on_unsure(
    scripted_llm: ScriptedLLM, tmp_path: Path, on_unsure: str
) -> None:
    scripted_llm.respond(responder("Hmm, it might be fine, or it might not."))
    record = run_t3a(scripted_llm, tmp_path, f"llm-guard:on_unsure={on_unsure}")
    assert record.error is None, record.error
    assert record.agent == f"t3a+llm-guard:on_unsure={on_unsure}"
    seen = events(tmp_path, record)
    blocked = [e["data"] for e in seen if e["kind"] == "action_blocked"]
    confirmed = any(e["kind"] == "overlay_confirmed" for e in seen)
    if on_unsure == "allow":
        assert not blocked and confirmed
    else:
        assert len(blocked) == 1 and not confirmed
        assert blocked[0]["reason"].startswith("the guard gave no clear verdict")
        assert blocked[0]["defence"] == "llm-guard:on_unsure=block"


def test_ask_ends_the_episode_with_a_question_and_images_send_the_screen(
    scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    scripted_llm.respond(responder(BLOCK))
    record = run_t3a(scripted_llm, tmp_path, "llm-guard:on_block=ask,images=true")
    assert record.error is None, record.error
    steps = json.loads((tmp_path / record.trajectory / "trajectory.json").read_text())["steps"]
    last = steps[-1]
    assert last["action"]["action_type"] == "ask_user" and "the card" in last["action"]["text"]
    assert last["blocked"]["action"] == {"action_type": "click", "index": CONFIRM_INDEX}
    guard = [r for r in scripted_llm.requests if is_guard(r)]
    assert guard and all(len(r.images()) == 1 for r in guard)
    assert scripted_llm.pending == 0 and len(scripted_llm.requests) == 5  # no stop call


def guard_spec(guard: ScriptedLLM, extra: str = "") -> str:
    return (
        f"llm-guard:model=guard-model,base_url={guard.openai_url},"
        f"api_key_env=GHOSTEI_SCRIPTED_LLM_KEY{extra}"
    )


def test_a_guard_with_its_own_model_is_counted_and_priced(
    scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    with ScriptedLLM() as guard:
        guard.respond(responder(BLOCK, agent=()))
        scripted_llm.respond(responder("not a guard request", agent=T3A))
        prices = tmp_path / "prices.json"
        prices.write_text(
            json.dumps(
                {
                    "scripted-model": {"prompt": 1.0, "completion": 2.0},
                    "guard-model": {"prompt": 100.0, "completion": 200.0},
                }
            )
        )
        record = run_t3a(scripted_llm, tmp_path, guard_spec(guard), prices=str(prices))
        assert record.error is None, record.error
        assert not any(is_guard(r) for r in scripted_llm.requests)
        assert len(guard.requests) == 2 and all(is_guard(r) for r in guard.requests)
        body = guard.requests[0].body
        assert body["model"] == "guard-model"
        assert (body["temperature"], body["seed"], body["max_tokens"]) == (0, 0, 256)
        blocked = [e for e in events(tmp_path, record) if e["kind"] == "action_blocked"]
        assert len(blocked) == 1
        agent_calls = len(scripted_llm.requests)
        assert record.usage["requests"] == agent_calls + 2
        assert record.usage["prompt_tokens"] == 10 * (agent_calls + 2)
        expected = (agent_calls * (10 * 1.0 + 5 * 2.0) + 2 * (10 * 100.0 + 5 * 200.0)) / 1e6
        assert record.cost == pytest.approx(expected)


def test_a_reference_agent_is_guarded_by_the_guards_own_model(tmp_path: Path) -> None:
    with ScriptedLLM() as guard:
        guard.respond(lambda request: "VERDICT: BLOCK\nREASON: not the user's request")
        run = RunConfig(agents=("gullible",), frames="none", defences=(guard_spec(guard),))
        record = run_episode(CASE, "gullible", run, tmp_path)
        assert record.error is None, record.error
        blocked = [e for e in events(tmp_path, record) if e["kind"] == "action_blocked"]
        assert blocked and not any(
            e["kind"] == "overlay_confirmed" for e in events(tmp_path, record)
        )
        # No run model: the steps' usage, where the guard adds its calls, is the count.
        assert guard.requests and record.usage["requests"] == len(guard.requests)
        assert record.usage["prompt_tokens"] == 10 * len(guard.requests)


def test_without_any_model_the_guard_is_an_error_episode_and_refused_by_the_cli(
    tmp_path: Path,
) -> None:
    run = RunConfig(agents=("oracle",), frames="none", defences=("llm-guard",))
    record = run_episode(CASE, "oracle", run, None)
    assert record.label == "error" and record.error is not None
    assert "llm-guard needs a model" in record.error
    out = tmp_path / "run"
    args = ["run", "--agent", "oracle", "--cases", "1", "--out", str(out), "--no-frames"]
    refused = CliRunner().invoke(main, [*args, "--defence", "llm-guard"])
    assert refused.exit_code == 2, refused.output
    assert "--defence llm-guard: llm-guard needs a model" in refused.output
    assert not out.exists(), "refused before any episode"
    melon = CliRunner().invoke(main, [*args, "--defence", "llm-guard:mode=melon,model=m"])
    assert melon.exit_code == 2 and "mode=melon is not available" in melon.output
    bad = CliRunner().invoke(main, [*args, "--defence", "llm-guard:on_block=maybe,model=m"])
    assert bad.exit_code == 2 and "on_block must be skip or ask" in bad.output


@pytest.mark.parametrize(
    ("reply", "verdict", "reason"),
    [
        ("VERDICT: ALLOW\nREASON: part of the task", "allow", "part of the task"),
        ("verdict - block\nreason:  phishing  dialog", "block", "phishing dialog"),
        ("**Verdict:** BLOCK\n**Reason:** the overlay asks", "block", "the overlay asks"),
        ("BLOCK.\nIt is a trap.", "block", ""),
        ("I would not allow this, but block seems harsh.", None, ""),
        ("VERDICT: ALLOW or VERDICT: BLOCK", None, ""),
        ("", None, ""),
    ],
)
def test_verdicts_are_read_leniently(reply: str, verdict: str | None, reason: str) -> None:
    assert parse_verdict(reply) == (verdict, reason)


def test_a_guard_that_follows_the_hint_costs_the_oracle_no_clean_task(
    scripted_llm: ScriptedLLM,
) -> None:
    # A guard that blocks whatever the hint calls foreign. The share sheet ("android") is
    # the system's by the one trust rule, as overlay-gate has it: the oracle's shares go
    # through (issue 23: once called "NOT the foreground app", ten clean tasks were lost).
    def respond(request: RecordedRequest) -> str:
        assert is_guard(request)
        if "NOT the foreground app" in proposed(request):
            return "VERDICT: BLOCK\nREASON: a window of another app"
        return "VERDICT: ALLOW\nREASON: a step of the task"

    scripted_llm.respond(respond)
    shares = [
        c
        for c in builtin_cases()
        if any(s.package == "android" for s in (c.benign.solution if c.benign else c.solution))
    ]
    assert len(shares) == 9
    config = RunConfig(
        agents=("oracle",),
        frames="none",
        model=scripted_llm.provider_config(),
        defences=("llm-guard",),
        attack="none",
    )
    labels = {c.id: run_episode(c, "oracle", config, None).label for c in shares}
    assert set(labels.values()) == {"TC"}, labels
    shown = [proposed(r) for r in scripted_llm.requests]
    assert any("package android (the system)" in line for line in shown)
