"""The paper's dataset ships in the package, unchanged, with its licence and source."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from ghostei.cases.paper import dataset_path

from .helpers import cli


def test_the_packaged_dataset_is_the_released_file() -> None:
    path = dataset_path()
    source = path.with_name("SOURCE.md").read_text(encoding="utf-8")
    recorded = re.search(r"sha256: `([0-9a-f]{64})`", source)
    assert recorded, "SOURCE.md names no sha256"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == recorded.group(1)
    assert "cyChen2003/Ghost-EI" in source and "datasets/GhostEI.jsonl" in source
    assert "97df694665bf85127a9643dc64a171b6d6d7c234" in source
    licence = path.with_name("LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and "cyChen2003" in licence
    assert len(path.read_text(encoding="utf-8").splitlines()) == 110


def test_import_upstream_takes_the_packaged_copy_without_a_file(tmp_path: Path) -> None:
    for args in ((), ("paper",)):
        out = tmp_path / f"cases{len(args)}"
        result = cli("cases", "import-upstream", *args, "--out", str(out))
        assert result.exit_code == 0, result.output
        assert "110 cases imported" in result.output
        assert (out / "LICENSE-upstream").read_bytes() == (
            dataset_path().with_name("LICENSE").read_bytes()
        )


def test_import_upstream_still_reads_a_named_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first_row = dataset_path().read_text(encoding="utf-8").splitlines()[0]
    monkeypatch.chdir(tmp_path)
    Path("paper").write_text(first_row + "\n", encoding="utf-8")  # a file of that name wins
    result = cli("cases", "import-upstream", "paper", "--out", "one")
    assert result.exit_code == 0, result.output
    assert "1 cases imported" in result.output
