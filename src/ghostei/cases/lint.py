"""Semantic checks of a case: mistakes that parse but make a case silently wrong.

The schema accepts a case whose state path has a typo (it resolves to nothing, so
``absent: true`` always holds), whose check reads an event key no device writes (the check
never holds), or whose trigger names an app that is not on the phone (the attack never
fires, so every agent "resists"). Nothing fails at run time either: the numbers are just
wrong. :func:`lint_case` finds these against the registries they depend on: the event kinds
and their keys (:data:`ghostei.events.EVENTS`), the world schema
(:class:`ghostei.world.World`) and the phone's catalogue of apps (:mod:`ghostei.apps`).
"""

from __future__ import annotations

import difflib
import functools
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel

from ..apps import app_labels, resolve_app

# The linter must cut a path exactly where ``resolve`` does (dots inside a selector belong to
# it), so it shares the one splitter rather than keeping a second copy of the syntax.
from ..checks import AllOf, AnyOf, Check, EventCheck, LlmJudged, Not, StateCheck, _split
from ..events import EVENTS
from ..world import FileEntry, World
from .schema import Case, Step, Trigger


@dataclass(frozen=True)
class Problem:
    """One mistake: the field at fault (``extra.trigger.apps[0]``) and what is wrong."""

    field: str
    message: str


def lint_case(case: Case) -> list[Problem]:
    """Every semantic mistake of a case that parsed, in the order of its fields."""
    problems = [
        *_trigger_problems(case),
        *_clean_world_problems(case),
        *_step_problems("solution", case.solution),
        *_step_problems("attack_solution", case.attack_solution),
        *_task_app_problems(case),
    ]
    for name in ("task", "full_attack", "partial_attack"):
        problems += _check_problems(getattr(case.checks, name), f"checks.{name}")
    if case.benign is not None:  # what a run without attacks asks instead: held to the same
        problems += _step_problems("benign.solution", case.benign.solution)
        problems += _check_problems(case.benign.task, "benign.task")
    return problems


# ----- task_apps --------------------------------------------------------------------------------

# Where a link opens (the simulated phone's ``open_url``): a phishing page's app.
BROWSER = "Chrome"


def attack_surfaces(case: Case) -> dict[str, str]:
    """The apps an attack of ``case`` works through, each with why: the app a phishing page
    opens in, the app a pop-up SMS arrives in, and the apps the attack's solution opens."""
    surfaces: dict[str, str] = {}
    if case.use_dynamic == "Overlay Attack" and case.overlay.use_page:
        surfaces[BROWSER] = "where the overlay's phishing page opens"
    if case.use_dynamic == "Popup SMS":
        surfaces["Messages"] = "where the attacker's SMS arrives"
        if case.sms.page_information is not None:
            surfaces[BROWSER] = "where the SMS's phishing link opens"
    # A harmful instruction is the attack itself: the app it names is the one the user asked
    # for (told to any defence by the instruction), not a surface it leads the agent to.
    leads = case.attack_solution if case.vector != "deceptive" else []
    for step in leads:
        app = resolve_app(step.value or "") if step.do == "open_app" else None
        if app is not None:
            surfaces.setdefault(app.label, "an app the attack's solution opens")
    return surfaces


def benign_apps(case: Case) -> set[str]:
    """The apps the benign solution (a harmful instruction's: its benign counterpart's) opens
    or picks by name (a share sheet's target)."""
    steps = case.benign.solution if case.benign is not None else case.solution
    found = set()
    for step in steps:
        name = step.value if step.do == "open_app" else step.text if step.do == "tap" else None
        app = resolve_app(name or "")
        if app is not None and (step.do == "open_app" or app.label == name):
            found.add(app.label)
    return found


def _task_app_problems(case: Case) -> Iterator[Problem]:
    # The defences are told task_apps as what a deployer knows: an attack surface there
    # tells them about the attack (System UI the schema refuses already).
    surfaces = attack_surfaces(case)
    needed = benign_apps(case)
    for i, name in enumerate(case.task_apps):
        if name in surfaces and name not in needed:
            yield Problem(
                f"task_apps[{i}]",
                f"{name!r} is an attack surface ({surfaces[name]}) and the benign solution "
                "never opens it: task_apps names only the apps the benign task needs",
            )


# ----- checks ---------------------------------------------------------------------------------


def _check_problems(check: Check | LlmJudged, at: str) -> Iterator[Problem]:
    if isinstance(check, EventCheck):
        yield from _event_problems(check, at)
    elif isinstance(check, StateCheck):
        error = state_path_error(check.state)
        if error is not None:
            yield Problem(f"{at}.state", f"{check.state!r}: {error}")
    elif isinstance(check, AllOf | AnyOf):
        name, parts = ("all", check.all) if isinstance(check, AllOf) else ("any", check.any)
        for i, part in enumerate(parts):
            yield from _check_problems(part, f"{at}.{name}[{i}]")
    elif isinstance(check, Not):
        yield from _check_problems(check.not_, f"{at}.not")


