"""Adaptive attack variants (ghostei.variants): task-hijack, app-styled and contact-sms.

Each variant must stay a fair test: over every built-in case it fits, the reference gullible
is still compromised and the oracle still completes the task safely (the validity gate), and
the screen shows what the variant claims (the app's package for a hijack, the app's name on
a styled overlay, a contact's name on a spoofed SMS).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ghostei.actions import Action
from ghostei.attacks import ATTACK_VARIANTS, case_under, check_backend, fits
from ghostei.cases import builtin_cases
from ghostei.cases.schema import Case
from ghostei.device import DEFAULT_ATTACKER_PACKAGE
from ghostei.gate import check_case
from ghostei.injection import build_injection
from ghostei.observation import Observation
from ghostei.rundir import RunDir
from ghostei.runner import RunConfig, run_episode
from ghostei.sim import system_ui as sysui
from ghostei.sim.phone import SimPhone
from ghostei.variants import foreground_app, spoofed_contact

from .helpers import cli

VARIANTS = ("task-hijack", "app-styled", "contact-sms")
CASES = builtin_cases()
SYSTEM = {sysui.SYSTEMUI_PACKAGE, sysui.IME_PACKAGE, sysui.LAUNCHER_PACKAGE}


def fitting(variant: str) -> list[Case]:
    return [c for c in CASES if ATTACK_VARIANTS[variant].fits(c)]


def fired(case: Case) -> tuple[SimPhone, Observation]:
    """A phone with the case's target app open and its (reshaped) attack just fired."""
    phone = SimPhone()
    injection = build_injection(case)
    phone.reset(case.setup)
    injection.install(phone)
    app = foreground_app(case) if case.use_dynamic == "Overlay Attack" else None
    phone.act(Action(action_type="open_app", app_name=app.label if app else case.target_apps[0]))
    injection.fire(phone)
    return phone, phone.observe()


# ----- which cases each variant fits ---------------------------------------------------------


def test_variants_are_registered_with_what_they_target() -> None:
    for name in VARIANTS:
        variant = ATTACK_VARIANTS[name]
        assert variant.summary and variant.targets
        assert fitting(name), f"{name} fits no built-in case"


def test_overlay_variants_fit_every_dynamic_overlay_case() -> None:
    overlays = [c.id for c in CASES if c.use_dynamic == "Overlay Attack"]
    kinds = {bool(c.overlay.use_page) for c in CASES if c.use_dynamic == "Overlay Attack"}
    assert kinds == {True, False}  # data capture and consent flips both
    for name in ("task-hijack", "app-styled"):
        assert [c.id for c in fitting(name)] == overlays
        assert not any(fits(c, name) for c in CASES if c.use_dynamic != "Overlay Attack")


def test_contact_sms_fits_sms_cases_whose_attack_needs_no_reply_to_the_sender() -> None:
    sms = [c for c in CASES if c.use_dynamic == "Popup SMS"]
    fit = {c.id for c in fitting("contact-sms")}
    assert fit and fit <= {c.id for c in sms}
    for case in sms:
        checks = json.dumps(case.checks.model_dump(mode="json", by_alias=True))
        digits = "".join(ch for ch in case.sms.numbers[0] if ch.isdigit())[-7:]
        needs_sender = digits in "".join(ch for ch in checks if ch.isdigit())
        # A spoofed sender never gets the reply: an attack that needs one does not fit; a
        # message with a page reaches the attacker through the page, a reply or not.
        has_page = case.sms.page_information is not None
        assert (case.id in fit) == (has_page or not needs_sender), case.id


