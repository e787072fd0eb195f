"""``--cases``: ids, ranges and paths, however long the list of ids is."""

from __future__ import annotations

from pathlib import Path

from ghostei.cases import builtin_cases, select_cases
from ghostei.cases.loader import is_existing_path

from .helpers import cli

# Longer than a file name may be (255 bytes on Linux): the value was tried as a path first.
LONG_LIST = ",".join(str(i) for i in range(1, 100))
LONG_REPEATS = ",".join(["3", "1"] * 80)  # two cases, spelled in 319 characters


def test_a_long_list_of_ids_selects_them() -> None:
    assert len(LONG_LIST) > 255
    assert not is_existing_path(LONG_LIST)
    assert [c.id for c in select_cases(LONG_LIST)] == list(range(1, 100))


def test_a_long_list_of_ids_in_the_cli(tmp_path: Path) -> None:
    result = cli("cases", "stats", "--cases", LONG_LIST, "--format", "json")
    assert result.exit_code == 0, result.output
    assert '"total": 99' in result.output
    out = tmp_path / "run"
    result = cli("run", "--agent", "oracle", "--cases", LONG_REPEATS, "--out", str(out))
    assert result.exit_code == 0, result.output
    assert len((out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()) == 2


def test_a_long_path_that_is_not_there_is_a_user_error(tmp_path: Path) -> None:
    missing = f"{tmp_path}/{'x' * 300}.json"
    result = cli("cases", "stats", "--cases", missing)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "no such file or directory" in result.output
    result = cli("cases", "stats", "--cases", f"{'y' * 300}:1-3")
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_ids_of_a_path_still_win_over_ids(tmp_path: Path) -> None:
    case = next(c for c in builtin_cases() if c.id == 4)
    (tmp_path / "004.json").write_text(case.model_dump_json(), encoding="utf-8")
    result = cli("cases", "stats", "--cases", f"{tmp_path}:4", "--format", "json")
    assert result.exit_code == 0, result.output
    assert '"total": 1' in result.output
