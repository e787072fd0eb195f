"""``ghostei compare --paired`` pairs episodes by case id only where both runs' cases are the
same content: two generated suites of different seeds once both numbered from 100001, and a
paired comparison silently compared different cases."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ghostei.cases import builtin_cases
from ghostei.cases.identity import case_digest

from .helpers import assert_user_error, cli, ok


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("paired") / "run-a"
    ok(
        "run",
        "--agent",
        "oracle",
        "--cases",
        "1-2",
        "--no-frames",
        "--workers",
        "1",
        "--out",
        str(out),
    )
    return out


def _copy_with(run: Path, name: str, prompt_of_case_2: str | None) -> Path:
    """A copy of ``run`` whose case 2 (when given a prompt) is another case under the same id."""
    out = run.parent / name
    shutil.copytree(run, out)
    if prompt_of_case_2 is not None:
        lines = []
        for line in (out / "cases.jsonl").read_text().splitlines():
            case = json.loads(line)
            if case["id"] == 2:
                case["prompt"] = prompt_of_case_2
            lines.append(json.dumps(case))
        (out / "cases.jsonl").write_text("\n".join(lines) + "\n")
    return out


def test_runs_of_the_same_cases_are_paired(run: Path) -> None:
    same = _copy_with(run, "run-same", None)
    data = json.loads(ok("compare", str(run), str(same), "--paired", "--format", "json"))
    assert {r["n"] for r in data["paired"]["rows"]} == {2}


def test_runs_that_name_different_cases_by_one_id_are_refused(run: Path) -> None:
    other = _copy_with(run, "run-other", "Open Settings and turn on dark mode.")
    done = cli("compare", str(run), str(other), "--paired")
    assert_user_error(done, "different cases under the same id (1 of 2: 2)")
    # The leaderboard alone compares runs, not episodes: it still works.
    ok("compare", str(run), str(other))


def test_a_case_s_digest_is_its_content_not_its_id() -> None:
    first, second = builtin_cases()[:2]
    assert case_digest(first) == case_digest(first.model_copy(update={"id": 999}))
    assert case_digest(first) != case_digest(second.model_copy(update={"id": first.id}))
