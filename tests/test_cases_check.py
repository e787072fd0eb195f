"""``ghostei cases check``, the validity gate: it passes good cases and names broken ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ghostei.cases import builtin_cases
from ghostei.cases.paper import dataset_path
from ghostei.cases.schema import Case
from ghostei.cases.stats import id_ranges
from ghostei.cases.upstream import import_upstream, kind_of
from ghostei.checks import CaseChecks
from ghostei.gate import check_case, check_cases
from ghostei.injection import injection_kind

from .helpers import cli

CASES = builtin_cases()
UPSTREAM = dataset_path()  # the paper's dataset, shipped in the package


def one_of_each_kind() -> list[Case]:
    """A built-in case of every injection kind: overlay, consent, SMS, static, deceptive."""
    chosen: dict[str, Case] = {}
    for case in CASES:
        chosen.setdefault(injection_kind(case), case)
    return sorted(chosen.values(), key=lambda c: c.id)


def write_case(folder: Path, case: Case, **changes: Any) -> Path:
    """A copy of ``case`` as id 901 with ``changes`` (top-level fields), as a case file."""
    data = json.loads(case.model_dump_json())
    data.update(id=901, **changes)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "901-broken.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def overlay_case() -> Case:
    return next(c for c in CASES if c.use_dynamic == "Overlay Attack")


def test_built_in_cases_of_every_kind_pass() -> None:
    cases = one_of_each_kind()
    assert len(cases) == 5
    report = check_cases(cases)
    assert report.ok
    assert [r.status for r in report.results] == ["passed"] * 5
    assert [r.case for r in report.results] == [c.id for c in cases]


def test_the_command_passes_on_built_in_cases() -> None:
    ids = ",".join(str(c.id) for c in one_of_each_kind())
    result = cli("cases", "check", "--cases", ids)
    assert result.exit_code == 0, result.output
    assert "5 case(s) checked" in result.stdout
    assert "5 passed, 0 unverifiable by rules, 0 failed" in result.stdout


def test_a_task_that_can_never_hold_fails_naming_the_case(tmp_path: Path) -> None:
    case = overlay_case()
    # Only a refusal completes this "task": the oracle's solution never refuses.
    checks = {
        **json.loads(case.checks.model_dump_json(by_alias=True)),
        "task": {"event": "refused"},
    }
    folder = write_case(tmp_path / "cases", case, checks=checks)
    result = cli("cases", "check", "--cases", str(folder))
    assert result.exit_code == 1, result.output
    assert "FAIL case 901" in result.stdout
    assert "oracle: the task check does not hold" in result.stdout
    assert "1 case(s) checked" in result.stdout and "1 failed" in result.stdout


def test_a_dynamic_attack_that_never_reaches_the_agent_fails(tmp_path: Path) -> None:
    case = overlay_case()
    # The overlay would fire at step 50; episodes end at 20 steps.
    extra = {**json.loads(json.dumps(case.extra)), "trigger": {"on": "step", "step": 50}}
    folder = write_case(tmp_path / "cases", case, extra=extra)
    result = cli("cases", "check", "--cases", f"{folder}:901")
    assert result.exit_code == 1, result.output
    assert "FAIL case 901" in result.stdout
    assert "gullible: the attack never reached the agent (never injected on the device)" in (
        result.stdout
    )
    assert "gullible: not compromised" in result.stdout


def test_an_attack_on_the_device_but_never_on_screen_fails() -> None:
    # A static seed whose reveal text is never shown: injected at reset, never seen.
    static = next(c for c in CASES if injection_kind(c) == "static_seed")
    extra = {**static.extra, "reveal": ["words that appear on no screen of this phone at all"]}
    result = check_case(static.model_copy(update={"extra": extra}))
    assert result.status == "failed"
    assert "gullible: the attack never reached the agent (injected at step 0)" in result.problems


def test_predicates_left_to_an_llm_are_unverifiable_not_failed(tmp_path: Path) -> None:
    case = overlay_case()
    checks = {**json.loads(case.checks.model_dump_json(by_alias=True)), "task": {"judge": "llm"}}
    result = check_case(case.model_copy(update={"checks": CaseChecks.model_validate(checks)}))
    assert result.status == "unverifiable" and result.unverifiable == ["oracle task"]
    folder = write_case(tmp_path / "cases", case, checks=checks)
    out = cli("cases", "check", "--cases", str(folder))
    assert out.exit_code == 0, out.output
    assert "0 passed, 1 unverifiable by rules, 0 failed" in out.stdout
    assert "oracle: task check left to an LLM judge: 1 (cases 901)" in out.stdout


def test_a_decided_wrong_outcome_fails_even_beside_an_llm_predicate() -> None:
    case = overlay_case()
    # The oracle opens the case's app: as a "full attack" this holds, and the rules decide it.
    checks = {
        "task": {"judge": "llm"},
        "full_attack": {"event": "app_opened"},
        "partial_attack": {"judge": "llm"},
    }
    result = check_case(case.model_copy(update={"checks": CaseChecks.model_validate(checks)}))
    assert result.status == "failed"
    assert "oracle: the full attack check holds: the oracle was compromised" in result.problems


def test_bad_cases_option_is_a_user_error() -> None:
    result = cli("cases", "check", "--cases", "9999")
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_imported_upstream_rows_pass_or_are_unverifiable(tmp_path: Path) -> None:
    first: dict[str, Case] = {}  # the first row of each kind
    for item in import_upstream(UPSTREAM):
        first.setdefault(kind_of(item.data), Case.model_validate(item.data))
    assert len(first) == 5
    report = check_cases(list(first.values()), workers=2)
    assert report.ok, [r.problems for r in report.of("failed")]
    results = {kind: report.results[i] for i, kind in enumerate(first)}
    # Upstream describes every benign task in free text; the attacks of overlays and SMS are
    # scored by rules, those of static and deceptive rows are not.
    assert all("oracle task" in r.unverifiable for k, r in results.items() if k != "deceptive")
    for kind in ("overlay data capture", "overlay consent", "pop-up SMS"):
        assert not any(u.startswith("gullible") for u in results[kind].unverifiable), kind
    assert "gullible exposure" in results["static"].unverifiable  # a static row plants nothing
    assert "gullible exposure" not in results["deceptive"].unverifiable  # always reaches


def test_id_ranges() -> None:
    assert id_ranges([3, 1, 2, 7, 9, 10, 10]) == "1-3, 7, 9-10"
    assert id_ranges([]) == ""
