"""How varied and how well held-out a generated suite is: the figures a reviewer asks for.

Texts are read as the agent reads them: a case's **task text** is its benign request (a
harmful instruction's benign counterpart), its **attack text** the attacker's words (an
overlay's title and content, a pop-up text, a planted request, a harmful instruction: the
case's ``content``). Per 100 cases means: the mean number of distinct texts among 100 cases
drawn at random from the suite (200 draws, seeded: the same suite gives the same figure),
whatever order the suite's files or ids are in; **in cell order**: the mean over consecutive
windows of 100 in the matrix's order (vector, app domain, risk domain), the order the
generator draws in, where a window sees one or two domains of one vector (the harder figure).
"""

from __future__ import annotations

import json
import random
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .identity import case_digest
from .schema import APP_DOMAINS, RISK_DOMAINS, VECTORS, Case

WINDOW = 100
DRAWS = 200
_PLACEHOLDER = re.compile(r"\{[^{}\s]*\}")


def task_text(case: Case) -> str:
    """The benign request of a case, as the agent would read it."""
    if case.case_type == "User-Provided Instructions" and case.benign is not None:
        return case.benign.prompt
    return case.prompt


def attack_text(case: Case) -> str:
    """The attacker's words in a case (an overlay's: its title, a line break, its content)."""
    title = overlay_title(case)
    return case.content if title is None else f"{title}\n{case.content}"


def duplicate_key(prompt: str, attack: str, checks: Any) -> str:
    """What two cases share when they are one case: prompt, attack text and checks."""
    return json.dumps([prompt, attack, checks], sort_keys=True)


def overlay_title(case: Case) -> str | None:
    """An overlay's title, or None for the other vectors."""
    title = case.extra.get("title") if isinstance(case.extra, dict) else None
    return title if case.use_dynamic == "Overlay Attack" and isinstance(title, str) else None


def normalised(text: str) -> str:
    """A text with what makes near-variants differ taken out: case, digits, punctuation."""
    return " ".join(re.sub(r"[^a-z]+", " ", text.casefold()).split())


def per_100(cases: Sequence[Case], text: Callable[[Case], str | None]) -> float:
    """The mean number of distinct texts among 100 cases drawn at random (200 draws)."""
    if len(cases) < WINDOW:
        return float("nan")
    rng = random.Random(0)
    ordered = sorted(cases, key=lambda c: c.id)
    counts = []
    for _ in range(DRAWS):
        window = [text(c) for c in rng.sample(ordered, WINDOW)]
        counts.append(len({t for t in window if t is not None}))
    return round(statistics.mean(counts), 1)


def cell_order(case: Case) -> tuple[int, int, int, int]:
    """Where a case is in the matrix's order: vector, app domain, risk domain, then id."""
    risk = next(iter(case.potential_risks), "")
    return (
        VECTORS.index(case.vector) if case.vector in VECTORS else len(VECTORS),
        APP_DOMAINS.index(case.app_domain) if case.app_domain in APP_DOMAINS else 99,
        RISK_DOMAINS.index(risk) if risk in RISK_DOMAINS else 99,
        case.id,
    )


def per_100_in_order(cases: Sequence[Case], text: Callable[[Case], str | None]) -> float:
    """The mean number of distinct texts in consecutive windows of 100 cases in cell order
    (a last window of fewer than 100 is left out)."""
    ordered = sorted(cases, key=cell_order)
    counts = []
    for start in range(0, len(ordered) - WINDOW + 1, WINDOW):
        window = [text(c) for c in ordered[start : start + WINDOW]]
        counts.append(len({t for t in window if t is not None}))
    return round(statistics.mean(counts), 1) if counts else float("nan")


def _groups(cases: Iterable[Case], key: Callable[[Case], str]) -> list[list[int]]:
    found: dict[str, list[int]] = defaultdict(list)
    for case in cases:
        found[key(case)].append(case.id)
    return [ids for ids in found.values() if len(ids) > 1]


def duplicate_groups(cases: Iterable[Case]) -> list[list[int]]:
    """Cases identical in prompt, attack text and checks (ids, by group)."""
    return _groups(
        cases,
        lambda c: duplicate_key(c.prompt, attack_text(c), c.checks.model_dump(mode="json")),
    )


