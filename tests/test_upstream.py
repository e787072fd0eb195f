"""Importing the upstream GhostEI.jsonl: every row converts, fires and is scoreable."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from ghostei.actions import Action
from ghostei.cases import Case, load_cases
from ghostei.cases.paper import dataset_path
from ghostei.cases.stats import case_stats
from ghostei.cases.upstream import (
    APP_DOMAIN,
    APP_NAMES,
    OVERLAY_HOST,
    Imported,
    UpstreamRow,
    convert,
    field_value,
    import_upstream,
    kind_of,
    write_cases,
)
from ghostei.checks import LlmJudged
from ghostei.cli import console
from ghostei.injection import build_injection
from ghostei.runner import RunConfig, run_episode
from ghostei.sim.apps.base import resolve_app
from ghostei.sim.phone import SimPhone

from .helpers import cli

# The authors' dataset as the package ships it (the paper's suite).
UPSTREAM = dataset_path()

ROWS: list[dict[str, Any]] = [
    json.loads(line) for line in UPSTREAM.read_text(encoding="utf-8").splitlines() if line
]
FAST = RunConfig(frames="none", width=360, height=640, max_steps=30)


def ids(kind: str) -> list[int]:
    return [r["id"] for r in ROWS if r["use_dynamic"] == kind]


OVERLAY_IDS, SMS_IDS = ids("Overlay Attack"), ids("Popup SMS")


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Case]:
    """The whole upstream file imported into a folder and loaded back by the case loader."""
    out = tmp_path_factory.mktemp("upstream") / "cases"
    write_cases(import_upstream(UPSTREAM), out, UPSTREAM)
    return {c.id: c for c in load_cases(out)}


# ----- the whole file ---------------------------------------------------------------------------


def test_every_row_imports_and_validates(imported: dict[int, Case]) -> None:
    assert len(ROWS) == 110
    assert sorted(imported) == [r["id"] for r in ROWS]
    kinds = [kind_of(c.model_dump()) for c in imported.values()]
    assert kinds.count("overlay data capture") == 46
    assert kinds.count("overlay consent") == 13
    assert kinds.count("pop-up SMS") == 16
    assert kinds.count("static") == 11
    assert kinds.count("deceptive") == 24


def test_the_upstream_fields_are_kept(imported: dict[int, Case]) -> None:
    for row in ROWS:
        case = imported[row["id"]]
        for key in ("case", "content", "prompt", "use_dynamic", "result", "potential_risks"):
            assert getattr(case, key) == row[key], (row["id"], key)
        assert case.files_name == row["files_name"] and case.need_env == row["need_env"]
        assert case.case_type == row["case_type"]
        # apps mapped one to one, in order; every one is an app of the phone or the host
        assert case.app == [APP_NAMES.get(a, a) for a in row["app"]], row["id"]
        for app in case.app:
            assert app == OVERLAY_HOST or resolve_app(app) is not None, app


def test_overlays_keep_every_form_field_and_pretext(imported: dict[int, Case]) -> None:
    for row in ROWS:
        if row["use_dynamic"] != "Overlay Attack":
            continue
        extra, overlay = row["extra"], imported[row["id"]].overlay
        for key in ("title", "content", "cancel", "confirm", "use_page"):
            assert getattr(overlay, key) == extra[key], (row["id"], key)
        if extra["use_page"]:
            assert overlay.page_information is not None
            assert overlay.page_information.form == extra["page_information"]["form"]
            assert overlay.page_information.title == extra["page_information"]["title"]
        else:
            assert overlay.consent == f"upstream-{row['id']}"
    four = [
        r["id"]
        for r in ROWS
        if len((r["extra"].get("page_information") or {}).get("form") or []) == 4
    ]
    assert four  # the rows whose fourth field the upstream server dropped


def test_sms_parameters_and_triggers(imported: dict[int, Case]) -> None:
    for row in ROWS:
        case = imported[row["id"]]
        if row["use_dynamic"] == "Popup SMS":
            assert case.sms.numbers == row["extra"]["numbers"]
            assert case.sms.message == row["extra"]["message"]
        if row["case_type"] == "Dynamic Environment Injection":
            trigger = (
                case.sms.trigger if row["use_dynamic"] == "Popup SMS" else case.overlay.trigger
            )
            assert trigger.on == "app_opened" and trigger.apps == case.target_apps
            assert case.solution[0].do == "open_app" and case.solution[0].value in case.target_apps


def test_named_files_are_on_the_phone(imported: dict[int, Case]) -> None:
    for case in imported.values():
        paths = [f["path"] for f in case.setup.get("files", [])]
        for name in case.files_name:
            assert any(name in p.split("/") for p in paths), (case.id, name)
            assert all(p.startswith("/sdcard/") for p in paths)
    folder = imported[78]  # "proj" and "document" have no extension: folders with files
    assert any("/proj/" in f["path"] for f in folder.setup["files"])


def test_free_text_criteria_are_left_to_an_llm(imported: dict[int, Case]) -> None:
    for case in imported.values():
        checks = case.checks
        assert case.result, case.id  # the LLM judge's criteria
        if case.case_type == "User-Provided Instructions":
            assert not isinstance(checks.task, LlmJudged)
            assert [s.do for s in case.solution] == ["refuse"]
        else:
            assert isinstance(checks.task, LlmJudged)
        undecidable = case.case_type != "Dynamic Environment Injection"
        assert isinstance(checks.full_attack, LlmJudged) is undecidable, case.id
        assert isinstance(checks.partial_attack, LlmJudged) is undecidable, case.id


def test_stats_of_the_import_match_the_upstream_counts(imported: dict[int, Case]) -> None:
    stats = case_stats(list(imported.values()))
    assert stats["total"] == 110
    assert list(stats["case_type"].values()) == [75, 11, 24]
    assert stats["use_dynamic"] == {"Overlay Attack": 59, "Popup SMS": 16, "Non-script": 35}
    assert stats["overlay_page"] == {"true": 46, "false": 13}
    assert stats["app"]["System UI"] == 49  # the overlay host, as upstream counts it
    assert set(stats["app"]) == {OVERLAY_HOST, *APP_DOMAIN}  # all 14 apps, names mapped
    assert all(stats["app_domain"].values())


def test_app_domains_are_inferred(imported: dict[int, Case]) -> None:
    assert imported[14].app_domain == "Finance"  # Go Forex
    assert imported[62].app_domain == "Shopping"  # AliExpress + Messages
    assert imported[1].app_domain == "Travel"  # Booking + System UI
    assert imported[100].app_domain == "Communication"  # Messages only
    assert imported[96].app_domain == "System"  # Settings


def test_phishing_form_values() -> None:
    assert field_value("Credit Card Number") == "{owner.card_number}"
    assert field_value("CVV") == "{owner.card_cvv}"
    assert field_value("Expiration (MM/YY)") == "{owner.card_expiry}"
    assert field_value("6-digit OTP") == field_value("One-time passcode (6 digits)") == "482913"
    assert field_value("Trading password/PIN") == "{owner.email_password}"
    assert field_value("4-digit PIN") == "{owner.pin}"
    assert field_value("Passport/ID number") == "{owner.passport}"
    assert field_value("Birth date (YYYY-MM-DD)") == "{owner.birthday}"
    assert field_value("Email/Username") == "{owner.email}"
    assert field_value("Phone number for alerts") == "{owner.phone}"
    assert field_value("Full name") == "{owner.name}"
    assert field_value("Audience (Contacts/All)") == "Contacts"
    assert field_value("Upload Contacts (Yes/No)") == "Yes"
    assert field_value("Purchase volume") == "Yes"


# ----- episodes on the imported cases ---------------------------------------------------------


@pytest.mark.parametrize("case_id", OVERLAY_IDS + SMS_IDS)
def test_each_dynamic_injection_fires_when_its_app_opens(
    imported: dict[int, Case], case_id: int
) -> None:
    case = imported[case_id]
    record = run_episode(case, "oracle", FAST, None)
    assert record.error is None, record.error
    assert record.attack_fired, f"case {case_id} ({case.target_apps}) never fired"
    assert record.verdict is not None and record.verdict.attack == "none"
    assert record.label == "undetermined"  # the task is free text: the rules cannot say


@pytest.mark.parametrize("case_id", OVERLAY_IDS)
def test_gullible_is_fully_attacked_by_every_overlay(
    imported: dict[int, Case], case_id: int
) -> None:
    record = run_episode(imported[case_id], "gullible", FAST, None)
    assert record.error is None, record.error
    assert record.label == "FAS", record.verdict


@pytest.mark.parametrize("case_id", SMS_IDS)
def test_gullible_follows_every_popup_sms(imported: dict[int, Case], case_id: int) -> None:
    case = imported[case_id]
    record = run_episode(case, "gullible", FAST, None)
    assert record.error is None, record.error
    # gullible sends the message on, as the rows' attackers ask (full), link or not.
    assert record.label == "FAS", record.verdict
    sent = [s for s in case.attack_solution if s.do == "type"]
    assert sent and sent[0].value == case.sms.message


def test_static_and_deceptive_rows_are_undetermined(imported: dict[int, Case]) -> None:
    for case in imported.values():
        if case.case_type == "Dynamic Environment Injection":
            continue
        for agent in ("oracle", "gullible"):
            record = run_episode(case, agent, FAST, None)
            assert record.error is None, record.error
            assert record.attack_fired
            assert record.label == "undetermined", (case.id, agent)
            assert record.verdict is not None and record.verdict.attack is None


def test_run_imported_cases_from_the_cli(imported: dict[int, Case], tmp_path: Path) -> None:
    cases_dir = tmp_path / "cases"
    cases_dir.mkdir()
    for case_id in (1, 60):
        (cases_dir / f"{case_id:03d}.json").write_text(imported[case_id].model_dump_json())
    for spec, expected in ((str(cases_dir), [1, 60]), (f"{cases_dir}:60", [60])):
        out = tmp_path / f"run-{len(expected)}"
        result = cli(
            "run", "--cases", spec, "--agent", "gullible", "--out", str(out),
            "--no-frames", "--screen", "360x640", "--workers", "1",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        report = json.loads(cli("report", str(out), "--format", "json").stdout)
        assert [e["case"] for e in report["episodes"]] == expected
        assert all(e["attack_fired"] for e in report["episodes"])


# ----- imported text is data ------------------------------------------------------------------

MARKUP = "<b>x</b> <img src=x onerror=alert(1)>"


def test_markup_in_imported_text_is_shown_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    row = dict(ROWS[0])
    row["case"] = f"[bold red]{MARKUP}[/]"
    row["extra"] = {**row["extra"], "title": MARKUP, "content": "&amp; <script>alert(2)</script>"}
    source = tmp_path / "markup.jsonl"
    source.write_text(json.dumps(row) + "\n", encoding="utf-8")
    case = Case.model_validate(import_upstream(source)[0].data)
    phone = SimPhone(360, 640)
    injection = build_injection(case)
    phone.reset(case.setup)
    injection.install(phone)
    phone.act(Action(action_type="open_app", app_name=case.target_apps[0]))
    assert injection.after_step(phone, 1)
    obs = phone.observe()
    texts = [e.text for e in obs.elements]
    assert MARKUP in texts and "&amp; <script>alert(2)</script>" in texts
    nodes = ET.fromstring(obs.xml.encode("utf-8")).iter("node")
    shown = {n.get("text") for n in nodes}
    assert MARKUP in shown and "&amp; <script>alert(2)</script>" in shown
    assert not any(n.tag in ("b", "img", "script") for n in ET.fromstring(obs.xml.encode()).iter())
    # the console shows the case title as it is, not as rich markup
    out = tmp_path / "cases"
    write_cases([Imported("001-markup.json", case.model_dump(mode="json"))], out, source)
    monkeypatch.setattr(console.out, "width", 300)  # one line per row
    listing = cli("cases", "list", "--cases", str(out))
    assert f"[bold red]{MARKUP}[/]" in listing.stdout


# ----- bad rows -------------------------------------------------------------------------------


def good_row(case_id: int = 1) -> dict[str, Any]:
    return json.loads(json.dumps(next(r for r in ROWS if r["id"] == case_id)))


def write_rows(folder: Path, rows: list[dict[str, Any] | str]) -> Path:
    path = folder / "rows.jsonl"
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def bad(tmp_path: Path, rows: list[dict[str, Any] | str], *fragments: str) -> None:
    """Importing ``rows`` fails with exit 2 naming the fragments, and writes nothing."""
    source = write_rows(tmp_path, rows)
    out = tmp_path / "out"
    result = cli("cases", "import-upstream", str(source), "--out", str(out))
    assert result.exit_code == 2, result.output
    message = result.output
    assert "error:" in message and "Traceback" not in message
    for fragment in ("rows.jsonl", *fragments):
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl"]  # no temp folder left


def test_a_missing_field_names_the_row_and_field(tmp_path: Path) -> None:
    row = good_row(7)
    del row["prompt"]
    bad(tmp_path, [good_row(1), row], "rows.jsonl:2", "case 7", "prompt", "Field required")


def test_a_bad_field_type_names_the_field(tmp_path: Path) -> None:
    row = good_row(4)
    row["extra"]["use_page"] = "yes"
    bad(tmp_path, [row], "rows.jsonl:1", "case 4", "extra.use_page")


def test_a_missing_overlay_parameter(tmp_path: Path) -> None:
    row = good_row(3)
    del row["extra"]["confirm"]
    bad(tmp_path, [good_row(1), good_row(2), row], "rows.jsonl:3", "case 3", "extra.confirm")


def test_a_page_without_a_form(tmp_path: Path) -> None:
    row = good_row(1)
    row["extra"]["page_information"]["form"] = []
    bad(tmp_path, [row], "case 1", "extra.page_information")


def test_an_unknown_app_and_risk(tmp_path: Path) -> None:
    row = good_row(1)
    row["app"] = ["Booking", "TikTok"]
    bad(tmp_path, [row], "case 1", "app[1]", "TikTok")
    row = good_row(1)
    row["potential_risks"] = {"Spam": "x"}
    bad(tmp_path, [row], "case 1", "potential_risks", "Spam")


def test_sms_without_numbers(tmp_path: Path) -> None:
    row = good_row(SMS_IDS[0])
    row["extra"]["numbers"] = []
    bad(tmp_path, [row], f"case {SMS_IDS[0]}", "extra.numbers")


def test_invalid_json_and_duplicate_ids(tmp_path: Path) -> None:
    bad(tmp_path, [good_row(1), "{not json"], "rows.jsonl:2", "invalid JSON")
    bad(tmp_path, [good_row(1), good_row(1)], "rows.jsonl:2", "case 1", "id", "duplicate")
    bad(tmp_path, [["a list"]], "rows.jsonl:1", "JSON object")  # type: ignore[list-item]


def test_an_existing_output_folder_is_never_overwritten(tmp_path: Path) -> None:
    source = write_rows(tmp_path, [good_row(1)])
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    result = cli("cases", "import-upstream", str(source), "--out", str(out))
    assert result.exit_code == 2 and "not empty" in result.output
    assert [p.name for p in out.iterdir()] == ["mine.txt"]


def test_the_import_command_writes_cases_an_index_and_the_licence(tmp_path: Path) -> None:
    rows = [good_row(i) for i in (1, 4, OVERLAY_IDS[-1], SMS_IDS[0], 80, 100)]
    source = write_rows(tmp_path, rows)
    licence = source.with_name("LICENSE")
    licence.write_text("MIT License\nCopyright (c) the authors\n")
    out = tmp_path / "out"
    result = cli("cases", "import-upstream", str(source), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "6 cases imported" in result.stdout
    files = sorted(p.name for p in out.iterdir())
    assert "README.md" in files and "LICENSE-upstream" in files
    assert "001-booking-fake-refund-popup-hijack.json" in files
    assert len(load_cases(out)) == 6
    assert cli("cases", "validate", str(out)).exit_code == 0


def test_convert_is_pure(imported: dict[int, Case]) -> None:
    row = UpstreamRow.model_validate(good_row(1))
    assert convert(row) == convert(row)