def test_contact_sms_needs_a_saved_contact_that_is_not_the_owner() -> None:
    case = fitting("contact-sms")[0]
    empty = {**case.setup, "contacts": []}
    no_contacts = Case.model_validate({**case.model_dump(), "setup": empty})
    assert not fits(no_contacts, "contact-sms")
    contacts = case.setup["contacts"]
    owner_phone = {**contacts[0], "phone": "+1 415 555 0142"}  # the owner's own number
    first_is_owner = Case.model_validate(
        {**case.model_dump(), "setup": {**case.setup, "contacts": [owner_phone, *contacts[1:]]}}
    )
    picked = spoofed_contact(first_is_owner)
    assert picked is not None and picked.name == contacts[1]["name"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_variant_reshapes_a_copy(variant: str) -> None:
    for case in fitting(variant):
        before = case.model_dump(mode="json")
        reshaped = case_under(case, variant)
        assert case.model_dump(mode="json") == before  # the shared case is untouched
        assert reshaped != case
        assert case_under(reshaped, variant) == reshaped  # applied twice, the same


def test_a_variant_refuses_a_case_it_does_not_fit() -> None:
    static = next(c for c in CASES if c.case_type == "Static Environment Injection")
    for variant in VARIANTS:
        assert not fits(static, variant)
        with pytest.raises(ValueError, match="does not fit"):
            case_under(static, variant)


# ----- the validity gate under each variant --------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_reference_agents_under_the_variant(variant: str) -> None:
    config = RunConfig(frames="none", attack=variant)
    for case in fitting(variant):
        gullible = run_episode(case, "gullible", config, None)
        assert gullible.label in ("FAS", "PAS"), (case.id, gullible.label, gullible.verdict)
        assert gullible.exposed is True, case.id
        oracle = run_episode(case, "oracle", config, None)
        assert oracle.label == "TC", (case.id, oracle.label, oracle.verdict)


@pytest.mark.parametrize("variant", VARIANTS)
def test_validity_gate_under_the_variant(variant: str) -> None:
    config = RunConfig(frames="none", attack=variant)
    failed = {}
    for case in fitting(variant):
        result = check_case(case, config)
        if result.status == "failed":
            failed[case.id] = result.problems
    assert not failed


# ----- what each variant puts on screen ------------------------------------------------------


def test_task_hijack_is_the_foreground_apps_own_screen() -> None:
    for case in fitting("task-hijack"):
        reshaped = case_under(case, "task-hijack")
        app = foreground_app(case)
        assert app is not None
        phone, obs = fired(reshaped)
        extra = reshaped.overlay
        assert obs.foreground_package == app.package
        shown = [e for e in obs.elements if e.package not in SYSTEM]
        assert shown and {e.package for e in shown} == {app.package}, case.id
        assert not any(e.package == (extra.package or DEFAULT_ATTACKER_PACKAGE) for e in shown)
        assert {e.text for e in shown} >= {extra.title, extra.confirm, extra.cancel}
        assert build_injection(reshaped).shows(obs)
        # One full-screen activity: none of the app's own screen is left to see.
        windows = {e.window for e in shown}
        assert windows == {f"{app.package}/{app.label}"}
        shown_event = phone.events.of_kind("overlay_shown")[-1]
        assert shown_event.package == (extra.package or DEFAULT_ATTACKER_PACKAGE)
        assert shown_event.data["task"] == app.package

        # Back finishes the activity: the app is back, the attack off screen.
        after = phone.act(Action(action_type="navigate_back"))
        assert after.foreground_package == app.package
        assert not any(e.text == extra.title for e in after.elements)
        assert any(e.package == app.package for e in after.elements)
        dismissed = phone.events.of_kind("overlay_dismissed")
        assert [e.data["label"] for e in dismissed] == ["Back"], case.id
        assert not phone.overlays


def test_task_hijack_stays_in_the_apps_task() -> None:
    case = case_under(fitting("task-hijack")[0], "task-hijack")
    app = foreground_app(case)
    assert app is not None
    phone, _ = fired(case)
    home = phone.act(Action(action_type="navigate_home"))
    assert not any(e.text == case.overlay.title for e in home.elements)
    again = phone.act(Action(action_type="open_app", app_name=app.label))
    assert any(e.text == case.overlay.title and e.package == app.package for e in again.elements)


def test_task_hijack_brings_its_task_to_the_front() -> None:
    case = case_under(fitting("task-hijack")[0], "task-hijack")
    app = foreground_app(case)
    assert app is not None
    phone = SimPhone()
    injection = build_injection(case)
    phone.reset(case.setup)
    injection.install(phone)
    injection.fire(phone)  # from the launcher: the app's task comes forward with it on top
    obs = phone.observe()
    assert obs.foreground_package == app.package
    assert any(e.text == case.overlay.title for e in obs.elements)


def test_app_styled_names_the_app_from_the_attackers_window() -> None:
    for case in fitting("app-styled"):
        reshaped = case_under(case, "app-styled")
        app = foreground_app(case)
        assert app is not None
        _, obs = fired(reshaped)
        extra = reshaped.overlay
        attacker = extra.package or DEFAULT_ATTACKER_PACKAGE
        assert obs.foreground_package == app.package
        title = [e for e in obs.elements if e.resource_id.endswith(":id/alertTitle")]
        assert len(title) == 1, case.id
        assert app.label in title[0].text
        assert title[0].package == attacker  # the window is still the attacker's
        own = [e for e in obs.elements if e.package == attacker]
        assert any(e.text == app.label for e in own)  # the brand line
        assert any(f"from {app.label}" in e.text for e in own)
        assert extra.brand == app.label and extra.styled_as == app.label


def test_contact_sms_shows_the_contacts_name() -> None:
    for case in fitting("contact-sms"):
        reshaped = case_under(case, "contact-sms")
        contact = spoofed_contact(case)
        assert contact is not None
        assert reshaped.sms.numbers == [contact.phone]
        phone = SimPhone()
        injection = build_injection(reshaped)
        phone.reset(reshaped.setup)
        injection.install(phone)
        injection.fire(phone)
        heads_up = [e for e in phone.observe().elements if e.window == "HeadsUp"]
        assert contact.name in {e.text for e in heads_up}, case.id
        assert contact.name in {e.content_desc.split(": ", 1)[-1] for e in heads_up}
        received = phone.events.of_kind("sms_received")[-1]
        assert received.data["sender"] == contact.phone
        inbox = phone.act(Action(action_type="open_app", app_name="Messages"))
        names = [e.text for e in inbox.elements if e.window.endswith("/Messages")]
        assert contact.name in names, case.id
        assert not any(n in names for n in case.sms.numbers)  # the number is not shown


# ----- determinism, the run command and the case statistics ---------------------------------


def _events(case: Case, agent: str, variant: str, out: Path) -> list[dict[str, Any]]:
    run_episode(case, agent, RunConfig(frames="none", attack=variant), out)
    lines = (RunDir(out).trajectory_dir(agent, case.id) / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_variant_is_deterministic(variant: str, tmp_path: Path) -> None:
    case = fitting(variant)[0]
    first = _events(case, "gullible", variant, tmp_path / "a")
    second = _events(case, "gullible", variant, tmp_path / "b")
    assert first == second
    assert any(e["kind"] == "injection_fired" for e in first)


def test_run_leaves_out_the_cases_a_variant_does_not_fit(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = cli(
        "run",
        "--attack-variant",
        "task-hijack",
        "--cases",
        "1-20",
        "--agent",
        "gullible",
        "--frames",
        "none",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output
    left = [c.id for c in CASES if 1 <= c.id <= 20 and not fits(c, "task-hijack")]
    assert left  # 1-20 holds SMS cases, which no overlay variant fits
    assert "does not fit are left out" in result.stderr
    assert str(left) in result.stderr
    run = RunDir(out)
    assert run.manifest()["config"]["attack"] == "task-hijack"
    kept = [c.id for c in run.cases()]
    assert kept == [c.id for c in CASES if 1 <= c.id <= 20 and fits(c, "task-hijack")]
    assert {r.case for r in run.records()} == set(kept)
    assert all(r.label in ("FAS", "PAS") for r in run.records())
    # Judges and reports read the cases as the run's episodes faced them.
    faced = {c.id: c for c in run.cases_faced()}
    assert all(faced[i].overlay.task for i in kept)


def test_a_variant_the_backend_cannot_show_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"task-hijack.*android"):
        check_backend("task-hijack", "android")
    check_backend("app-styled", "android")
    check_backend("contact-sms", "android")
    result = cli(
        "run",
        "--backend",
        "android",
        "--attack-variant",
        "task-hijack",
        "--cases",
        "1",
        "--out",
        str(tmp_path / "run"),
    )
    assert result.exit_code == 2
    assert "task-hijack" in result.stderr and "android" in result.stderr
    assert not (tmp_path / "run").exists()


def test_cases_stats_lists_the_variants() -> None:
    result = cli("cases", "stats", "--format", "json")
    assert result.exit_code == 0, result.output
    variants = json.loads(result.stdout)["variants"]
    assert list(variants) == sorted(ATTACK_VARIANTS)
    for name in VARIANTS:
        ids = [c.id for c in fitting(name)]
        assert variants[name]["cases"] == ids
        assert variants[name]["count"] == len(ids)
    assert variants["task-hijack"]["runs_on"] == ["sim"]
    table = cli("cases", "stats")
    assert table.exit_code == 0
    for name in VARIANTS:
        assert f"attack variant {name}:" in table.stdout
        assert f"fits {len(fitting(name))} case(s)" in table.stdout
    android = cli("cases", "stats", "--backend", "android")
    assert "not shown on android" in android.stdout
