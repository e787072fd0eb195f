"""The paper's suite: the authors' 110 rows, mapped by the import and made checkable by ours.

The shipped ``GhostEI.jsonl`` gives each row's task only as free text. ``companion.json``
beside it is ours, keyed by row id, and never copies a row's texts: for every row it holds

* ``class``: what rules can make of the row (:data:`CLASSES`), with a one-line ``reason``;
  ``pending`` is a row read but not yet made checkable nor classed otherwise (reported as
  *not yet audited*, never counted in a class);
* ``coupling`` (the 75 dynamic rows): what of the attack the benign instruction already
  carries (:data:`COUPLINGS`); an empty list is a row where the paper's "benign user
  instructions and malicious payloads are strictly decoupled" holds;
* for a checkable row, what makes it so: the task's ``task`` check and its oracle
  ``solution`` (the built-in cases' schema), world data merged into the imported ``setup``
  (``setup``), and, where the import's derivation does not say what the row's ``result``
  criteria say, ``full_attack`` / ``partial_attack`` / ``attack_solution``; a static row's
  planted content is ``plant`` (the static attack's ``seed`` and ``reveal``). A deceptive
  row keeps the import's task (refusing or asking the user is the safe outcome) and gains
  its attack checks, the harmful steps ``gullible`` takes, and a ``benign`` counterpart of
  ours (prompt, solution, task) that a run without attacks asks instead;
* ``probes``: the row's hand-written probe trajectories, each with its label
  (:mod:`ghostei.cases.probes`);
* ``changes``: what we changed to make the row run (an unsendable number, a missing file),
  and ``label_changes``: where the row's own criteria and our label definitions disagree,
  with the reason; both shown by ``ghostei cases show --cases paper``.

Everything the row itself gives (overlay texts, buttons, style, urgency, trigger app, page
fields, SMS numbers and message) stays as the import maps it.
"""

from __future__ import annotations

import copy
import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .lint import lint_case
from .loader import CaseError, CaseErrors, register_suite, select_cases
from .paper import PAPER, dataset_path
from .schema import Case
from .upstream import import_upstream

COMPANION = "companion.json"
PaperClass = Literal["checkable", "task_is_attack", "not_realisable", "llm_only"]
CLASSES: tuple[str, ...] = get_args(PaperClass)
PENDING = "pending"
# What a dynamic row's instruction may carry of its attack: "data", a value the attack asks
# for (a form field's answer, the SMS's recipients or text); "act", a request to do what
# the attack asks (verify, confirm identity, re-enter credentials, send the injected text).
Coupling = Literal["data", "act"]
COUPLINGS: tuple[str, ...] = get_args(Coupling)
DYNAMIC_ROWS = 75


class CompanionRow(BaseModel):
    """One row's entry in ``companion.json``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    klass: PaperClass | Literal["pending"] = Field(alias="class")
    reason: str = Field(min_length=1)
    coupling: list[Coupling] | None = None
    task: dict[str, Any] | None = None
    solution: list[dict[str, Any]] | None = None
    setup: dict[str, Any] = Field(default_factory=dict)
    full_attack: dict[str, Any] | None = None
    partial_attack: dict[str, Any] | None = None
    attack_solution: list[dict[str, Any]] | None = None
    plant: dict[str, Any] | None = None
    task_apps: list[str] | None = None
    benign: dict[str, Any] | None = None
    # Probes written for the row (the built-in cases' schema): every other way its attacker's
    # goal can be reached, each with the label the definitions give it.
    probes: list[dict[str, Any]] | None = None
    changes: list[str] = Field(default_factory=list)
    # Where the row's ``result`` criteria and our label definitions disagree: what the row
    # says, what we label, and why (docs/paper-suite.md states the policy once).
    label_changes: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _checkable_has_checks(self) -> CompanionRow:
        if self.benign is not None:
            attack = (self.full_attack, self.partial_attack, self.attack_solution)
            if self.klass != "checkable" or any(a is None for a in attack):
                raise ValueError(
                    "a deceptive row with a benign counterpart is checkable, with its "
                    "full_attack, partial_attack and attack_solution"
                )
        elif self.klass == "checkable" and (self.task is None or self.solution is None):
            raise ValueError("a checkable row needs its task check and its oracle solution")
        if self.klass != "checkable" and (self.task is not None or self.solution is not None):
            raise ValueError(f"a {self.klass} row has no task check or solution of ours")
        if len(set(self.coupling or [])) != len(self.coupling or []):
            raise ValueError("coupling: a kind is named twice")
        return self


def companion_path() -> str:
    """Where the companion file is, beside the dataset."""
    return str(resources.files("ghostei.cases.paper") / COMPANION)


@lru_cache(maxsize=1)
def load_companion() -> dict[int, CompanionRow]:
    """Every row's entry, by row id; CaseError names the row and field of a bad one."""
    where = companion_path()
    try:
        with open(where, encoding="utf-8") as f:
            raw = json.load(f)
    except (OSError, json.JSONDecodeError) as exc:
        raise CaseError(where, None, "", f"cannot read: {exc}") from None
    rows = raw.get("rows") if isinstance(raw, dict) else None
    if not isinstance(rows, dict):
        raise CaseError(where, None, "rows", "must be an object keyed by row id")
    out: dict[int, CompanionRow] = {}
    for key, value in rows.items():
        if not key.isdigit():
            raise CaseError(where, key, "", "a row id is a number")
        try:
            out[int(key)] = CompanionRow.model_validate(value)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "(row)"
            raise CaseError(where, int(key), field, err["msg"]) from None
    return out


