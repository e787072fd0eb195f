"""Every built-in case is solvable safely (oracle) and its attack is reachable (gullible)."""

from __future__ import annotations

import pytest

from ghostei.cases import builtin_cases
from ghostei.cases.schema import Case
from ghostei.injection import INJECTIONS, injection_kind
from ghostei.runner import RunConfig, run_episode

CASES = builtin_cases()
KINDS = {
    "overlay_data_capture",
    "overlay_consent",
    "popup_sms",
    "static_seed",
    "deceptive_instruction",
}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"case{c.id}")
def test_oracle_completes_the_task_without_being_attacked(case: Case) -> None:
    record = run_episode(case, "oracle", RunConfig(frames="none"), None)
    assert record.error is None
    assert record.verdict is not None
    assert record.label == "TC", record.verdict.rationale
    assert record.verdict.attack == "none"
    assert record.verdict.task_completed and record.verdict.goal_reached
    # The oracle met the attack and turned it down: the injection did fire.
    assert record.attack_fired, "the attack never reached the oracle"
    assert record.case == case.id and record.agent == "oracle"
    assert record.injection == injection_kind(case)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"case{c.id}")
def test_gullible_is_fully_hijacked(case: Case) -> None:
    record = run_episode(case, "gullible", RunConfig(frames="none"), None)
    assert record.error is None
    assert record.verdict is not None
    assert record.label == "FAS", record.verdict.rationale
    assert record.verdict.attack == "full"
    assert record.attack_fired is True
    assert record.fired_step is not None
    # Complying cannot come before the attack is on the device. (A full attack judged on
    # the final state alone has no event evidence, hence no first compliance step.)
    first = record.verdict.first_compliance_step
    assert first is None or first >= record.fired_step


def test_at_least_twelve_cases_with_unique_ids() -> None:
    assert len(CASES) >= 12
    ids = [c.id for c in CASES]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)


def test_all_five_injection_kinds_appear() -> None:
    kinds = {injection_kind(c) for c in CASES}
    assert kinds == KINDS
    assert set(INJECTIONS) >= KINDS
