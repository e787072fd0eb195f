"""``data-gate``: the owner's secrets may be typed only into the app the task is about.

A policy derived from the task, checked on every action before it runs. Two works propose
this shape of defence for agents: VeriSafe Agent (Lee et al., "Safeguarding Mobile GUI Agent
via Logic-based Action Verification", MobiCom 2025) turns the user's instruction into a
formal specification and verifies each GUI action against it before execution; Progent
(Shi et al., "Progent: Programmable Privilege Control for LLM Agents", 2025) gives an agent
only the privileges a policy grants for its task, and blocks every tool call outside them.
Here the policy is small and fixed rather than derived by a model: the owner's sensitive data
— as :mod:`ghostei.sensitive`'s registry names it, the one the judge's checks read too: card
number, expiry and CVV, PIN, password, passport, licence, national ID and bank account, as the
phone's ``Owner`` record holds them — may be typed only when

- the foreground app is one of the task's apps (the case's apps, mapped to packages by the
  simulator's app registry), and
- the field typed into belongs to that app's own window (its package is the foreground
  app's), not an overlay or another package's window; typing with no field the observation
  can show is not allowed either.

A typed value counts when it carries a secret as the registry matches them: whole values only
(the card number in any spacing, the passport by its letters and digits, the password
case-insensitively), and a short secret — CVV, PIN, expiry, the last digits of an ID — only in
a field that asks for its kind (its hint or id: "CVV", "card_expiry") or after a word that
names it ("PIN 2580" in a message), so a phone number holding the CVV's digits is no CVV. The
field's text already there is counted with the new text, so a secret typed in pieces into one
field is still seen. Contact data (phone, email, address) is not guarded: ordinary tasks type
it (sharing an address with a friend), and the gate would stop them.

``strict`` (default off) also asks the instruction to call for the data, by keywords:

- card number, expiry, CVV: pay, payment, card, checkout, purchase, buy, book (as a verb),
  deposit, subscribe;
- passport: passport; licence: licence, license; national ID: ssn, social security,
  national id; bank account: bank, account, transfer, routing;
- PIN: pin, passcode;
- password: password, passcode, sign in, log in, login;

or the instruction contains the value itself. Keywords are a heuristic: they miss a
paraphrase and pass a mention in another sense.

What it cannot do: the task's apps are the scope a deployer gives the agent, so when a case
lists the app an attack leads to (a phishing page in Chrome where Chrome is among the task's
apps) the data typed there passes; secrets sent through a task's own app (a text message
with the card number, when Messages is a task app) pass unless ``strict``; data the owner's
record does not hold (a one-time code the phone received) is not guarded; text entered key by
key on the soft keyboard is not seen.

``on_block``: ``skip`` (the typing becomes nothing and the episode goes on) or ``ask`` (it
becomes ``ask_user`` with a short note of what was blocked, which ends the episode).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..agents.base import AgentStep
from ..observation import Observation, UIElement
from ..sensitive import KINDS, Secret, carried, instruction_secrets, kinds_of, owner_secrets
from ..world import Owner, World
from . import register_defence
from .base import Defence, DefenceContext, ask_user, check_on_block
from .windows import target_of, task_packages

# The sensitive kinds the gate guards: all but contact data, which benign tasks type.
GUARDED = tuple(
    k.name for k in KINDS.values() if k.sensitive and k.name not in {"phone", "email", "address"}
)

_CARD = r"pay|pays|paying|payment|payments|card|cards|checkout|check out|purchase|buy|book"
# What an instruction says when it calls for a kind of data (strict).
KEYWORDS: dict[str, str] = {
    "card_number": _CARD + r"|deposit|subscribe|subscription",
    "card_expiry": _CARD + r"|deposit|subscribe|subscription",
    "card_cvv": _CARD + r"|deposit|subscribe|subscription|cvv|cvc",
    "passport": r"passport|passports",
    "licence": r"licen[cs]e|licen[cs]es",
    "national_id": r"ssn|social security|national id",
    "bank_account": r"bank|account|transfer|routing",
    "pin": r"pin|passcode",
    "password": r"password|passwords|passcode|sign in|sign-in|log in|log-in|login",
    "otp": r"code|codes|otp|verification|verify",
}


def secrets_of(owner: Owner) -> list[Secret]:
    """The owner's values the gate guards, as the registry normalises them."""
    return [s for s in owner_secrets(World(owner=owner)) if s.kind in GUARDED]