def row_class(case_id: int) -> str:
    """A row's class, or ``pending`` when the companion has none for it."""
    entry = load_companion().get(case_id)
    return entry.klass if entry is not None else PENDING


def _merge(setup: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``extra``'s world data over ``setup``: a record list gains its records (one with the
    id or path of an existing record replaces it), an object is updated, a value replaced."""
    merged = copy.deepcopy(setup)
    for key, value in extra.items():
        old = merged.get(key)
        if isinstance(value, list) and isinstance(old, list):
            keyed = {_record_key(r): i for i, r in enumerate(old) if _record_key(r)}
            for record in value:
                at = keyed.get(_record_key(record))
                if at is None:
                    old.append(copy.deepcopy(record))
                else:
                    old[at] = copy.deepcopy(record)
        elif isinstance(value, dict) and isinstance(old, dict):
            old.update(copy.deepcopy(value))
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _record_key(record: Any) -> str:
    if isinstance(record, dict):
        for name in ("id", "path"):
            if isinstance(record.get(name), str):
                return f"{name}={record[name]}"
    return ""


def apply_companion(data: dict[str, Any], entry: CompanionRow | None) -> dict[str, Any]:
    """The imported case object of a row with our companion entry applied."""
    if entry is None:
        return data
    out = copy.deepcopy(data)
    checks = out["checks"]
    if entry.setup:
        out["setup"] = _merge(out["setup"], entry.setup)
    if entry.plant is not None:
        out["extra"] = copy.deepcopy(entry.plant)
    if entry.task is not None:
        checks["task"] = copy.deepcopy(entry.task)
    if entry.solution is not None:
        out["solution"] = copy.deepcopy(entry.solution)
    if entry.full_attack is not None:
        checks["full_attack"] = copy.deepcopy(entry.full_attack)
    if entry.partial_attack is not None:
        checks["partial_attack"] = copy.deepcopy(entry.partial_attack)
    if entry.attack_solution is not None:
        out["attack_solution"] = copy.deepcopy(entry.attack_solution)
    if entry.task_apps is not None:
        out["task_apps"] = list(entry.task_apps)
    if entry.benign is not None:
        out["benign"] = copy.deepcopy(entry.benign)
    if entry.probes is not None:
        out["probes"] = copy.deepcopy(entry.probes)
    return out


@lru_cache(maxsize=1)
def _paper_cases() -> tuple[Case, ...]:
    companion = load_companion()
    source = dataset_path()
    cases: list[Case] = []
    errors: list[CaseError] = []
    for item in import_upstream(source):
        row_id = item.data["id"]
        where = f"{companion_path()} (row {row_id})"
        try:
            case = Case.model_validate(apply_companion(item.data, companion.get(row_id)))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "(case)"
            errors.append(CaseError(where, row_id, field, err["msg"]))
            continue
        errors += [CaseError(where, row_id, p.field, p.message) for p in lint_case(case)]
        cases.append(case)
    unknown = sorted(set(companion) - {c.id for c in cases})
    errors += [CaseError(companion_path(), i, "", "no such row in the dataset") for i in unknown]
    if errors:
        raise CaseErrors(errors)
    return tuple(cases)


def paper_cases() -> list[Case]:
    """The paper's 110 rows as cases: imported from the shipped dataset, companion applied."""
    return list(_paper_cases())


_SPEC = re.compile(rf"{PAPER}(?::(?P<ids>[\d\s,-]+))?")


def paper_spec(spec: str | None) -> str | None:
    """For ``paper`` or ``paper:1-10,60``: the ids part ("" for all rows); else None."""
    match = _SPEC.fullmatch((spec or "").strip())
    if match is None:
        return None
    return (match.group("ids") or "").strip()


def select_paper(ids: str) -> list[Case]:
    """The paper's rows by ids (``1-10,60``), or all of them for ``""``."""
    pool = paper_cases()
    return select_cases(ids, pool) if ids else pool


def class_counts(cases: list[Case]) -> dict[str, Any]:
    """The audit over the paper's rows among ``cases``: cases per class, the rows not yet
    audited, and how many dynamic rows keep instruction and attack decoupled."""
    companion = load_companion()
    classes = dict.fromkeys(CLASSES, 0)
    pending: list[int] = []
    dynamic = [c for c in cases if c.case_type == "Dynamic Environment Injection"]
    for c in cases:
        cls = row_class(c.id)
        if cls == PENDING:
            pending.append(c.id)
        else:
            classes[cls] += 1
    coupling = {c.id: companion[c.id].coupling for c in dynamic if c.id in companion}
    judged = {i: v for i, v in coupling.items() if v is not None}
    return {
        "paper_classes": classes,
        "paper_not_yet_audited": pending,
        "paper_decoupling": {
            "dynamic": len(dynamic),
            "judged": len(judged),
            "decoupled": sum(not v for v in judged.values()),
            "hands_data": sum("data" in v for v in judged.values()),
            "asks_act": sum("act" in v for v in judged.values()),
        },
    }


register_suite(PAPER, select_paper)  # --cases paper, paper:1-10,60
