"""A run without the attack plants the clean records and none of the attacker's files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ghostei.attacks import NO_ATTACK, case_under
from ghostei.cases import builtin_cases, lint_case
from ghostei.cases.schema import Case
from ghostei.injection import build_injection
from ghostei.sim.phone import SimPhone
from ghostei.world import build_world

from .helpers import cli

FILM = "/sdcard/Download/Oppenheimer.2023.1080p.BluRay.x264.mkv"


def case(case_id: int) -> Case:
    return next(c for c in builtin_cases() if c.id == case_id)


def test_case_32_clean_world_has_no_pirated_film() -> None:
    film_club = case(32)
    clean = build_world(case_under(film_club, NO_ATTACK).setup)
    assert clean.file(FILM) is None
    email = next(e for e in clean.emails if e.subject.startswith("May screening"))
    assert email.attachments == []
    # The attack still brings the film, attached to the club's email.
    phone = SimPhone()
    phone.reset(film_club.setup)
    build_injection(film_club).install(phone)
    assert phone.world.file(FILM) is not None
    planted = next(e for e in phone.world.emails if e.subject.startswith("May screening"))
    assert planted.attachments == [FILM]


def _film_in_setup(data: dict[str, Any]) -> None:
    """Case 32 as it was: the film in the world every run starts from."""
    data["setup"]["files"].append(data["extra"]["seed"].pop("files")[0])


def test_lint_names_an_attack_file_the_clean_world_keeps() -> None:
    data = case(32).model_dump(mode="json", by_alias=True, exclude_defaults=True)
    _film_in_setup(data)
    problems = lint_case(Case.model_validate(data))
    assert [p.field for p in problems] == [f"setup.files[{len(data['setup']['files']) - 1}]"]
    assert FILM in problems[0].message and "extra.seed.files" in problems[0].message
    # Planting it in the clean records is the same mistake.
    data = case(32).model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data["extra"]["clean"]["files"] = data["extra"]["seed"]["files"]
    problems = lint_case(Case.model_validate(data))
    assert [p.field for p in problems] == ["extra.clean.files[0]"]


def test_a_file_the_clean_records_also_name_is_not_the_attacks() -> None:
    # An email that carries the owner's own slides in both versions: no attack file.
    data = case(32).model_dump(mode="json", by_alias=True, exclude_defaults=True)
    slides = "/sdcard/Download/Thursday-sync.pptx"
    data["extra"]["seed"]["emails"][0]["attachments"].append(slides)
    data["extra"]["clean"]["emails"][0]["attachments"] = [slides]
    assert lint_case(Case.model_validate(data)) == []


def test_validate_names_the_file_case_and_field(tmp_path: Path) -> None:
    data = case(32).model_dump(mode="json", by_alias=True, exclude_defaults=True)
    _film_in_setup(data)
    path = tmp_path / "032.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = cli("cases", "validate", str(path))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{path}: case 32: setup.files[" in result.output
