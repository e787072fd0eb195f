"""Cases that cannot be silently wrong: the semantic linter and loading that reports it all."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from ghostei.cases import Case, CaseError, CaseErrors, builtin_cases, lint_case, load_cases
from ghostei.cases import upstream as upstream_module
from ghostei.cases.lint import state_path_error
from ghostei.cases.paper import dataset_path
from ghostei.cases.upstream import import_upstream

from .helpers import cli

BUILTIN = Path(str(resources.files("ghostei.cases") / "builtin"))
UPSTREAM = dataset_path()  # the paper's dataset, shipped in the package
Mutation = Callable[[dict[str, Any]], None]


def case_json(case_id: int) -> dict[str, Any]:
    """A built-in case as a fresh JSON object, to mutate into a broken fixture."""
    case = next(c for c in builtin_cases() if c.id == case_id)
    data: dict[str, Any] = case.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return data


def write_case(folder: Path, name: str, case_id: int, mutate: Mutation) -> Path:
    data = case_json(case_id)
    mutate(data)
    path = folder / name
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def validate_fails(path: Path, *fragments: str) -> list[str]:
    """``ghostei cases validate`` exits 2 without a traceback, naming every fragment; the
    output's lines."""
    result = cli("cases", "validate", str(path))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.output, f"{fragment!r} not in {result.output!r}"
    return result.output.strip().splitlines()


# ----- each mistake is named: file, case id, field path --------------------------------------


def _absent_typo(d: dict[str, Any]) -> None:
    # A deleted-contact check with a typo in the field: "absent" would always hold.
    d["checks"]["task"] = {"state": "contacts[id=c1].nmae", "absent": True}


def _where_typo(d: dict[str, Any]) -> None:
    d["checks"]["partial_attack"]["any"][1]["where"]["sensitve"] = True


def _contains_typo(d: dict[str, Any]) -> None:
    d["checks"]["task"] = {"event": "sms_sent", "contains": {"bdy": "late"}}


def _unknown_event(d: dict[str, Any]) -> None:
    d["checks"]["full_attack"] = {"event": "form_submited"}


def _min_count_zero(d: dict[str, Any]) -> None:
    d["checks"]["partial_attack"]["any"][0]["min_count"] = 0


def _trigger_app(d: dict[str, Any]) -> None:
    d["extra"]["trigger"] = {"on": "app_opened", "apps": ["Go Forx"]}


def _open_missing_app(d: dict[str, Any]) -> None:
    d["solution"][0] = {"do": "open_app", "value": "Bookin"}


@pytest.mark.parametrize(
    ("mutate", "field", "what"),
    [
        (_absent_typo, "checks.task.state", "no field 'nmae'"),
        (_where_typo, "checks.partial_attack.any[1].where.sensitve", "no key 'sensitve'"),
        (_contains_typo, "checks.task.contains.bdy", "no key 'bdy'"),
        (_unknown_event, "checks.full_attack", "unknown event kind 'form_submited'"),
        (_min_count_zero, "checks.partial_attack.any[0].min_count", "greater than or equal to 1"),
        (_trigger_app, "extra.trigger.apps[0]", "'Go Forx' is not an app on the phone"),
        (_open_missing_app, "solution[0].value", "'Bookin' is not an app on the phone"),
    ],
    ids=["absent_path", "where_key", "contains_key", "event_kind", "min_count", "trigger", "step"],
)
def test_validate_names_each_mistake(
    tmp_path: Path, mutate: Mutation, field: str, what: str
) -> None:
    bad = write_case(tmp_path, "bad.json", 2, mutate)
    lines = validate_fails(bad, str(bad), "case 2", f": {field}: ", what)
    assert len(lines) == 1  # one mistake, one line: no echo of every union member's errors


def test_two_broken_cases_list_all_three_mistakes(tmp_path: Path) -> None:
    def two_mistakes(d: dict[str, Any]) -> None:
        _absent_typo(d)
        _trigger_app(d)

    first = write_case(tmp_path, "a.json", 2, two_mistakes)
    second = write_case(tmp_path, "b.json", 4, _contains_typo)
    lines = validate_fails(tmp_path)
    assert len(lines) == 4  # three mistakes, one line each, then the count
    assert f"{first}: case 2: extra.trigger.apps[0]: 'Go Forx'" in lines[0]
    assert f"{first}: case 2: checks.task.state: 'contacts[id=c1].nmae'" in lines[1]
    assert f"{second}: case 4: checks.task.contains.bdy: event 'sms_sent'" in lines[2]
    assert lines[-1] == f"error: 3 problems in {tmp_path}"


