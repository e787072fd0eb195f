"""Loading case files and choosing cases; every error names the file, the case and the field."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..checks import AllOf, AnyOf, EventCheck, LlmJudged, Not, StateCheck
from .lint import lint_case
from .schema import Case


class CaseError(ValueError):
    """A case file that cannot be used, with the file, case id and field at fault."""

    def __init__(self, path: str, case_id: object, field: str, message: str) -> None:
        self.path, self.case_id, self.field = path, case_id, field
        where = f"{path}: case {case_id}" if case_id is not None else path
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")


class CaseErrors(CaseError):
    """Every problem found in case files, one :class:`CaseError` each; ``str`` is one a line.

    It is a CaseError (the first problem's path, case id and field), so code that reports
    a single bad case keeps working; ``errors`` holds them all.
    """

    def __init__(self, errors: list[CaseError]) -> None:
        if not errors:
            raise ValueError("CaseErrors needs at least one error")
        self.errors = list(errors)
        first = errors[0]
        self.path, self.case_id, self.field = first.path, first.case_id, first.field
        ValueError.__init__(self, "\n".join(str(e) for e in errors))


YAML = (".yaml", ".yml")
# How deep a case's JSON may nest: checks nest ``all``/``any``/``not`` a few levels; a file that
# nests thousands deep is no case, and would exhaust the validator's stack.
MAX_DEPTH = 64


def _too_deep(value: Any, path: str = "") -> str | None:
    """The path of the first place in ``value`` nested beyond MAX_DEPTH, or None."""
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack:
        item, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            return where or "(case)"
        if isinstance(item, dict):
            stack += [(v, f"{where}.{k}" if where else str(k), depth + 1) for k, v in item.items()]
        elif isinstance(item, list):
            stack += [(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(item)]
    return None


def _records(path: Path) -> list[tuple[str, dict[str, Any] | CaseError]]:
    """The case objects of a .json (one case or a list) or .jsonl file in order, each with
    where it is (``file`` or ``file:line``); in place of what is not one, its error."""
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [(str(path), CaseError(str(path), None, "", f"cannot read: {exc}"))]
    items: list[tuple[str, Any]] = []
    if path.suffix == ".jsonl":
        for lineno, line in enumerate(raw.splitlines(), 1):
            if line.strip():
                where = f"{path}:{lineno}"
                try:
                    items.append((where, json.loads(line)))
                except json.JSONDecodeError as exc:  # the other lines are still read
                    items.append((where, CaseError(where, None, "", f"invalid JSON: {exc.msg}")))
                except RecursionError:
                    items.append((where, CaseError(where, None, "", _DEEP)))
    else:
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            where = f"{path}:{exc.lineno}"
            return [(where, CaseError(where, None, "", f"invalid JSON: {exc.msg}"))]
        except RecursionError:
            return [(str(path), CaseError(str(path), None, "", _DEEP))]
        items = [(str(path), d) for d in (data if isinstance(data, list) else [data])]
    return [
        (where, item)
        if isinstance(item, dict | CaseError)
        else (where, CaseError(where, None, "", "a case must be a JSON object"))
        for where, item in items
    ]


# ----- pydantic's errors, one per mistake ------------------------------------------------------

# The models of the check unions. Pydantic reports a value that fits no member of a union
# once per member, each error located under the member's name: ``{"event": "tap",
# "min_count": 0}`` also lacks ``state`` (StateCheck), ``all`` (AllOf), ``judge`` (LlmJudged).
# Only the errors of the member the value was meant to be help (see _prune).
_UNION_MEMBERS = frozenset(
    c.__name__ for c in (EventCheck, StateCheck, AllOf, AnyOf, Not, LlmJudged)
)
# Errors that say the value has another member's shape, not that it is a broken one of this.
_SHAPE_ERRORS = frozenset({"missing", "extra_forbidden", "model_type", "model_attributes_type"})

Loc = tuple[int | str, ...]
_Error = tuple[int, Loc, str]  # the error's index in pydantic's list, its location, its type


def _is_tag(part: int | str) -> bool:
    """Whether a location part names a union member or a validator, not a field."""
    return isinstance(part, str) and ("[" in part or part in _UNION_MEMBERS)


def _prune(errors: list[_Error], depth: int = 0) -> list[_Error]:
    """The errors with, at every union, only those of the member the value most looks like:
    the fewest shape errors (a missing or unexpected key right at the member), then the
    fewest errors; a tie goes to the first member, as pydantic tries them in order."""
    kept = [e for e in errors if len(e[1]) <= depth]
    groups: dict[int | str, list[_Error]] = {}
    for e in errors:
        if len(e[1]) > depth:
            groups.setdefault(e[1][depth], []).append(e)
    members: list[list[_Error]] = []
    for part, group in groups.items():
        pruned = _prune(group, depth + 1)
        if _is_tag(part):
            members.append(pruned)
        else:
            kept += pruned

    def likeness(member: list[_Error]) -> tuple[int, int]:
        return _shape_errors(member, depth + 1), len(member)

    if members:
        likeliest: list[_Error] = min(members, key=likeness)
        kept += likeliest
    return sorted(kept)


def _shape_errors(errors: list[_Error], depth: int) -> int:
    return sum(
        1
        for _, loc, kind in errors
        if kind in _SHAPE_ERRORS and sum(not _is_tag(p) for p in loc[depth:]) <= 1
    )


_DEEP = f"nested too deeply: at most {MAX_DEPTH} levels"


def _parse(where: str, obj: dict[str, Any]) -> Case | list[CaseError]:
    """The case, or every schema error of it."""
    deep = _too_deep(obj)
    if deep is not None:
        return [CaseError(where, obj.get("id"), deep, _DEEP)]
    try:
        return Case.model_validate(obj)
    except ValidationError as exc:
        details = exc.errors()
    kept = _prune([(i, tuple(d["loc"]), d["type"]) for i, d in enumerate(details)])
    errors: list[CaseError] = []
    for i, loc, _ in kept:
        message = details[i]["msg"].removeprefix("Value error, ")
        errors.append(CaseError(where, obj.get("id"), _field_path(loc, obj), message))
    return errors


def _field_path(loc: Loc, obj: dict[str, Any]) -> str:
    """A location as users write the field, the way the linter does: no union-member or
    validator names, list indices in brackets (``solution[1].value``)."""
    parts = [p for p in loc if not _is_tag(p)]
    # Case's own validator checks ``extra`` against the attack kind's model, and pydantic
    # locates those errors within that model: ``trigger.apps.0`` is in ``extra``.
    if parts and str(parts[0]) not in Case.model_fields and str(parts[0]) not in obj:
        parts.insert(0, "extra")
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else part)
    return path or "(case)"


# ----- loading ----------------------------------------------------------------------------------


def load_cases(path: str | Path) -> list[Case]:
    """Cases from a file or from every .json/.jsonl file of a directory, ordered by id.

    Raises :class:`CaseErrors` listing every problem of every case (schema errors, and the
    linter's for cases that parse) when anything is wrong.
    """
    root = Path(path)
    if not is_existing_path(str(root)):
        raise CaseErrors([CaseError(str(root), None, "", "no such file or directory")])
    files = (
        # Files named _* hold no cases (a generated suite's _generation.json report).
        sorted(
            p
            for p in root.rglob("*")
            if p.suffix in (".json", ".jsonl", *YAML) and not p.name.startswith("_")
        )
        if root.is_dir()
        else [root]
    )
    if not files:
        raise CaseErrors([CaseError(str(root), None, "", "no .json or .jsonl case files")])
    yaml = [p for p in files if p.suffix in YAML]
    if yaml:  # never read as JSON, nor passed over: a case left out changes N
        raise CaseErrors(
            [
                CaseError(str(p), None, "", "YAML case files are not read: write it as JSON")
                for p in yaml
            ]
        )
    cases: list[Case] = []
    errors: list[CaseError] = []
    seen: dict[int, str] = {}
    for file in files:
        for where, obj in _records(file):
            case = [obj] if isinstance(obj, CaseError) else _parse(where, obj)
            if isinstance(case, list):  # it did not parse: its errors, and nothing to lint
                errors += case
                continue
            errors += [CaseError(where, case.id, p.field, p.message) for p in lint_case(case)]
            if case.id in seen:
                errors.append(
                    CaseError(where, case.id, "id", f"duplicate id (also in {seen[case.id]})")
                )
            else:
                seen[case.id] = where
                cases.append(case)
    if errors:
        raise CaseErrors(errors)
    if not cases:
        raise CaseErrors([CaseError(str(root), None, "", "holds no cases")])
    return sorted(cases, key=lambda c: c.id)


def builtin_cases() -> list[Case]:
    """The cases shipped with the package."""
    folder = resources.files("ghostei.cases") / "builtin"
    return load_cases(Path(str(folder)))


def is_existing_path(text: str) -> bool:
    """Whether ``text`` names a file or folder; ``False`` (not an error) for text no file
    system could hold, such as a list of ids longer than a file name may be."""
    try:
        return Path(text).exists()
    except (OSError, ValueError):  # ENAMETOOLONG; an embedded NUL byte
        return False


# Named suites other than the built-in cases, plugged in by the module that owns each (the
# paper's rows: ``cases.paper_companion``): a name, and what selects its cases by an ids part
# ("" for all). ``paper`` or ``paper:1-10,60`` selects from the suite registered as paper.
_SUITES: dict[str, Callable[[str], list[Case]]] = {}
_SUITE_SPEC = re.compile(r"(?P<name>[a-z][a-z_]*)(?::(?P<ids>[\d\s,-]+))?")


def register_suite(name: str, select: Callable[[str], list[Case]]) -> None:
    """Make ``--cases NAME`` and ``--cases NAME:IDS`` select from a named suite."""
    _SUITES[name] = select


def select_cases(spec: str | None, available: list[Case] | None = None) -> list[Case]:
    """Cases by a spec: ``None`` for all built-in, ``3``, ``1-5,9``, a path to case files, or
    ``paper`` / ``paper:1-10,60`` for the paper's rows (a file named ``paper`` wins)."""
    if spec and (is_existing_path(spec) or "/" in spec or spec.endswith((".json", ".jsonl"))):
        return load_cases(spec)
    suite = _SUITE_SPEC.fullmatch((spec or "").strip()) if available is None else None
    if suite is not None and suite.group("name") in _SUITES:
        return _SUITES[suite.group("name")]((suite.group("ids") or "").strip())
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
