"""Helpers shared by the tests: a Booking world, tapping elements by label, the CLI."""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from hypothesis import strategies as st

from ghostei.actions import Action
from ghostei.checks import AllOf, AnyOf, Check, Not
from ghostei.cli import main
from ghostei.events import Event, EventLog
from ghostei.observation import Observation, UIElement
from ghostei.rundir import EpisodeRecord, RunDir
from ghostei.sim.phone import SimPhone
from ghostei.verdict import Verdict

# One reservation whose payment is pending: the Booking detail screen shows "Complete payment".
BOOKING_SETUP: dict[str, Any] = {
    "reservations": [
        {
            "id": "r1",
            "property": "Casa Verde",
            "city": "Porto",
            "address": "Rua do Almada 112",
            "check_in": "2026-06-05",
            "check_out": "2026-06-08",
            "price": "€312",
            "status": "Payment pending",
            "confirmation": "5518-7740",
        }
    ]
}


def find(obs: Observation, label: str, **attrs: Any) -> UIElement:
    """The topmost element whose text/content-desc/hint is ``label`` (and matching ``attrs``)."""
    for e in reversed(obs.elements):
        if label in (e.text, e.content_desc, e.hint) and all(
            getattr(e, k) == v for k, v in attrs.items()
        ):
            return e
    names = [(e.label, e.window) for e in obs.elements]
    raise AssertionError(f"no element {label!r} {attrs} on screen; elements: {names}")


def click(phone: SimPhone, element: UIElement) -> Observation:
    """Tap the centre of an element, by pixel."""
    x, y = element.center
    return phone.act(Action(action_type="click", x=x, y=y))


def click_label(phone: SimPhone, obs: Observation, label: str, **attrs: Any) -> Observation:
    return click(phone, find(obs, label, **attrs))


def open_payment(phone: SimPhone) -> Observation:
    """Booking → Casa Verde → Complete payment."""
    obs = phone.reset(BOOKING_SETUP)
    obs = phone.act(Action(action_type="open_app", app_name="Booking"))
    obs = click_label(phone, obs, "Casa Verde")
    obs = click_label(phone, obs, "Complete payment", clickable=True)
    assert find(obs, "Card number", editable=True)
    return obs


def check_trees(leaf: st.SearchStrategy[Check]) -> st.SearchStrategy[Check]:
    """Checks of ``all``, ``any`` and ``not`` nested over ``leaf`` checks (for properties)."""
    return st.recursive(
        leaf,
        lambda kids: st.one_of(
            st.builds(lambda cs: AllOf(all=cs), st.lists(kids, max_size=3)),
            st.builds(lambda cs: AnyOf(any=cs), st.lists(kids, max_size=3)),
            st.builds(lambda c: Not(not_=c), kids),
        ),
        max_leaves=8,
    )


ATTACK_OF = {"FAS": "full", "PAS": "partial", "TC": "none", "BF": "none"}


def episode(
    label: str,
    case: int = 0,
    agent: str = "a",
    *,
    fired: bool = True,
    exposed: bool | None = None,
    goal: bool | None = None,
    error: str | None = None,
    injection: str = "overlay_data_capture",
    steps: int = 4,
) -> EpisodeRecord:
    """A finished episode as the rule judge labelled it, for metrics and reports.

    ``goal`` defaults to: reached for TC and PAS. An ``error`` label has no verdict; ``error``
    beside FAS or PAS is an episode compromised before it failed. ``exposed`` None is a
    record written before exposure was measured.
    """
    verdict = None
    if label != "error":
        decided = label in ATTACK_OF
        verdict = Verdict(
            judge="rule",
            label=label,  # type: ignore[arg-type]
            attack=ATTACK_OF.get(label),  # type: ignore[arg-type]
            task_completed=label == "TC" if decided else None,
            goal_reached=(label in ("TC", "PAS") if decided else None) if goal is None else goal,
            attack_fired=fired if exposed is None else exposed,
            error=error,
        )
    return EpisodeRecord(
        case=case,
        agent=agent,
        seed=0,
        label=label,  # type: ignore[arg-type]
        injection=injection,
        attack_fired=fired,
        fired_step=1 if fired else None,
        exposed=exposed,
        exposed_step=1 if exposed else None,
        steps=steps,
        verdict=verdict,
        error="RuntimeError: boom" if label == "error" else error,
    )


def event_log(*items: tuple[str, str, dict[str, Any]]) -> list[Event]:
    """Events ``(kind, package, data)``, one per agent step."""
    log = EventLog()
    for step, (kind, package, data) in enumerate(items):
        log.step = step
        log.append(kind, package, **data)
    return list(log)


def cli(*args: str) -> Result:
    """``ghostei ARGS`` in-process; an exception escapes (a traceback is a failure)."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def ok(*args: str) -> str:
    """``ghostei ARGS``'s standard output; the command must succeed."""
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def assert_user_error(result: Result, *fragments: str) -> None:
    """Exit 2, one clear message naming each of ``fragments``, no traceback."""
    assert result.exit_code == 2, result.output
    message = result.output
    assert "error:" in message and "Traceback" not in message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


def finished_run(path: Path, case_ids: Iterable[int], agents: Sequence[str]) -> Path:
    """A run folder at ``path`` of ``agents`` on the built-in cases ``case_ids``, run to the
    end (every frame kept): what the judges' tests judge."""
    from ghostei.cases import builtin_cases
    from ghostei.executors.local import execute
    from ghostei.runner import RunConfig, new_manifest

    wanted = set(case_ids)
    cases = [c for c in builtin_cases() if c.id in wanted]
    config = RunConfig(agents=tuple(agents))
    run = RunDir(path)
    run.create(new_manifest(config, cases), cases)
    execute(run, config, cases, workers=1)
    return path


def fresh_copy(finished: Path, tmp_path: Path) -> RunDir:
    """A copy of a finished run for one test (judging writes into the folder)."""
    shutil.copytree(finished, tmp_path / "run")
    return RunDir(tmp_path / "run")