def test_loading_raises_every_error_as_case_errors(tmp_path: Path) -> None:
    # Schema errors of one case (both of them, not the first) beside lint problems of another,
    # and a bad line of a .jsonl file that does not stop the lines after it.
    broken = case_json(2)
    del broken["prompt"]
    broken["potential_risks"] = {"Alien Invasion": "x"}
    lines = [json.dumps(broken), "{not json", json.dumps(case_json(3))]
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_case(tmp_path, "z.json", 4, _where_typo_in_sms_check)
    with pytest.raises(CaseErrors) as caught:
        load_cases(tmp_path)
    errors = caught.value.errors
    assert [(e.case_id, e.field) for e in errors] == [
        (2, "prompt"),
        (2, "potential_risks"),
        (None, ""),
        (4, "checks.task.phone.too"),
    ]
    assert errors[2].path == f"{tmp_path / 'cases.jsonl'}:2"
    # Still a CaseError: code that reports one bad case sees the first.
    assert isinstance(caught.value, CaseError)
    assert (caught.value.path, caught.value.case_id, caught.value.field) == (
        f"{tmp_path / 'cases.jsonl'}:1",
        2,
        "prompt",
    )
    assert str(caught.value).splitlines() == [str(e) for e in errors]


def _where_typo_in_sms_check(d: dict[str, Any]) -> None:
    d["checks"]["task"]["phone"] = {"too": "+1 415 555 0199"}


def test_run_refuses_broken_cases(tmp_path: Path) -> None:
    bad = write_case(tmp_path, "bad.json", 2, _absent_typo)
    result = cli("run", "--cases", str(bad), "--out", str(tmp_path / "run"))
    assert result.exit_code == 2, result.output
    assert "checks.task.state" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "run").exists()


# ----- what the linter knows ------------------------------------------------------------------


def lint(case_id: int, mutate: Mutation) -> list[tuple[str, str]]:
    data = case_json(case_id)
    mutate(data)
    return [(p.field, p.message) for p in lint_case(Case.model_validate(data))]


def test_every_event_key_field_is_checked() -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["checks"]["task"] = {
            "not": {"event": "sms_sent", "phone": {"number": "1"}, "nonempty": ["body", "txt"]}
        }

    assert [f for f, _ in lint(4, mutate)] == [
        "checks.task.not.phone.number",
        "checks.task.not.nonempty[1]",
    ]


def test_a_trigger_app_by_another_name_never_fires() -> None:
    # app_opened events carry the label: an alias the phone opens would still never match.
    def mutate(d: dict[str, Any]) -> None:
        d["extra"]["trigger"]["apps"] = ["Google Messages", "messages"]

    [(field, message)] = lint(4, mutate)
    assert field == "extra.trigger.apps[0]" and "write 'Messages'" in message


def test_an_app_opened_trigger_without_apps_needs_a_case_app_on_the_phone() -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["extra"]["trigger"] = {"on": "app_opened"}
        d["app"] = ["Go Forx", "System UI"]

    [(field, message)] = lint(4, mutate)
    assert field == "app" and "never fires" in message
    assert lint(4, lambda d: d["extra"].__setitem__("trigger", {"on": "app_opened"})) == []


def test_trigger_fields_and_parameters_of_another_kind() -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["extra"]["trigger"] = {"on": "field_focused", "fields": ["card_number", " "]}
        d["extra"]["trigger"]["apps"] = ["Booking"]  # ignored by a field_focused trigger

    assert [f for f, _ in lint(2, mutate)] == ["extra.trigger.fields[1]", "extra.trigger.apps"]


def test_attack_solution_open_app_steps_are_checked() -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["attack_solution"].insert(0, {"do": "open_app", "value": "Go Forx"})
        d["solution"][0]["value"] = "booking.com"  # an alias: the phone opens it

    [(field, message)] = lint(2, mutate)
    assert field == "attack_solution[0].value" and "did you mean 'Go Forex'" in message


@pytest.mark.parametrize(
    "path",
    [
        "settings.wifi",
        "reservations[id=r1].notes",
        "files[path=/sdcard/DCIM/a.b.jpg].favorite",  # dots inside a selector are its own
        "web[*].downloads[path=x].content",  # a model declared after its user
        "consents.any-key",
        "forex.quotes.EUR/USD",
        "cloud.files[*].shared_with[*]",
    ],
)
def test_state_paths_that_can_resolve(path: str) -> None:
    assert state_path_error(path) is None


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("settings.wif", "did you mean 'wifi'"),
        ("reservations.notes", "is a list"),
        ("reservations[idd=r1].notes", "no field 'idd'"),
        ("reservations[0]", "not a selector"),
        ("owner.name.first", "single value"),
        ("bookmarks[url=x]", "single values"),
        ("settings[*]", "not a list"),
        ("files[path=/sdcard/x.jpg", "not closed"),
        ("", "empty path"),
    ],
)
def test_state_paths_that_cannot(path: str, why: str) -> None:
    error = state_path_error(path)
    assert error is not None and why in error


# ----- the shipped and imported cases are clean -------------------------------------------------


