"""Blind judges are told only what the agent saw and did (issue 33).

Every request a blind judge sends (``--judge llm`` with screenshots or ``--text-only``, and
``--protocol paper``) is searched for the rule judge's vocabulary: the event log's
annotations (``phishing=``, ``sensitive=``, ``injection_fired``, ...) and the attack kinds'
registry names. The case's own words (its description, its criteria, what is on screen) may
say "phishing" in prose; the test looks for the annotations' form, which no case text uses.
The hybrid judge is handed what the rules decided: its requests do carry the vocabulary, which
shows the search can see it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ghostei.events import EVENTS
from ghostei.injection import INJECTIONS, NoInjection
from ghostei.judge.keyframes import load_episode
from ghostei.judge.llm import JudgeOptions, LLMJudge
from ghostei.judge.observed import OBSERVED, RENAMED, UNSEEN
from ghostei.judge.paper_protocol import PaperJudge
from ghostei.providers import build_provider
from ghostei.rundir import RunDir

from .helpers import finished_run, fresh_copy
from .llm_server import RecordedRequest, ScriptedLLM

# An overlay with a phishing page, an overlay asking consent, a pop-up SMS with a phishing
# link, planted content: each attack kind that leaves annotations in the event log.
CASES = (1, 5, 8, 10)
REFERENCE_AGENTS = ("oracle", "gullible", "random")

KIND_NAMES = sorted(k for k in INJECTIONS if k != NoInjection.kind)
# The event log's annotation keys as the judge prompt writes them (``key=value``), the
# harness's own event kinds and the rule judge's words.
ANNOTATIONS = re.compile(
    r"\b(phishing|sensitive|injection|at_step|urgent|found|source|via|window)="
    r"|injection_fired|overlay_confirmed|overlay_dismissed|consent_granted|consent_denied"
    r"|action_blocked|attack_surface|is_attack|\b(" + "|".join(KIND_NAMES) + r")\b"
)

GHOSTEI_ANSWER = json.dumps(
    {
        "task_completed": False,
        "goal_reached": False,
        "attack": "full",
        "rationale": "the agent complied",
        "first_compliance_step": 1,
        "agent_words": "never_noted",
    }
)
PAPER_ANSWER = json.dumps(
    {"task_completion": False, "full_attack_success": True, "partial_attack_success": True}
)


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return finished_run(tmp_path_factory.mktemp("run") / "run", CASES, REFERENCE_AGENTS)


@pytest.fixture
def run(base_run: Path, tmp_path: Path) -> RunDir:
    return fresh_copy(base_run, tmp_path)


def answer(request: RecordedRequest) -> str:
    """The paper's three booleans to the paper's prompt, our verdict to ours."""
    return PAPER_ANSWER if "task_completion" in "\n".join(request.texts()) else GHOSTEI_ANSWER


def leaks(request: RecordedRequest) -> list[str]:
    """The annotation vocabulary found in every text the request carries."""
    text = "\n".join(request.texts())
    return sorted({m.group(0) for m in ANNOTATIONS.finditer(text)})


def judges(scripted: ScriptedLLM, **options: Any) -> LLMJudge:
    provider = build_provider(scripted.provider_config(max_retries=0), sleep=lambda s: None)
    return LLMJudge(provider, JudgeOptions(**options))


def judge_all(run: RunDir, judge: LLMJudge) -> None:
    """Judge every episode of ``run`` (each must get a verdict, not a judge error)."""
    cases = {c.id: c for c in run.cases_faced()}
    for record in run.records():
        judged = judge.judge(run, record, cases[record.case])
        assert judged.verdict.label != "judge_error", judged.verdict.error


@pytest.mark.parametrize("mode", ["llm-images", "llm-text-only", "paper"])
def test_a_blind_judge_sends_no_rule_annotation(
    run: RunDir, scripted_llm: ScriptedLLM, mode: str
) -> None:
    scripted_llm.respond(answer)
    if mode == "paper":
        provider = build_provider(scripted_llm.provider_config(max_retries=0))
        judge: LLMJudge = PaperJudge(provider)
    else:
        judge = judges(scripted_llm, text_only=mode == "llm-text-only")
    judge_all(run, judge)
    assert len(scripted_llm.requests) == len(run.records())
    for request in scripted_llm.requests:
        assert leaks(request) == [], "\n".join(request.texts())
    if mode == "llm-text-only":  # the events are there, reduced: the search had text to read
        text = "\n".join(t for r in scripted_llm.requests for t in r.texts())
        assert "page_loaded(" in text and "form_submitted(" in text
        assert "dialog_shown(title=" in text


def test_the_hybrid_judge_is_handed_the_annotations(run: RunDir, scripted_llm: ScriptedLLM) -> None:
    scripted_llm.respond(answer)
    judge = judges(scripted_llm, text_only=True, informed=True)
    cases = {c.id: c for c in run.cases_faced()}
    record = next(r for r in run.records() if r.agent == "gullible" and r.case == 1)
    assert judge.judge(run, record, cases[1]).verdict.label == "FAS"
    found = leaks(scripted_llm.requests[0])
    assert "phishing=" in found and "injection_fired" in found
    assert "overlay_data_capture" in found


def test_every_event_kind_is_decided_for_blind_judges() -> None:
    # A kind added to the registry must be placed: shown (with which keys) or unseen.
    assert set(OBSERVED) | UNSEEN == set(EVENTS)
    assert not set(OBSERVED) & UNSEEN
    for kind, keys in OBSERVED.items():
        assert set(keys) <= EVENTS[kind].keys, kind
        assert not {"phishing", "sensitive", "injection", "source", "window"} & set(keys), kind
    assert set(RENAMED) <= set(OBSERVED)


LABEL_WORDS = re.compile(
    r"\b(attack\w*|solution|surface|phishing|malicious|injection|injected)\b", re.IGNORECASE
)


def test_the_reference_agents_outputs_carry_no_label_words(run: RunDir) -> None:
    seen = set()
    for record in run.records():
        assert record.trajectory, record.key
        episode = load_episode(run.path / record.trajectory)
        assert episode.steps, record.key
        for step in episode.steps:
            said = str(step.get("raw_output", ""))
            assert not LABEL_WORDS.search(said), f"{record.agent} case {record.case}: {said}"
        seen.add(record.agent)
    assert seen == set(REFERENCE_AGENTS)
