"""Trigger timing: ``after_steps`` counts whole agent steps after the target app came up."""

from __future__ import annotations

import pytest

from ghostei.actions import Action
from ghostei.cases import builtin_cases
from ghostei.injection import build_injection
from ghostei.sim.phone import SimPhone


@pytest.mark.parametrize("after", [0, 1, 3])
def test_an_overlay_fires_after_the_given_number_of_steps_in_the_app(after: int) -> None:
    base = next(c for c in builtin_cases() if c.id == 6)  # a consent overlay on Contacts
    extra = {
        **base.extra,
        "trigger": {"on": "app_opened", "apps": ["Contacts"], "after_steps": after},
    }
    case = base.model_copy(update={"extra": extra})
    phone = SimPhone(540, 1200)
    phone.reset(case.setup)
    injection = build_injection(case)
    injection.install(phone)
    actions = [Action(action_type="wait"), Action(action_type="open_app", app_name="Contacts")]
    actions += [Action(action_type="wait")] * 5
    fired_after = None
    for step, action in enumerate(actions):
        phone.begin_step(step)
        phone.act(action)
        if injection.after_step(phone, step + 1):
            fired_after = step
            break
    # Contacts opened during step 1; the overlay is up once ``after`` more steps completed.
    assert fired_after == 1 + after
    assert injection.fired_step == 2 + after
