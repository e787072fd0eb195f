"""Opt-in: a real model endpoint, driven through the CLI as a user would.

    GHOSTEI_LIVE_MODEL=gpt-4o [GHOSTEI_LIVE_BASE_URL=...] [GHOSTEI_LIVE_PROVIDER=anthropic] \\
    [GHOSTEI_LIVE_KEY_ENV=OPENAI_API_KEY] [GHOSTEI_LIVE_AGENTS=m3a,t3a] \\
    [GHOSTEI_LIVE_STEPS=8] [GHOSTEI_LIVE_TIMEOUT=120] python -m pytest -m live

A local llama.cpp server (docs/local-model.md) is a text-only endpoint on a CPU:

    GHOSTEI_LIVE_MODEL=qwen2.5-coder-0.5b GHOSTEI_LIVE_BASE_URL=http://127.0.0.1:8012/v1 \\
    GHOSTEI_LIVE_AGENTS=t3a GHOSTEI_LIVE_STEPS=3 GHOSTEI_LIVE_TIMEOUT=900 \\
    GHOSTEI_LIVE_TEXT_ONLY=1 python -m pytest -m live

Each agent runs one episode (``ghostei run``), which must end without error with the model's
requests counted; then ``ghostei judge`` (``--text-only`` with GHOSTEI_LIVE_TEXT_ONLY) judges
it with the same model: a verdict, or a judge_error the model did answer (one too small for
the judge's schema, as a 0.5B model is). Skipped unless GHOSTEI_LIVE_MODEL is set, so
neither CI nor a fresh clone needs a key or a server.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from ghostei.cli import main

MODEL = os.environ.get("GHOSTEI_LIVE_MODEL", "")
AGENTS = os.environ.get("GHOSTEI_LIVE_AGENTS", "mobile-agent-v2,appagent,uitars,m3a,t3a")
CASE = "6"  # a short Contacts task

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not MODEL, reason="set GHOSTEI_LIVE_MODEL to call a real model"),
]


def _model_args() -> list[str]:
    args = ["--model", MODEL, "--timeout", os.environ.get("GHOSTEI_LIVE_TIMEOUT", "120")]
    for variable, option in (
        ("GHOSTEI_LIVE_BASE_URL", "--base-url"),
        ("GHOSTEI_LIVE_PROVIDER", "--provider"),
        ("GHOSTEI_LIVE_KEY_ENV", "--api-key-env"),
    ):
        if os.environ.get(variable):
            args += [option, os.environ[variable]]
    return args


@pytest.mark.parametrize("agent", AGENTS.split(","))
def test_a_real_model_runs_and_judges_an_episode(agent: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    steps = os.environ.get("GHOSTEI_LIVE_STEPS", "8")
    ran = CliRunner().invoke(
        main,
        [
            *("run", "--agent", agent, "--cases", CASE, "--out", str(out), "--workers", "1"),
            *("--max-steps", steps, *_model_args()),
        ],
    )
    assert ran.exit_code == 0, ran.output
    (record,) = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert record["error"] is None, record["error"]
    assert record["usage"]["requests"] >= 1 and record["usage"]["prompt_tokens"] > 0

    text_only = ["--text-only"] if os.environ.get("GHOSTEI_LIVE_TEXT_ONLY") else []
    judged = CliRunner().invoke(
        main, ["judge", str(out), *_model_args(), *text_only, "--workers", "1"]
    )
    # Exit 1 says an episode got no verdict; a model too small to answer the judge's schema
    # does that (recorded as judge_error with its answers), which is a result, not a crash.
    assert judged.exit_code in (0, 1), judged.output
    (judgement,) = [
        json.loads(line) for line in (out / "judgements" / "llm.jsonl").read_text().splitlines()
    ]
    assert judgement["mode"] == ("text" if text_only else "images")
    assert judgement["usage"]["requests"] >= 1 and judgement["usage"]["prompt_tokens"] > 0
    verdict = judgement["verdict"]
    if verdict["label"] == "judge_error":
        assert "no usable answer" in verdict["error"], verdict  # answered, not unreachable