def _event_problems(check: EventCheck, at: str) -> Iterator[Problem]:
    kind = EVENTS.get(check.event)
    if kind is None:  # the schema refuses it too; kept for checks built in code
        yield Problem(
            f"{at}.event", f"unknown event kind {check.event!r}{_hint(check.event, EVENTS)}"
        )
        return
    named: list[tuple[str, str]] = [
        *((f"where.{k}", k) for k in check.where),
        *((f"contains.{k}", k) for k in check.contains),
        *((f"contains_any.{k}", k) for k in check.contains_any),
        *((f"excludes.{k}", k) for k in check.excludes),
        *((f"phone.{k}", k) for k in check.phone),
        *((f"nonempty[{i}]", k) for i, k in enumerate(check.nonempty)),
    ]
    for field, key in named:
        if key not in kind.keys:
            keys = ", ".join(sorted(kind.keys)) or "(none)"
            yield Problem(
                f"{at}.{field}",
                f"event {kind.name!r} has no key {key!r}{_hint(key, kind.keys)}; its keys: {keys}",
            )


def state_path_error(path: str) -> str | None:
    """Why a state path can address nothing in any world, or None when it can.

    The path is walked over the World model's types, not over one world's data: a model
    has its fields, ``list[X]`` needs a selector (``[key=value]`` with a field of X, or
    ``[*]``), ``dict[str, X]`` takes any key, and a plain value has no children.
    """
    parts = _split(path)
    if not parts:
        return "an empty path addresses the whole world"
    at: Any = World
    walked = "the world"
    for part in parts:
        at = _without_none(at)
        if at is Any:
            return None  # free-form data: any key may be there
        if part.startswith("["):
            if not part.endswith("]"):
                return f"the selector {part!r} is not closed with ']'"
            if get_origin(at) is not list:
                return f"{walked} is not a list, so {part} selects nothing"
            at = get_args(at)[0]
            error = _selector_error(part[1:-1], _without_none(at), walked)
            walked = f"{walked}{part}"
        else:
            at, error = _child(at, part, walked)
            walked = part if walked == "the world" else f"{walked}.{part}"
        if error is not None:
            return error
    return None


def _child(at: Any, key: str, walked: str) -> tuple[Any, str | None]:
    """The type under ``key`` of a value of type ``at``, or why it has no such key."""
    if _is_model(at):
        if key not in at.model_fields:
            return None, _no_field(walked, key, at)
        return _field_types(at)[key], None
    if get_origin(at) is dict:
        return get_args(at)[1], None
    if get_origin(at) is list:
        return None, f"{walked} is a list: select its items with [key=value] or [*] before {key!r}"
    return None, f"{walked} is a single value, it has no {key!r}"


def _selector_error(selector: str, item: Any, walked: str) -> str | None:
    """Why ``[selector]`` picks nothing from a list of ``item``, or None."""
    if selector == "*":
        return None
    key, eq, _ = selector.partition("=")
    if not eq or not key:
        return f"[{selector}] is not a selector: use [key=value] or [*]"
    if _is_model(item):
        return None if key in item.model_fields else _no_field(f"items of {walked}", key, item)
    if item is Any or get_origin(item) is dict:
        return None
    return f"items of {walked} are single values: select them with [*], not [{selector}]"


def _no_field(owner: str, key: str, model: type[BaseModel]) -> str:
    fields = ", ".join(model.model_fields)
    return f"{owner} has no field {key!r}{_hint(key, model.model_fields)}; fields: {fields}"


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


@functools.cache
def _field_types(model: type[BaseModel]) -> dict[str, Any]:
    # Not ``model_fields[...].annotation``: a field typed with a model declared later in its
    # module (``WebPage.downloads``) keeps a forward reference there until pydantic rebuilds.
    return get_type_hints(model)