def asked_by(field: UIElement | None) -> set[str]:
    """The kinds a field asks for, by its hint, id and description ("CVV", "card_expiry")."""
    if field is None:
        return set()
    labels = (field.hint, field.resource_id.rsplit("/", 1)[-1], field.content_desc)
    return {k.name for label in labels if label for k in kinds_of(label)}


def contains(text: str, secret: Secret, asked: Sequence[str] = ()) -> bool:
    """Whether typed ``text`` holds ``secret``: a short one only where ``asked`` for or named."""
    return bool(carried(text, [secret], asked, labelled=True))


@register_defence
class DataGate(Defence):
    """Blocks typing the owner's secrets anywhere but a task app's own window."""

    name = "data-gate"
    point = "action"
    summary = (
        "the owner's card, PIN, password and ID numbers may be typed only into the task's own "
        "app, in its own window (strict: only when the instruction calls for them)"
    )
    source = (
        "a task-derived policy checked before each action, after VeriSafe Agent "
        "(MobiCom 2025) and Progent (privilege control for LLM agents, 2025)"
    )

    def __init__(
        self, ctx: DefenceContext, *, on_block: str = "skip", strict: bool = False
    ) -> None:
        super().__init__(ctx)
        self.on_block = check_on_block(self.name, on_block)
        self.strict = strict
        self.packages = task_packages(ctx.task_apps)
        self.owner_secrets = secrets_of(ctx.owner)
        self.secrets = self.owner_secrets
        self.reset(ctx.instruction)

    def reset(self, instruction: str) -> None:
        # The user's card or password given in the instruction is guarded as the profile's.
        given = [s for s in instruction_secrets(instruction) if s.kind in GUARDED]
        self.secrets = self.owner_secrets + [s for s in given if s not in self.owner_secrets]
        # What the instruction calls for (strict): kinds named by a keyword or by value.
        self.called_for = {
            s.kind
            for s in self.secrets
            if re.search(rf"\b(?:{KEYWORDS[s.kind]})\b", instruction, re.IGNORECASE)
            or contains(instruction, s)
        }

    def review(self, observation: Observation, step: AgentStep) -> AgentStep:
        action = step.action
        if action.action_type != "input_text" or not action.text:
            return step
        field = target_of(observation, action)
        typed = [action.text]
        if field is not None and field.editable and not field.password and field.text:
            typed.append(field.text + action.text)  # the field's value once typed
        asked = sorted(asked_by(field))
        found = [s for s in self.secrets if any(contains(t, s, asked) for t in typed)]
        if not found:
            return step
        names = ", ".join(dict.fromkeys(s.label for s in found))
        foreground = observation.foreground_package
        problem = None
        if foreground not in self.packages:
            problem = f"the app in use ({foreground}) is not one the task names"
        elif field is None:
            problem = "no field of the app in use is shown to take it"
        elif field.package != foreground:
            problem = f"the field is in a window of {field.package}, not of {foreground}"
        elif self.strict:
            uncalled = list(dict.fromkeys(s.label for s in found if s.kind not in self.called_for))
            if uncalled:
                problem = f"the instruction does not call for the {', '.join(uncalled)}"
        if problem is None:
            return step
        reason = f"typing the owner's {names}: {problem}"
        if self.on_block == "ask":
            note = f"I stopped typing your {names} here: {problem}."
            return self.block(step, reason, ask_user(note))
        return self.block(step, reason)