def test_builtin_cases_lint_clean() -> None:
    assert {c.id: lint_case(c) for c in builtin_cases() if lint_case(c)} == {}
    result = cli("cases", "validate", str(BUILTIN))
    assert result.exit_code == 0, result.output
    assert "110 valid" in result.output


def test_upstream_import_validates_clean(tmp_path: Path) -> None:
    out = tmp_path / "upstream"
    result = cli("cases", "import-upstream", str(UPSTREAM), "--out", str(out))
    assert result.exit_code == 0, result.output
    result = cli("cases", "validate", str(out))
    assert result.exit_code == 0, result.output
    assert "110 valid" in result.output


def test_upstream_import_lints_its_conversion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A conversion bug that still parses: every trigger names an app the phone does not have.
    monkeypatch.setattr(upstream_module, "_trigger", lambda targets: {"apps": ["Go Forx"]})
    row = next(
        line for line in UPSTREAM.read_text(encoding="utf-8").splitlines() if "Overlay" in line
    )
    source = tmp_path / "rows.jsonl"
    source.write_text(row + "\n", encoding="utf-8")
    with pytest.raises(CaseErrors) as caught:
        import_upstream(source)
    assert caught.value.field == "extra.trigger.apps[0]"
    assert f"{source}:1" in str(caught.value) and "Go Forx" in str(caught.value)


def _nested_mistakes(d: dict[str, Any]) -> None:
    # Three broken parts of an "all": more errors than the shape errors of reading it as
    # another kind of check, which must not win.
    d["checks"]["task"] = {
        "all": [{"event": "tap", "min_count": 0}, {"state": 3}, {"event": "tap", "hint": "x"}]
    }


@pytest.mark.parametrize(
    ("mutate", "fields"),
    [
        (lambda d: d["extra"].pop("title"), ["extra.title"]),
        (lambda d: d["extra"]["trigger"].__setitem__("apps", [3]), ["extra.trigger.apps[0]"]),
        (
            _nested_mistakes,
            ["checks.task.all[0].min_count", "checks.task.all[1].state", "checks.task.all[2].hint"],
        ),
    ],
    ids=["extra_field", "extra_nested", "union"],
)
def test_schema_errors_name_the_field_as_written(
    tmp_path: Path, mutate: Mutation, fields: list[str]
) -> None:
    bad = write_case(tmp_path, "bad.json", 4, mutate)
    with pytest.raises(CaseErrors) as caught:
        load_cases(bad)
    assert [e.field for e in caught.value.errors] == fields


# ----- task_apps: what a defence is told, never the attack's surface ----------------------------


@pytest.mark.parametrize(
    ("case_id", "apps", "why"),
    [
        (10, ["Booking", "Messages"], "an app the attack's solution opens"),  # card by SMS
        (28, ["Gmail", "Messages"], "where the attacker's SMS arrives"),
        (101, ["Booking", "Chrome"], "where the SMS's phishing link opens"),
        (1, ["Booking", "Chrome"], "where the overlay's phishing page opens"),
    ],
)
def test_task_apps_naming_an_attack_surface_are_flagged(
    case_id: int, apps: list[str], why: str
) -> None:
    [(field, message)] = lint(case_id, lambda d: d.__setitem__("task_apps", apps))
    assert field == "task_apps[1]" and why in message and repr(apps[1]) in message


def test_task_apps_may_name_a_surface_the_benign_task_opens() -> None:
    # Case 8's SMS arrives in Messages, where the task (a reply to Sam) is too.
    assert lint(8, lambda d: d.__setitem__("task_apps", ["Messages"])) == []


@pytest.mark.parametrize(
    ("apps", "said"),
    [
        (["Booking", "System UI"], "task_apps[1]: 'System UI' hosts overlays"),
        (["Bookng"], "task_apps[0]: 'Bookng' is not an app of the phone"),
        (["booking.com"], "task_apps[0]: 'booking.com' is not an app of the phone (by its label)"),
    ],
)
def test_task_apps_are_the_phones_apps_by_label(tmp_path: Path, apps: list[str], said: str) -> None:
    path = write_case(tmp_path, "c.json", 1, lambda d: d.__setitem__("task_apps", apps))
    validate_fails(path, said, "c.json")


def test_imported_rows_get_task_apps_without_the_attacks_surfaces(tmp_path: Path) -> None:
    cases = [Case.model_validate(item.data) for item in import_upstream(UPSTREAM)]
    assert all(c.task_apps and "System UI" not in c.task_apps for c in cases)
    for case in cases:  # the SMS's app stays only where the task is in it (opened first)
        if case.vector == "popup-sms" and "Messages" in case.task_apps:
            assert case.task_apps[0] == "Messages" == case.solution[0].value, case.id
    narrowed = [c.id for c in cases if c.task_apps != [a for a in c.app if a != "System UI"]]
    assert len(narrowed) == 15
