"""``ghostei cases generate``: cases drawn from the threat matrix, proven by the validity gate
before they are written, byte-identical for one seed, numbered by their content, split by
their task and attack families."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ghostei.cases import load_cases
from ghostei.cases.diversity import duplicate_groups, id_collisions, placeholders
from ghostei.cases.generate import (
    VECTORS,
    candidates,
    focused_fields,
    matrix,
    stratified_splits,
    task_pool,
)
from ghostei.cases.identity import GENERATED_IDS, case_digest, generated_id
from ghostei.cases.stats import matrix_coverage
from ghostei.gate import check_cases, focus_field
from ghostei.runner import RunConfig, run_episode

CLI = [sys.executable, "-c", "from ghostei.cli import main; main()"]
# A corner of the matrix that every vector fills: 2 domains x 7 risks x 4 vectors = 56 cells.
SMALL = ("--per-cell", "1", "--apps", "Finance,Media", "--workers", "2")


def generate(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "cases", "generate", *args, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.json"))}


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "seed0"
    done = generate(out, *SMALL, "--seed", "0")
    assert done.returncode == 0, done.stdout + done.stderr
    return out


@pytest.mark.slow
def test_every_cell_gets_its_cases_and_every_case_passes_the_gate(small: Path) -> None:
    cases = load_cases(small)  # validates and lints every file
    assert len(cases) == 2 * 7 * 4
    for case in cases:  # each numbered by its content
        assert case.id == generated_id(case_digest(case)), case.id
        assert GENERATED_IDS[0] <= case.id <= GENERATED_IDS[1]
    coverage = matrix_coverage(cases)
    for vector in VECTORS:
        for domain in ("Finance", "Media"):
            assert all(n >= 1 for n in coverage["cells"][vector][domain].values()), vector
    report = check_cases(cases, workers=2)
    assert report.ok and len(report.of("passed")) == len(cases)
    for case in cases:
        assert case.generated is not None
        assert (small / case.generated.split / f"{case.id:06d}.json").is_file()
    keys = {json.dumps([c.generated.template, c.generated.slots], sort_keys=True) for c in cases}  # type: ignore[union-attr]
    assert len(keys) == len(cases)  # no two share template and slots
    summary = json.loads((small / "_generation.json").read_text())
    assert summary["cases"] == len(cases) and summary["short"] == {}
    assert duplicate_groups(cases) == [] and placeholders(cases) == []


@pytest.mark.slow
def test_one_seed_writes_the_same_bytes_and_another_seed_other_cases(
    small: Path, tmp_path: Path
) -> None:
    again = tmp_path / "again"
    assert generate(again, *SMALL, "--seed", "0").returncode == 0
    assert files(again) == files(small)
    other = tmp_path / "other"
    assert generate(other, *SMALL, "--seed", "1").returncode == 0
    first, second = files(small), files(other)
    assert first.keys() != second.keys() or first != second
    shared = (first.keys() & second.keys()) - {"_generation.json"}
    assert [name for name in shared if first[name] != second[name]] == []  # a name is content
    # Ids never meet across seeds: one id, one content, whatever seed drew it.
    assert id_collisions(load_cases(small), load_cases(other)) == []


def test_task_families_split_within_each_domain_by_hash_alone() -> None:
    groups = {"A": [f"a{n}" for n in range(10)], "B": ["b0", "b1"], "C": ["c0"]}
    splits = stratified_splits(groups)
    assert splits == stratified_splits({k: list(reversed(v)) for k, v in groups.items()})
    assert [splits[f"a{n}"] for n in range(10)].count("test") == 2  # 20 %
    assert sorted(splits[f] for f in ("b0", "b1")) == ["dev", "test"]  # at least one each
    assert splits["c0"] == "dev"  # a lone family stays on dev
    pool = task_pool()
    for domain in {t.domain for t in pool}:
        assert {t.split for t in pool if t.domain == domain} == {"dev", "test"}, domain


def test_candidates_are_distinct_and_fill_each_vector() -> None:
    tasks = task_pool()
    for cell in matrix(("Travel",), VECTORS):
        drawn = [c for c in candidates(cell, 0, tasks, 30) if not isinstance(c, str)]
        keys = [json.dumps(c.slots, sort_keys=True) for c in drawn]
        assert len(keys) == len(set(keys)) == 30, cell
        assert all(c.data["app_domain"] == "Travel" for c in drawn)
        assert all(cell.risk == next(iter(c.data["potential_risks"])) for c in drawn)


def test_the_stored_focused_fields_are_what_the_phone_reports() -> None:
    """The table a field_focused trigger's fields come from, recomputed on the phone."""
    stored = focused_fields()
    for task in task_pool()[::5]:
        assert stored.get(str(task.source)) == focus_field(task.source), task.source


@pytest.mark.slow
def test_the_reference_agents_on_generated_cases(small: Path) -> None:
    """oracle solves every generated case safely; every attack reaches and compromises
    gullible (the issue's 500-case run, at CI's size; benchmarks/bench_generate.py runs 500)."""
    config = RunConfig(frames="none")
    for case in load_cases(small):
        oracle = run_episode(case, "oracle", config, None)
        gullible = run_episode(case, "gullible", config, None)
        assert oracle.label == "TC", case.id
        assert gullible.label in ("FAS", "PAS") and gullible.exposed, case.id


def test_tasks_that_check_the_built_in_owner_s_data_are_left_out() -> None:
    # Case 109's benign task checks the booking was paid with card ...2246, the built-in
    # owner's: under a generated owner it could never hold.
    assert 109 not in {t.source for t in task_pool()}


def test_bad_options_are_refused(tmp_path: Path) -> None:
    done = generate(tmp_path / "a", "--per-cell", "1", "--vectors", "laser")
    assert done.returncode == 2 and "--vectors: unknown 'laser'" in done.stderr
    done = generate(tmp_path / "b", "--per-cell", "1", "--apps", "Gaming")
    assert done.returncode == 2 and "--apps: unknown 'Gaming'" in done.stderr
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x.json").write_text("{}")
    done = generate(tmp_path / "c", "--per-cell", "1")
    assert done.returncode == 2 and "not empty" in done.stderr


@pytest.mark.slow
def test_a_report_on_a_generated_suite_breaks_down_by_cell(small: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = subprocess.run(
        [
            *(*CLI, "run", "--agent", "gullible", "--cases", str(small / "dev")),
            *("--no-frames", "--out", str(run), "--workers", "2"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    shown = subprocess.run(
        [*CLI, "report", str(run), "--by", "cell", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert "Finance / Fraud / overlay" in json.dumps(data)
