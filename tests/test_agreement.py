"""Agreement between judges: confusion matrices, Cohen's kappa, and ``ghostei judge --compare``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ghostei.cases import builtin_cases
from ghostei.cli.judge import judge as judge_command
from ghostei.judge.agreement import (
    MATRIX_LABELS,
    bootstrap_intervals,
    cohen_kappa,
    compare_judges,
    confusion,
)
from ghostei.judge.store import Judgement, append_judgement
from ghostei.rundir import EpisodeRecord, RunDir
from ghostei.runner import RunConfig, new_manifest
from ghostei.verdict import Label, Verdict


def test_kappa_by_hand() -> None:
    first = ["TC", "TC", "FAS", "FAS", "BF", "PAS"]
    second = ["TC", "FAS", "FAS", "FAS", "BF", "BF"]
    # p_o = 4/6. Frequencies: first TC 2, FAS 2, BF 1, PAS 1; second TC 1, FAS 3, BF 2.
    # p_e = (2*1 + 2*3 + 1*2 + 1*0) / 36 = 10/36; kappa = (24 - 10) / (36 - 10) = 7/13.
    assert cohen_kappa(zip(first, second, strict=True)) == pytest.approx(7 / 13)


def test_kappa_of_perfect_agreement_is_one() -> None:
    labels = ["TC", "FAS", "PAS", "BF", "FAS", "TC"]
    assert cohen_kappa(zip(labels, labels, strict=True)) == pytest.approx(1.0)


def test_kappa_of_chance_agreement_is_zero() -> None:
    # Each judge says FAS half the time, independently: p_o = p_e = 1/2.
    pairs = [("FAS", "FAS"), ("FAS", "TC"), ("TC", "FAS"), ("TC", "TC")]
    assert cohen_kappa(pairs) == pytest.approx(0.0)


def test_kappa_of_total_disagreement_is_negative() -> None:
    assert cohen_kappa([("FAS", "TC"), ("TC", "FAS")]) == pytest.approx(-1.0)


def test_kappa_is_undefined_when_chance_explains_everything() -> None:
    # Both judges say FAS every time: p_e = 1, kappa is 0/0.
    assert cohen_kappa([("FAS", "FAS")] * 5) is None
    assert cohen_kappa([]) is None


def test_kappa_counts_only_outcome_labels() -> None:
    pairs = [("TC", "TC"), ("FAS", "FAS"), ("TC", "judge_error"), ("undetermined", "BF")]
    assert cohen_kappa(pairs) == pytest.approx(1.0)


def test_confusion_matrix_rows_first_judge() -> None:
    pairs = [("TC", "TC"), ("TC", "FAS"), ("FAS", "judge_error"), ("BF", "undetermined")]
    matrix = confusion(pairs)
    at = {label: i for i, label in enumerate(MATRIX_LABELS)}
    assert matrix[at["TC"]][at["TC"]] == 1
    assert matrix[at["TC"]][at["FAS"]] == 1
    assert matrix[at["FAS"]][at["judge_error"]] == 1
    assert matrix[at["BF"]][at["undetermined"]] == 1
    assert sum(map(sum, matrix)) == 4


def record(agent: str, case: int, label: Label) -> EpisodeRecord:
    return EpisodeRecord(
        case=case,
        agent=agent,
        seed=0,
        label=label,
        injection="popup_sms",
        attack_fired=True,
        steps=3,
        verdict=None if label == "error" else Verdict(judge="rule", label=label),
    )


RULE: list[tuple[str, int, Label]] = [
    ("a", 1, "TC"),
    ("a", 2, "FAS"),
    ("a", 3, "BF"),
    ("a", 4, "error"),
    ("b", 1, "FAS"),
    ("b", 2, "PAS"),
    ("b", 3, "FAS"),
]
LLM: list[tuple[str, int, Label]] = [
    ("a", 1, "TC"),
    ("a", 2, "FAS"),
    ("a", 3, "TC"),
    ("a", 4, "error"),
    ("b", 1, "FAS"),
    ("b", 2, "FAS"),
    ("b", 3, "judge_error"),
]


def test_compare_judges_overall_and_per_agent() -> None:
    result = compare_judges(
        "rule",
        [record(*r) for r in RULE],
        "llm",
        [record(*r) for r in LLM] + [record("b", 9, "TC")],
    )
    overall = result.overall
    assert result.errors == 1 and result.unpaired == 1
    assert overall.paired == 6 and overall.scored == 5
    assert overall.observed == pytest.approx(3 / 5)
    # Scored pairs: (TC,TC) (FAS,FAS) (BF,TC) (FAS,FAS) (PAS,FAS); p_o = 3/5.
    # first TC 1, FAS 2, BF 1, PAS 1; second TC 2, FAS 3: p_e = (1*2 + 2*3) / 25 = 8/25.
    # kappa = (15/25 - 8/25) / (1 - 8/25) = 7/17.
    assert overall.kappa == pytest.approx(7 / 17)
    assert result.per_agent["a"].kappa == pytest.approx((2 / 3 - 3 / 9) / (1 - 3 / 9))
    # Agent b: the pairs (FAS, FAS), (PAS, FAS): the second judge says FAS only: p_e = 1/2.
    assert result.per_agent["b"].scored == 2
    assert result.per_agent["b"].kappa == pytest.approx(0.0)
    by_label = {la.label: la for la in overall.per_label}
    assert (by_label["FAS"].first, by_label["FAS"].second, by_label["FAS"].both) == (3, 3, 2)
    assert by_label["judge_error"].second == 1
    assert by_label["FAS"].specific == pytest.approx(2 / 3)
    data = result.to_json()
    assert data["judges"] == ["rule", "llm"] and data["labels"] == list(MATRIX_LABELS)
    assert set(data["per_agent"]) == {"a", "b"}


@pytest.fixture
def judged_run(tmp_path: Path) -> RunDir:
    """A run folder of the records above, with LLM verdicts stored beside them."""
    cases = [c for c in builtin_cases() if c.id in (1, 2, 3, 4)]
    run = RunDir(tmp_path / "run")
    run.create(new_manifest(RunConfig(agents=("a", "b")), cases), cases)
    for row in RULE:
        run.append(record(*row))
    for agent, case, label in LLM:
        if label != "error":
            verdict = Verdict(judge="llm", label=label)
            judgement = Judgement(agent=agent, case=case, verdict=verdict, blind=True)
            append_judgement(run, "llm", judgement)
    return run


def test_compare_command_json(judged_run: RunDir) -> None:
    result = CliRunner().invoke(
        judge_command, [str(judged_run.path), "--compare", "rule", "llm", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["paired"] == 6 and data["errors"] == 1
    assert data["kappa"] == pytest.approx(7 / 17)
    fas = MATRIX_LABELS.index("FAS")
    assert data["matrix"][fas][fas] == 2


def test_compare_command_table(judged_run: RunDir) -> None:
    result = CliRunner().invoke(judge_command, [str(judged_run.path), "--compare", "rule", "llm"])
    assert result.exit_code == 0, result.output
    for fragment in ("confusion matrix", "Cohen's kappa", "all agents", "judge_error", "0.412"):
        assert fragment in result.output
    result = CliRunner().invoke(
        judge_command, [str(judged_run.path), "--compare", "rule", "hybrid"]
    )
    assert result.exit_code == 0, result.output
    assert "kappa withheld: the hybrid judge is not blind" in result.output


def test_kappa_only_between_blind_judges(judged_run: RunDir) -> None:
    def compare(*names: str) -> dict[str, Any]:
        args = [str(judged_run.path), "--compare", *names, "--format", "json"]
        result = CliRunner().invoke(judge_command, args)
        assert result.exit_code == 0, result.output
        data: dict[str, Any] = json.loads(result.output)
        return data

    blind = compare("rule", "llm")
    assert blind["blind"] is True and blind["not_blind"] == {}
    # The hybrid judge takes the rules' decisions: the matrix stays, every kappa is withheld.
    hybrid = compare("rule", "hybrid")
    assert hybrid["blind"] is False and set(hybrid["not_blind"]) == {"hybrid"}
    assert hybrid["kappa"] is None and hybrid["paired"] == 6
    assert all(a["kappa"] is None for a in hybrid["per_agent"].values())
    # An LLM verdict stored before the judge was blind (no "blind" field) makes llm not blind.
    old = Judgement(agent="a", case=3, verdict=Verdict(judge="llm", label="TC"))
    line = old.model_dump_json(exclude={"blind"})
    with (judged_run.path / "judgements" / "llm.jsonl").open("a") as fh:
        fh.write(line + "\n")
    told = compare("rule", "llm")
    assert told["kappa"] is None and "1 stored llm verdict(s)" in told["not_blind"]["llm"]


def test_compare_judges_withholds_kappa_for_a_judge_that_saw_the_answer() -> None:
    rule = [record(*r) for r in RULE]
    result = compare_judges("rule", rule, "hybrid", rule, not_blind={"hybrid": "why"})
    assert result.overall.observed == 1.0 and result.overall.kappa is None
    assert not result.blind and result.to_json()["not_blind"] == {"hybrid": "why"}


def test_kappa_and_agreement_come_with_intervals_and_what_was_left_out() -> None:
    result = compare_judges("rule", [record(*r) for r in RULE], "llm", [record(*r) for r in LLM])
    overall = result.overall
    assert overall.kappa is not None and overall.kappa_ci is not None
    assert overall.observed is not None and overall.observed_ci is not None
    low, high = overall.kappa_ci
    assert -1.0 <= low <= overall.kappa <= high <= 1.0 and low < high
    low, high = overall.observed_ci
    assert 0.0 <= low <= overall.observed <= high <= 1.0 and low < high
    # The LLM judge gave one paired episode judge_error; the rule judge decided all.
    assert overall.left_out == {"rule": {}, "llm": {"judge_error": 1}}
    assert result.per_agent["a"].left_out == {"rule": {}, "llm": {}}
    data = result.to_json()
    assert data["kappa_ci"] == list(overall.kappa_ci)
    assert data["intervals"] == {"method": "percentile bootstrap", "n_boot": 2000, "seed": 0}
    # Reproducible to the last digit.
    again = compare_judges("rule", [record(*r) for r in RULE], "llm", [record(*r) for r in LLM])
    assert again.overall.kappa_ci == overall.kappa_ci


def test_perfect_agreement_has_a_point_interval_and_none_is_none() -> None:
    labels = ["TC", "FAS", "PAS", "BF"] * 5
    ci, observed_ci = bootstrap_intervals(list(zip(labels, labels, strict=True)))
    assert ci == (1.0, 1.0) and observed_ci == (1.0, 1.0)
    assert bootstrap_intervals([]) == (None, None)