def near_duplicate_groups(cases: Iterable[Case]) -> list[list[int]]:
    """Cases whose task text and attack text are the same once normalised."""
    return _groups(cases, lambda c: normalised(task_text(c)) + "\n" + normalised(attack_text(c)))


def cross_split(cases: Iterable[Case], text: Callable[[Case], str]) -> list[str]:
    """Texts (normalised) that occur in both the dev and the test split."""
    splits: dict[str, set[str]] = defaultdict(set)
    for case in cases:
        if case.generated is not None:
            splits[normalised(text(case))].add(case.generated.split)
    return sorted(t for t, found in splits.items() if len(found) > 1)


def placeholders(cases: Iterable[Case]) -> list[tuple[int, str, str]]:
    """Agent-visible texts holding an unfilled slot: (case id, where, text)."""
    found = []
    for case in cases:
        data = case.model_dump(mode="json", by_alias=True)
        for where, text in agent_visible(data):
            if _PLACEHOLDER.search(text):
                found.append((case.id, where, text))
    return found


def id_collisions(*suites: Iterable[Case]) -> list[int]:
    """Ids that name cases of different content in the suites given."""
    digests: dict[int, set[str]] = defaultdict(set)
    for suite in suites:
        for case in suite:
            digests[case.id].add(case_digest(case))
    return sorted(i for i, found in digests.items() if len(found) > 1)


@dataclass(frozen=True)
class Diversity:
    """A suite's variety and leakage figures."""

    cases: int
    tasks_per_100: float
    attacks_per_100: float
    overlay_titles_per_100: float
    tasks_per_100_in_order: float
    attacks_per_100_in_order: float
    overlay_titles_per_100_in_order: float
    distinct_tasks: int
    distinct_attacks: int
    duplicate_groups: int
    near_duplicate_groups: int
    cross_split_tasks: int
    cross_split_attacks: int
    placeholders: int

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def diversity(cases: Sequence[Case]) -> Diversity:
    """The figures of a suite (see the module's docstring for what each counts)."""
    overlays = [c for c in cases if overlay_title(c) is not None]
    return Diversity(
        cases=len(cases),
        tasks_per_100=per_100(cases, task_text),
        attacks_per_100=per_100(cases, attack_text),
        overlay_titles_per_100=per_100(overlays, overlay_title),
        tasks_per_100_in_order=per_100_in_order(cases, task_text),
        attacks_per_100_in_order=per_100_in_order(cases, attack_text),
        overlay_titles_per_100_in_order=per_100_in_order(overlays, overlay_title),
        distinct_tasks=len({task_text(c) for c in cases}),
        distinct_attacks=len({attack_text(c) for c in cases}),
        duplicate_groups=len(duplicate_groups(cases)),
        near_duplicate_groups=len(near_duplicate_groups(cases)),
        cross_split_tasks=len(cross_split(cases, task_text)),
        cross_split_attacks=len(cross_split(cases, attack_text)),
        placeholders=len(placeholders(cases)),
    )


# Keys of a case whose strings the agent never reads: how an attack fires, what it grants,
# the words that prove exposure, the check's own terms.
_UNSEEN = frozenset({"trigger", "consent", "reveal", "generated", "checks", "solution"})


def agent_visible(data: dict[str, Any]) -> list[tuple[str, str]]:
    """Every text of a case the agent may be shown, with where it is: the prompt, the
    benign prompt, the attack (overlay, page, message, planted records) and the world."""
    found: list[tuple[str, str]] = []

    def walk(value: Any, where: str) -> None:
        if isinstance(value, str):
            found.append((where, value))
        elif isinstance(value, dict):
            for k, v in value.items():
                if k not in _UNSEEN:
                    walk(v, f"{where}.{k}" if where else str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{where}[{i}]")

    walk(data.get("prompt"), "prompt")
    walk((data.get("benign") or {}).get("prompt"), "benign.prompt")
    walk(data.get("extra"), "extra")
    walk(data.get("setup"), "setup")
    return found


def unfilled(data: dict[str, Any]) -> list[tuple[str, str]]:
    """The agent-visible texts of a case that still hold a template slot (``{owner.pin}``)."""
    return [(where, text) for where, text in agent_visible(data) if _PLACEHOLDER.search(text)]
