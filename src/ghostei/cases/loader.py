"""Loading case files and choosing cases; every error names the file, the case and the field."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .schema import Case


class CaseError(ValueError):
    """A case file that cannot be used, with the file, case id and field at fault."""

    def __init__(self, path: str, case_id: object, field: str, message: str) -> None:
        self.path, self.case_id, self.field = path, case_id, field
        where = f"{path}: case {case_id}" if case_id is not None else path
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The raw case objects in a .json (one case or a list) or .jsonl file, with line numbers."""
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseError(str(path), None, "", f"cannot read: {exc}") from None
    items: list[tuple[int, Any]] = []
    if path.suffix == ".jsonl":
        for lineno, line in enumerate(raw.splitlines(), 1):
            if line.strip():
                try:
                    items.append((lineno, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise CaseError(
                        f"{path}:{lineno}", None, "", f"invalid JSON: {exc.msg}"
                    ) from None
    else:
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise CaseError(f"{path}:{exc.lineno}", None, "", f"invalid JSON: {exc.msg}") from None
        items = [(0, d) for d in (data if isinstance(data, list) else [data])]
    for lineno, item in items:
        if not isinstance(item, dict):
            raise CaseError(
                f"{path}:{lineno}" if lineno else str(path),
                None,
                "",
                "a case must be a JSON object",
            )
    return items


def _parse(path: Path, lineno: int, obj: dict[str, Any]) -> Case:
    where = f"{path}:{lineno}" if lineno else str(path)
    try:
        return Case.model_validate(obj)
    except ValidationError as exc:
        err = exc.errors()[0]
        # Drop pydantic's validator and union-member names: users need the field path.
        parts = [str(p) for p in err["loc"]]
        loc = ".".join(p for p in parts if not p.startswith("function-") and "[" not in p)
        raise CaseError(where, obj.get("id"), loc or "(case)", err["msg"]) from None


def load_cases(path: str | Path) -> list[Case]:
    """Cases from a file or from every .json/.jsonl file of a directory, ordered by id."""
    root = Path(path)
    if not root.exists():
        raise CaseError(str(root), None, "", "no such file or directory")
    files = (
        sorted(p for p in root.rglob("*") if p.suffix in (".json", ".jsonl"))
        if root.is_dir()
        else [root]
    )
    if not files:
        raise CaseError(str(root), None, "", "no .json or .jsonl case files")
    cases: list[Case] = []
    seen: dict[int, str] = {}
    for file in files:
        for lineno, obj in _records(file):
            case = _parse(file, lineno, obj)
            if case.id in seen:
                raise CaseError(str(file), case.id, "id", f"duplicate id (also in {seen[case.id]})")
            seen[case.id] = str(file)
            cases.append(case)
    if not cases:
        raise CaseError(str(root), None, "", "holds no cases")
    return sorted(cases, key=lambda c: c.id)


def builtin_cases() -> list[Case]:
    """The cases shipped with the package."""
    folder = resources.files("ghostei.cases") / "builtin"
    return load_cases(Path(str(folder)))


def select_cases(spec: str | None, available: list[Case] | None = None) -> list[Case]:
    """Cases by a spec: ``None`` for all built-in, ``3``, ``1-5,9``, or a path to case files."""
    if spec and (Path(spec).exists() or "/" in spec or spec.endswith((".json", ".jsonl"))):
        return load_cases(spec)
    pool = available if available is not None else builtin_cases()
    if not spec:
        return pool
    by_id = {c.id: c for c in pool}
    chosen: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        try:
            ids = range(int(lo), int(hi) + 1) if sep else range(int(lo), int(lo) + 1)
            if not ids:
                raise ValueError(part)
        except ValueError:
            raise CaseError(
                "--cases", None, "", f"{part!r} is not an id, an id range like 3-7, or a path"
            ) from None
        for i in ids:
            if i not in by_id:
                raise CaseError("--cases", i, "", "no case with this id")
            if i not in chosen:
                chosen.append(i)
    return [by_id[i] for i in chosen]
