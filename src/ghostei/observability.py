"""What a device backend can observe: event kinds and their keys, and state paths.

A judge may conclude "this did not happen" only from a source that would have seen it. The
simulated phone sees everything it does. A stock Android device with our helper app reports
less: the helper's overlay events and what its accessibility service and notification
listener see, the loopback web server's page visits, submissions and keystroke beacons (every
host routed to it through Chrome's flags), the SMS and calendar providers, settings changes,
what adb reads back (contacts, settings, the files in shared storage, the focused field in a
dump) and what the host itself does (the agent's terminal actions, the foreground app, the SMS
the console delivers). A rule check
that reads anything else is *undetermined* there, never "did not hold" (DESIGN.md).

An event is observable within a scope: a kind, the data keys the source reports, and
optionally the package and data values the source is limited to (the phishing server sees
typing only on its own pages: ``text_typed`` with ``phishing: true``). A check is observable
when it asks only within one scope: its kind, its keys among the scope's, and its ``package``
and ``where`` at least as narrow as the scope's. Which triggers can fire on a backend follows
from the events each trigger reads (:func:`ghostei.injection.trigger_can_fire`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .events import EVENTS


@dataclass(frozen=True)
class EventScope:
    """Events of one kind that a backend reports, with the keys it reports them with."""

    kind: str
    keys: frozenset[str]
    package: str | None = None  # only events of this package are reported
    where: Mapping[str, Any] = field(default_factory=dict)  # only events with these values

    def covers(
        self, kind: str, keys: Iterable[str], package: str | None, where: Mapping[str, Any]
    ) -> bool:
        """Whether a check asking this is answered within the scope: its kind and keys, and a
        package and ``where`` that keep it to events the source reports."""
        return kind == self.kind and set(keys) <= self.keys and self.reports(package, where)

    def reports(self, package: str | None, data: Mapping[str, Any]) -> bool:
        """Whether the source reports an event of this kind from ``package`` with ``data``."""
        if self.package is not None and package != self.package:
            return False
        return all(k in data and data[k] == v for k, v in self.where.items())


@dataclass(frozen=True)
class Observability:
    """What one backend can observe. ``None`` for events or state means everything."""

    name: str
    events: tuple[EventScope, ...] | None = None
    state: tuple[str, ...] | None = None  # path prefixes, like ``sms`` or ``settings.wifi``
    blind_state: tuple[str, ...] = ()  # exceptions within ``state``: ``sms.attachments``

    def sees_event(
        self,
        kind: str,
        keys: Iterable[str] = (),
        package: str | None = None,
        where: Mapping[str, Any] | None = None,
    ) -> bool:
        """Whether absence of such an event on this backend means it did not happen."""
        if self.events is None:
            return True
        keys = list(keys)
        return any(s.covers(kind, keys, package, where or {}) for s in self.events)

    def sees_state(self, path: str) -> bool:
        """Whether the final state at ``path`` is read from the device, not assumed.

        Every field the path touches counts, selector keys included: ``sms[body=x].address``
        reads ``sms.body`` and ``sms.address``.
        """
        seen = None if self.state is None else [path_parts(s) for s in self.state]
        blind = [path_parts(b) for b in self.blind_state]
        for touched in touched_fields(path):
            if seen is not None and not any(touched[: len(p)] == p for p in seen):
                return False
            if any(touched[: len(b)] == b for b in blind):
                return False
        return True


def path_parts(path: str) -> list[str]:
    """A state path's keys without selectors: ``contacts[id=c1].phone`` -> contacts, phone."""
    return [p for p in re.sub(r"\[[^\]]*\]", ".", path).split(".") if p]


def touched_fields(path: str) -> list[list[str]]:
    """The fields a state path reads: its keys, and each selector's key where it selects."""
    touched: list[list[str]] = []
    keys: list[str] = []
    for part in re.findall(r"\[[^\]]*\]|[^.\[\]]+", path):
        if part.startswith("["):
            key = part[1:-1].partition("=")[0]
            if key and key != "*":
                touched.append([*keys, key])
        else:
            keys.append(part)
    touched.append(keys)
    return touched


def scope(kind: str, *keys: str, package: str | None = None, **where: Any) -> EventScope:
    """An event scope; with no keys, every key of the kind (the source reports it whole)."""
    return EventScope(kind, frozenset(keys) if keys else EVENTS[kind].keys, package, where)


# The simulated phone writes every event of its own world and holds the whole world state.
SIM = Observability("sim")

# What a backend observes in one case's episodes, given the case (a device reaches some
# pages only). The core never looks inside the case; the backend's declaration may.
CaseDeclaration = Callable[[Any], Observability]

# Each backend hands its declaration to the core when its module is imported, so adding a
# backend never edits the core: name -> (what it observes, what it observes in a case).
_BACKENDS: dict[str, tuple[Observability, CaseDeclaration]] = {}


def register_backend(
    name: str, observability: Observability, for_case: CaseDeclaration | None = None
) -> None:
    """Declare what backend ``name`` observes; ``for_case`` narrows it to one case."""
    _BACKENDS[name] = (observability, for_case or (lambda _case: observability))


def backend_names() -> tuple[str, ...]:
    """The backends registered so far, in the order they were."""
    return tuple(_BACKENDS)


def case_observability(backend: str, case: object) -> Observability:
    """What a backend observes in one case's episodes (a device reaches some pages only)."""
    return _declared(backend)[1](case)


def observability_for(backend: str) -> Observability:
    """The declaration of a registered backend by name (``sim``, ``android``)."""
    return _declared(backend)[0]


def _declared(backend: str) -> tuple[Observability, CaseDeclaration]:
    if backend not in _BACKENDS:
        known = ", ".join(_BACKENDS) or "none registered"
        raise ValueError(f"unknown backend {backend!r}; known: {known}")
    return _BACKENDS[backend]
