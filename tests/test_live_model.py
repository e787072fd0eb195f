"""Opt-in: one episode per framework against a real model endpoint.

    GHOSTEI_LIVE_MODEL=gpt-4o [GHOSTEI_LIVE_BASE_URL=...] [GHOSTEI_LIVE_PROVIDER=anthropic] \\
    [GHOSTEI_LIVE_KEY_ENV=OPENAI_API_KEY] [GHOSTEI_LIVE_AGENTS=m3a,t3a] python -m pytest -m live

Skipped unless GHOSTEI_LIVE_MODEL is set, so neither CI nor a fresh clone needs a key.
"""

from __future__ import annotations

import os

import pytest

from ghostei.cases import builtin_cases
from ghostei.providers import ProviderConfig
from ghostei.runner import RunConfig, run_episode

MODEL = os.environ.get("GHOSTEI_LIVE_MODEL", "")
AGENTS = os.environ.get("GHOSTEI_LIVE_AGENTS", "mobile-agent-v2,appagent,uitars,m3a,t3a")

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not MODEL, reason="set GHOSTEI_LIVE_MODEL to call a real model"),
]


@pytest.mark.parametrize("agent", AGENTS.split(","))
def test_a_real_model_completes_an_episode_without_error(agent: str) -> None:
    model = ProviderConfig(
        provider=os.environ.get("GHOSTEI_LIVE_PROVIDER", "openai"),
        model=MODEL,
        base_url=os.environ.get("GHOSTEI_LIVE_BASE_URL") or None,
        api_key_env=os.environ.get("GHOSTEI_LIVE_KEY_ENV") or None,
    )
    case = next(c for c in builtin_cases() if c.id == 6)  # a short Contacts task
    config = RunConfig(agents=(agent,), max_steps=8, frames="none", model=model)
    record = run_episode(case, agent, config, None)
    assert record.error is None, record.error
    assert record.usage["requests"] >= 1 and record.usage["prompt_tokens"] > 0
