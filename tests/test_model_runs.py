"""Framework agents end to end: the runner and CLI against a real local HTTP model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ghostei.agents.frameworks import PROMPT_SIZES
from ghostei.cases import builtin_cases
from ghostei.cli import main
from ghostei.rundir import RunDir
from ghostei.runner import RunConfig, run_episode

from .helpers import cli
from .llm_server import Reply, ScriptedLLM

CASE = next(c for c in builtin_cases() if c.id == 1)  # Booking, an overlay once it opens
SECRET = "sk-test-DO-NOT-LEAK-4f1c9a"


def ma(action: str) -> str:
    return f"### Thought ###\nnext\n### Action ###\n{action}\n### Operation ###\n{action}"


def aw(action: str) -> str:
    return f"Reason: the next step\nAction: {action}"


# Per framework: the replies for "open Booking, then stop" (or just stop where the
# framework has no open-app action), in the order its calls are made.
SCRIPTS: dict[str, list[str]] = {
    "mobile-agent-v2": [
        ma("Open app (Booking)"),
        "### Important content ###\nNone",
        "### Completed contents ###\nBooking is open.",
        ma("Stop"),
        "### Important content ###\nNone",
    ],
    "appagent": ["Observation: home\nThought: done\nAction: FINISH\nSummary: nothing to do"],
    "uitars": [
        "Thought: open it\nAction: open_app(app_name='Booking')",
        "Thought: done\nAction: finished(content='')",
    ],
    "uitars-v1": ["Thought: done\nAction: finished(content='')"],
    "m3a": [
        aw('{"action_type": "open_app", "app_name": "Booking"}'),
        "Opened Booking.",
        aw('{"action_type": "status", "goal_status": "complete"}'),
    ],
    "t3a": [
        aw('{"action_type": "open_app", "app_name": "Booking"}'),
        "Opened Booking.",
        aw('{"action_type": "status", "goal_status": "complete"}'),
    ],
}


def _config(llm: ScriptedLLM, agent: str, **model: object) -> RunConfig:
    return RunConfig(
        agents=(agent,), frames="none", model=llm.provider_config(**model), max_steps=6
    )


@pytest.mark.parametrize("agent", sorted(SCRIPTS))
def test_each_framework_completes_an_episode_over_http(
    scripted_llm: ScriptedLLM, agent: str
) -> None:
    scripted_llm.push(*SCRIPTS[agent])
    record = run_episode(CASE, agent, _config(scripted_llm, agent), None)
    assert record.error is None, record.error
    assert record.label != "error"
    assert scripted_llm.pending == 0, "the agent made fewer calls than scripted"
    first = scripted_llm.requests[0]
    assert any(CASE.prompt in text for text in first.texts())
    if agent == "t3a":
        assert not any(r.images() for r in scripted_llm.requests), "T3A is text only"
    else:
        assert first.images(), "the request carries the screenshot"
    assert first.body["temperature"] == 0 and first.body["seed"] == 0
    assert record.usage["requests"] == len(scripted_llm.requests)
    assert record.usage["prompt_tokens"] == 10 * len(scripted_llm.requests)


def test_anthropic_provider_runs_a_framework(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.push(*SCRIPTS["uitars"])
    config = _config(
        scripted_llm, "uitars", provider="anthropic", base_url=scripted_llm.anthropic_url
    )
    record = run_episode(CASE, "uitars", config, None)
    assert record.error is None, record.error
    assert {r.api for r in scripted_llm.requests} == {"anthropic"}


def test_two_429s_are_retried_and_the_episode_completes(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.push(
        Reply.error(429, retry_after=0), Reply.error(429, retry_after=0), *SCRIPTS["uitars-v1"]
    )
    config = _config(scripted_llm, "uitars-v1", backoff_cap=0.01)
    record = run_episode(CASE, "uitars-v1", config, None)
    assert record.error is None and record.label != "error"
    assert record.usage["requests"] == 3 and record.usage["completions"] == 1


def _run(llm: ScriptedLLM, out: Path, *extra: str) -> Result:
    return cli(
        "run",
        *("--agent", "uitars-v1", "--cases", "1-2", "--out", str(out), "--workers", "1"),
        *("--model", "scripted-model", "--base-url", llm.openai_url, "--no-frames"),
        *("--api-key-env", "GHOSTEI_TEST_KEY", "--backoff-cap", "0.01"),
        *extra,
    )


def test_a_failing_provider_makes_error_episodes_never_safe(
    scripted_llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GHOSTEI_TEST_KEY", SECRET)
    scripted_llm.always(500)
    result = _run(scripted_llm, tmp_path / "run", "--max-retries", "2")
    assert result.exit_code == 1, result.output
    records = RunDir(tmp_path / "run").records()
    assert [r.label for r in records] == ["error", "error"]
    assert all("500" in (r.error or "") for r in records)
    # Two episodes; the same 500 twice ends an episode's retries (not all three attempts).
    assert len(scripted_llm.requests) == 2 * 2
    report = json.loads(cli("report", str(tmp_path / "run"), "--format", "json").stdout)
    metrics = report["agents"]["uitars-v1"]
    assert metrics["errors"] == 2 and metrics["n"] == 0 and metrics["tc"] == 0.0
    assert metrics["requests"] == len(scripted_llm.requests) == 4  # every attempt counted
    # The key went to the server and nowhere else.
    assert scripted_llm.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
    assert SECRET not in result.output


def test_the_cache_replays_a_run_without_a_request(
    scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    scripted_llm.push(*SCRIPTS["uitars-v1"] * 2)
    cache = str(tmp_path / "cache")
    first = _run(scripted_llm, tmp_path / "a", "--cache-dir", cache)
    assert first.exit_code == 0, first.output
    made = len(scripted_llm.requests)
    assert made == 2
    second = _run(scripted_llm, tmp_path / "b", "--cache-dir", cache)
    assert second.exit_code == 0, second.output
    assert len(scripted_llm.requests) == made, "the replay called the API"
    labels = [[r.label for r in RunDir(tmp_path / d).records()] for d in ("a", "b")]
    assert labels[0] == labels[1]
    replayed = RunDir(tmp_path / "b").records()
    assert all(r.usage["requests"] == 0 and r.usage["cached"] == 1 for r in replayed)


def test_the_manifest_records_temperature_and_seed_but_no_key(
    scripted_llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GHOSTEI_TEST_KEY", SECRET)
    scripted_llm.push(*SCRIPTS["uitars-v1"] * 2)
    assert _run(scripted_llm, tmp_path / "run", "--seed", "7").exit_code == 0
    manifest = RunDir(tmp_path / "run").manifest()
    model = manifest["config"]["model"]
    assert model["temperature"] == 0.0 and model["seed"] == 7
    assert model["api_key_env"] == "GHOSTEI_TEST_KEY"
    assert SECRET not in json.dumps(manifest)


def test_framework_agents_need_a_model() -> None:
    result = cli("run", "--agent", "m3a", "--cases", "1")
    assert result.exit_code == 2
    assert "--model" in result.output


MY_AGENT = '''
from ghostei.actions import Action
from ghostei.agents import AgentStep


class TapNothingAgent:
    """Looks once, then says it is done."""

    def __init__(self, ctx):
        self.steps = 0

    def reset(self, instruction):
        self.instruction = instruction

    def act(self, observation):
        self.steps += 1
        if self.steps == 1:
            return AgentStep(Action(action_type="open_app", app_name="Booking"), "open")
        return AgentStep(Action(action_type="finish"), "done")
'''


@pytest.mark.parametrize("workers", ["1", "2"])
def test_bring_your_own_agent_from_a_file(tmp_path: Path, workers: str) -> None:
    source = tmp_path / "elsewhere" / "my_agent.py"
    source.parent.mkdir()
    source.write_text(MY_AGENT, encoding="utf-8")
    spec = f"{source}:TapNothingAgent"
    result = cli(
        "run", "--agent", spec, "--cases", "1-2", "--out", str(tmp_path / "run"),
        "--workers", workers, "--no-frames",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    records = RunDir(tmp_path / "run").records()
    assert {r.agent for r in records} == {spec} and len(records) == 2
    assert all(r.label != "error" and r.steps == 2 for r in records)


def test_a_missing_user_agent_is_a_clear_error(tmp_path: Path) -> None:
    for spec, words in [
        (f"{tmp_path}/nope.py:Agent", "no file"),
        ("json:NoSuchAgent", "has no 'NoSuchAgent'"),
        ("definitely_not_a_module_xyz:Agent", "importing"),
        ("unknown-agent", "unknown agent"),
    ]:
        result = cli("run", "--agent", spec, "--cases", "1")
        assert result.exit_code == 2, result.output
        assert words in result.output and "Traceback" not in result.output


def test_an_installed_package_can_register_an_agent_by_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ghostei.agents import resolve_agent

    (tmp_path / "polite_agents.py").write_text(MY_AGENT, encoding="utf-8")
    dist = tmp_path / "polite_agents-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: polite-agents\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[ghostei.agents]\npolite = polite_agents:TapNothingAgent\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    factory = resolve_agent("polite")
    assert getattr(factory, "__name__", "") == "TapNothingAgent"
    result = cli("run", "--agent", "polite", "--cases", "1", "--out", str(tmp_path / "run"),
                 "--workers", "1", "--no-frames")  # fmt: skip
    assert result.exit_code == 0, result.output


def test_a_bad_price_table_is_refused_before_any_episode(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text('{"gpt-4o": {"prompt": "cheap"}}', encoding="utf-8")
    result = cli("run", "--agent", "oracle", "--cases", "1", "--prices", str(prices),
                 "--out", str(tmp_path / "run"))  # fmt: skip
    assert result.exit_code == 2
    assert "--prices" in result.output and "prices.json" in result.output
    assert not (tmp_path / "run").exists()


def test_a_server_slower_than_timeout_gives_visible_retries_then_error(
    scripted_llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: Any
) -> None:
    monkeypatch.setenv("GHOSTEI_TEST_KEY", SECRET)
    scripted_llm.always(Reply(text="Action: press_home()", delay=1.0))
    result = _run(
        scripted_llm,
        tmp_path / "run",
        *("--timeout", "0.2", "--max-tokens", "77", "--max-retries", "1", "--cases", "1"),
    )
    assert result.exit_code == 1, result.output
    [record] = RunDir(tmp_path / "run").records()
    assert record.label == "error" and "timed out after 0.2s" in (record.error or "")
    assert len(scripted_llm.requests) == 2  # the attempt and its one retry
    assert scripted_llm.requests[0].body["max_tokens"] == 77
    # The retry was said as it happened, naming the episode, the attempt and the cause.
    said = capfd.readouterr().err + result.output
    assert "retry (case 1, agent uitars-v1): attempt 1 of 2 failed" in said
    assert "timed out after 0.2s" in said
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["config"]["model"]["timeout"] == 0.2
    assert manifest["config"]["model"]["max_tokens"] == 77


@pytest.mark.parametrize("command", ["run", "judge"])
def test_timeout_and_max_tokens_are_options(command: str) -> None:
    text = cli(command, "--help").output
    assert "--timeout" in text and "--max-tokens" in text


def test_resume_refuses_options_that_differ_from_the_run(
    scripted_llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GHOSTEI_TEST_KEY", SECRET)
    scripted_llm.always(Reply.error(503, "down"))
    out = tmp_path / "run"
    _run(scripted_llm, out, "--max-retries", "0", "--cases", "1")
    resume = ("run", "--resume", "--out", str(out))
    other = cli(
        *resume,
        *("--model", "another-model", "--base-url", "http://127.0.0.1:9/v1"),
        *("--max-tokens", "99", "--cases", "2"),
    )
    assert other.exit_code == 2 and "Traceback" not in other.output
    for said in (
        "--model 'another-model': the run has 'scripted-model'",
        "--base-url 'http://127.0.0.1:9/v1'",
        "--max-tokens 99: the run has 1024",
        "--cases [2]: the run has [1]",
    ):
        assert said in other.output, other.output
    assert len(RunDir(out).records()) == 1  # nothing ran
    # The same options as the manifest's, and those that change only how it runs, are fine.
    scripted_llm.always(Reply(text="Thought: done\nAction: finished()"))
    same = cli(
        *resume,
        *("--model", "scripted-model", "--cases", "1", "--workers", "1", "--concurrency", "1"),
    )
    assert same.exit_code == 0, same.output
    # One line per episode: the replacement took the error's place, with its attempts' usage.
    lines = (out / RunDir.RECORDS).read_text().splitlines()
    assert len(lines) == 1
    [record] = RunDir(out).records()
    assert record.label != "error" and record.attempts == 2
    assert record.usage["requests"] == len(scripted_llm.requests)
    report = json.loads(cli("report", str(out), "--format", "json").stdout)
    assert report["agents"]["uitars-v1"]["requests"] == len(scripted_llm.requests)


@pytest.mark.parametrize("agent", ["t3a", "m3a"])
def test_androidworld_agents_go_on_after_answer_and_keep_their_summaries(
    scripted_llm: ScriptedLLM, agent: str, tmp_path: Path
) -> None:
    # AndroidWorld: answer the question, then finish with status; each step is summarised.
    scripted_llm.push(
        aw('{"action_type": "answer", "text": "Your booking is at Hotel Lumen."}'),
        "Answered with the hotel's name.",
        aw('{"action_type": "status", "goal_status": "complete"}'),
    )
    record = run_episode(CASE, agent, _config(scripted_llm, agent), tmp_path)
    assert record.error is None, record.error
    doc = json.loads((tmp_path / record.trajectory / "trajectory.json").read_text())
    actions = [s["action"]["action_type"] for s in doc["steps"]]
    assert actions == ["answer", "status"], doc["steps"]
    assert record.steps == 2 and scripted_llm.pending == 0
    assert doc["steps"][0]["summary"] == "Answered with the hotel's name."
    events = [
        json.loads(line)["kind"]
        for line in (tmp_path / record.trajectory / "events.jsonl").read_text().splitlines()
    ]
    assert "answered" in events and events[-1] == "finished"


def test_other_agents_still_end_on_answer(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.push("Thought: it is Hotel Lumen\nAction: finished(content='Hotel Lumen')")
    record = run_episode(CASE, "uitars-v1", _config(scripted_llm, "uitars-v1"), None)
    assert record.steps == 1 and scripted_llm.pending == 0


def _start(llm: ScriptedLLM, out: Path, base_url: str, agent: str = "uitars-v1") -> Result:
    return CliRunner().invoke(
        main,
        [
            *("run", "--agent", agent, "--cases", "1", "--out", str(out), "--workers", "1"),
            *("--model", "scripted-model", "--base-url", base_url, "--no-frames"),
            *("--api-key-env", "GHOSTEI_TEST_KEY", "--timeout", "5"),
        ],
    )


def _refused(result: Result, out: Path, *said: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for text in said:
        assert text in " ".join(result.output.split()), result.output
    assert not (out / "episodes.jsonl").exists(), "an episode ran"


def test_the_endpoint_is_checked_before_any_episode(
    scripted_llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GHOSTEI_TEST_KEY", SECRET)
    root = scripted_llm.openai_url.removesuffix("/v1")
    _refused(_start(scripted_llm, tmp_path / "a", root), tmp_path / "a", f"--base-url {root}/v1")
    scripted_llm.models = {"another-model"}
    _refused(
        _start(scripted_llm, tmp_path / "b", scripted_llm.openai_url),
        tmp_path / "b",
        "does not know the model 'scripted-model'",
    )
    scripted_llm.models = None
    scripted_llm.reject_images = True
    _refused(
        _start(scripted_llm, tmp_path / "c", scripted_llm.openai_url),
        tmp_path / "c",
        "not one with an image",
        "--agent uitars-v1 sends screenshots",
        "text-only agent such as t3a",
    )
    assert scripted_llm.requests == [], "the checks spent no scripted reply"
    # A text-only agent needs no images: the same server is fine for t3a.
    scripted_llm.push(
        aw('{"action_type": "status", "goal_status": "complete"}'),
    )
    ok = _start(scripted_llm, tmp_path / "d", scripted_llm.openai_url, agent="t3a")
    assert ok.exit_code == 0, ok.output


@pytest.mark.parametrize("route", ["models", "props"])
def test_a_context_too_small_for_the_agent_is_refused_before_any_episode(
    scripted_llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route: str
) -> None:
    monkeypatch.setenv("GHOSTEI_TEST_KEY", SECRET)
    scripted_llm.context, scripted_llm.context_route = 8192, route  # type: ignore[assignment]
    needed = PROMPT_SIZES["t3a"].text_tokens + 1024
    _refused(
        _start(scripted_llm, tmp_path / "small", scripted_llm.openai_url, agent="t3a"),
        tmp_path / "small",
        "context of 8,192 tokens",
        f"--agent t3a sends prompts of up to about {PROMPT_SIZES['t3a'].text_tokens:,} tokens",
        f"at least {needed:,}",
        "--n_ctx 16384",
    )
    # The same server with room for t3a's prompts: the run goes, and nothing is said of it.
    scripted_llm.context = 32768
    scripted_llm.push(aw('{"action_type": "status", "goal_status": "complete"}'))
    ok = _start(scripted_llm, tmp_path / "large", scripted_llm.openai_url, agent="t3a")
    assert ok.exit_code == 0 and "context size" not in ok.output, ok.output


def test_an_unreported_context_is_said_with_what_the_agent_needs(
    scripted_llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GHOSTEI_TEST_KEY", SECRET)
    scripted_llm.push(aw('{"action_type": "status", "goal_status": "complete"}'))
    ok = _start(scripted_llm, tmp_path / "run", scripted_llm.openai_url, agent="t3a")
    needed = PROMPT_SIZES["t3a"].text_tokens + 1024
    said = " ".join(ok.output.split())
    assert ok.exit_code == 0, ok.output
    assert "does not say its context size" in said and f"at least {needed:,} tokens" in said


def test_a_dead_server_is_refused_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GHOSTEI_TEST_KEY", SECRET)
    with ScriptedLLM() as llm:
        url = llm.openai_url
    _refused(_start(llm, tmp_path / "run", url), tmp_path / "run", "cannot reach", url)


def test_check_endpoint_alone(scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GHOSTEI_TEST_KEY", SECRET)
    base = ("check-endpoint", "--model", "scripted-model", "--base-url", scripted_llm.openai_url)
    keyed = (*base, "--api-key-env", "GHOSTEI_TEST_KEY")
    ok = CliRunner().invoke(main, [*keyed, "--agent", "m3a"])
    assert ok.exit_code == 0 and "answers scripted-model (text and images)" in ok.output
    scripted_llm.reject_images = True
    refused = CliRunner().invoke(main, [*keyed, "--agent", "m3a"])
    assert refused.exit_code == 2 and "not one with an image" in refused.output
    assert CliRunner().invoke(main, [*keyed, "--agent", "t3a"]).exit_code == 0
    assert len(scripted_llm.probes) == 5 and scripted_llm.requests == []
    scripted_llm.context = 4096
    small = CliRunner().invoke(main, [*keyed, "--agent", "t3a"])
    assert small.exit_code == 2 and "context of 4,096 tokens" in small.output
    scripted_llm.context = 65536
    roomy = CliRunner().invoke(main, [*keyed, "--agent", "t3a", "--max-tokens", "512"])
    needed = f"{PROMPT_SIZES['t3a'].text_tokens + 512:,}"
    said = " ".join(roomy.output.split())
    assert f"context 65,536 (--agent t3a needs {needed})" in said, said
