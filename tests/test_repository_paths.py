"""Nothing in the repository reads a path outside it: a user's clone has nothing beside it.

The paper's dataset ships in the package (``ghostei.cases.paper``) and test data lives under
``tests/data``; a path that climbs out of the clone (``../shared``, ``parents[2] / "shared"``
from ``tests/``) works only on a machine laid out like the developers' one.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[1]
# What a clone holds that the project itself reads or runs (the virtualenvs and caches are not
# the project's).
SCANNED = (
    *("src", "tests", "benchmarks", ".ci", "android", "docs"),
    *("pyproject.toml", "README.md", "mkdocs.yml"),
)
SKIPPED_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "artifacts"}

# Spellings of a folder beside the clone or of a developer's machine.
_OUTSIDE = (
    (re.compile(r"\.\.[/\\]+shared\b"), "a sibling folder ../shared"),
    (re.compile(r"[\"']shared[\"']\s*/"), 'a path joined from "shared"'),
    (re.compile(r"/work\b/"), "an absolute path of a development machine"),
)
# A climb from the file itself: Path(__file__).parents[k] or .parent.parent...
_CLIMB = re.compile(
    r"__file__\)(?:\.resolve\(\)|\.absolute\(\))?(?:\.parents\[(\d+)\]|((?:\.parent\b)+))"
)


def outside_references(relative: str, text: str) -> list[str]:
    """Each place in ``text`` (the file at ``relative`` in the repository) that names a path
    outside the repository, as ``file:line: why``."""
    found: list[str] = []
    depth = len(PurePosixPath(relative).parts)  # levels from the file up to the root
    for lineno, line in enumerate(text.splitlines(), 1):
        for pattern, why in _OUTSIDE:
            if pattern.search(line):
                found.append(f"{relative}:{lineno}: {why}")
        for climb in _CLIMB.finditer(line):
            index, parents = climb.groups()
            levels = int(index) + 1 if index is not None else parents.count(".parent")
            if levels > depth:
                found.append(
                    f"{relative}:{lineno}: climbs {levels} levels from a file {depth} deep"
                )
    return found


def _project_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        top = ROOT / name
        if top.is_file():
            files.append(top)
        elif top.is_dir():
            files += [
                p
                for p in top.rglob("*")
                if p.is_file() and not SKIPPED_DIRS.intersection(p.relative_to(ROOT).parts)
            ]
    return sorted(files)


def test_no_file_names_a_path_outside_the_repository() -> None:
    files = _project_files()
    assert any(p.name == "test_upstream.py" for p in files)  # the scan sees the tests
    found: list[str] = []
    for path in files:
        if path == Path(__file__).resolve():
            continue  # its examples below name outside paths on purpose
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # pictures and other binary data name no paths
        found += outside_references(path.relative_to(ROOT).as_posix(), text)
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("relative", "line"),
    [
        ("tests/test_x.py", 'P = Path(__file__).resolve().parents[2] / "shared" / "x.jsonl"'),
        ("tests/test_x.py", "P = Path(__file__).resolve().parents[2] / 'data'"),
        ("tests/test_x.py", "P = Path(__file__).parent.parent.parent"),
        ("src/ghostei/x.py", "P = Path(__file__).parents[3]"),
        (".ci/run", "ghostei cases import-upstream ../shared/upstream/GhostEI.jsonl --out d"),
        ("benchmarks/b.py", 'DATA = "/work/shared/upstream"'),
    ],
)
def test_a_path_outside_is_found(relative: str, line: str) -> None:
    assert outside_references(relative, line)


@pytest.mark.parametrize(
    ("relative", "line"),
    [
        ("tests/test_x.py", 'README = Path(__file__).resolve().parents[1] / "README.md"'),
        ("tests/test_x.py", 'DATA = Path(__file__).parent / "data"'),
        ("src/ghostei/x.py", "P = Path(__file__).parents[2]"),
        ("tests/test_x.py", 'frames = ["../f/a.png"]  # a run folder\'s relative frame'),
        (".ci/run", 'cd "$(dirname "$0")/.."'),
    ],
)
def test_a_path_inside_is_not_flagged(relative: str, line: str) -> None:
    assert not outside_references(relative, line)