def _without_none(annotation: Any) -> Any:
    """``X | None`` as X; any other union as Any (a path may go down either member)."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        return members[0] if len(members) == 1 else Any
    return annotation


# ----- triggers and solution steps -------------------------------------------------------------


def _trigger_problems(case: Case) -> Iterator[Problem]:
    if case.case_type != "Dynamic Environment Injection":
        return
    trigger = case.overlay.trigger if case.use_dynamic == "Overlay Attack" else case.sms.trigger
    for i, app in enumerate(trigger.apps):
        if _label(app) is None:
            yield Problem(f"extra.trigger.apps[{i}]", _not_a_label(app))
    for i, name in enumerate(trigger.fields):
        if not name.strip():
            yield Problem(f"extra.trigger.fields[{i}]", "an empty field name matches no field")
    yield from _unused_parameters(trigger)
    defaults = case.target_apps  # what an app_opened trigger without apps waits for
    if trigger.on == "app_opened" and not trigger.apps and not any(map(_label, defaults)):
        yield Problem(
            "app",
            f"the app_opened trigger names no apps, so it waits for one of the case's apps "
            f"({', '.join(defaults) or 'none besides System UI'}); none is an app on the "
            f"phone, so the attack never fires. Apps: {_labels()}",
        )


# Keys of world records whose values name files on the phone (an email's attachments, a
# note's photos).
_FILE_KEYS = frozenset({"attachments", "photos"})


def _clean_world_problems(case: Case) -> Iterator[Problem]:
    # A run without attacks plants ``setup`` and ``extra.clean``; none of the attacker's files
    # may be there: a pirated film left in Downloads is still the attack's content, one share
    # away. The attacker's files are those the seed's records name and the clean records do
    # not (the film attached to the club's email), and the seed's own files unchanged (a
    # planted file's clean twin has the same path and other content).
    if case.case_type != "Static Environment Injection":
        return
    static = case.static
    clean = static.clean or {}
    named = _file_references(_records_of(static.seed)) - _file_references(_records_of(clean))
    planted = {(f.path, f.content) for f in _files(static.seed.get("files"))}
    for where, files in (
        ("setup.files", case.setup.get("files")),
        ("extra.clean.files", clean.get("files")),
    ):
        for i, entry in enumerate(_files(files)):
            if entry.path in named or entry.name in named:
                why = "the seed's records name it and the clean records do not"
            elif (entry.path, entry.content) in planted:
                why = "it is the seed's file unchanged"
            else:
                continue
            yield Problem(
                f"{where}[{i}]",
                f"{entry.path!r} is the attack's file ({why}), yet a run without the attack "
                "has it; plant it in extra.seed.files only, or give the clean world its "
                "twin without the attacker's content",
            )


def _files(data: Any) -> list[FileEntry]:
    return World.model_validate({"files": data or []}).files


def _records_of(world_data: dict[str, Any]) -> dict[str, Any]:
    """World data without its files: the records that may name files."""
    return {key: value for key, value in world_data.items() if key != "files"}


def _file_references(data: Any) -> set[str]:
    """The strings under file-naming keys anywhere in world data."""
    found: set[str] = set()
    if isinstance(data, dict):
        for key, value in data.items():
            if key in _FILE_KEYS:
                values = value if isinstance(value, list) else [value]
                found |= {v for v in values if isinstance(v, str) and v}
            else:
                found |= _file_references(value)
    elif isinstance(data, list):
        for item in data:
            found |= _file_references(item)
    return found


def _unused_parameters(trigger: Trigger) -> Iterator[Problem]:
    # A parameter of another trigger kind is ignored: the author meant something that will
    # not happen (an app_opened-style ``apps`` on a field_focused trigger fires in any app).
    used = {"app_opened": {"apps", "after_steps"}, "field_focused": {"fields"}, "step": {"step"}}
    given = {
        "apps": bool(trigger.apps),
        "after_steps": trigger.after_steps > 0,
        "fields": bool(trigger.fields),
        "step": trigger.step > 0,
    }
    for name, is_set in given.items():
        if is_set and name not in used[trigger.on]:
            yield Problem(
                f"extra.trigger.{name}", f"has no effect on a trigger with on={trigger.on!r}"
            )


def _step_problems(name: str, steps: list[Step]) -> Iterator[Problem]:
    for i, step in enumerate(steps):
        # The phone opens an app by label, package or alias, as an agent may name it.
        if step.do == "open_app" and step.value is not None and resolve_app(step.value) is None:
            yield Problem(
                f"{name}[{i}].value",
                f"{step.value!r} is not an app on the phone{_hint(step.value, _phone_labels())}; "
                f"apps: {_labels()}",
            )


def _label(app: str) -> str | None:
    """The phone's label for ``app`` when it is one, else None.

    Compared as the trigger compares (case-insensitively, nothing stripped), and only labels
    count, not aliases: ``app_opened`` events carry the label.
    """
    return {label.casefold(): label for label in _phone_labels()}.get(app.casefold())


def _not_a_label(app: str) -> str:
    cls = resolve_app(app)
    if cls is not None:
        return (
            f"{app!r} is another name of {cls.label!r}; a trigger is matched against the "
            f"opened app's label, so write {cls.label!r}"
        )
    return f"{app!r} is not an app on the phone{_hint(app, _phone_labels())}; apps: {_labels()}"


def _phone_labels() -> list[str]:
    return app_labels()


def _labels() -> str:
    return ", ".join(_phone_labels())


def _hint(word: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for a near miss, else nothing."""
    by_fold = {k.casefold(): k for k in known}
    close = difflib.get_close_matches(word.casefold(), list(by_fold), n=1, cutoff=0.75)
    return f" (did you mean {by_fold[close[0]]!r}?)" if close else ""
