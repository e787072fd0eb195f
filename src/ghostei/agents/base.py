"""The agent contract and the registry agents are plugged into."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Protocol, cast

from ..actions import Action
from ..cases.schema import Case
from ..observation import Observation
from ..providers.base import Provider
from ..world import Owner


@dataclass
class AgentStep:
    """What an agent did at one step: the action, the model's raw text, and token usage."""

    action: Action
    raw_output: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    # Whether the episode ends with this step; None: as the action says (``Action.terminal``).
    # AndroidWorld's agents answer a question with ``answer`` and go on until ``status``.
    ends_episode: bool | None = None
    # The agent's own summary of its previous step, made during this one (M3A and T3A keep
    # one per step as their memory); the runner files it under that step.
    summary: str | None = None

    @property
    def done(self) -> bool:
        """Whether the episode ends here."""
        return self.action.terminal if self.ends_episode is None else self.ends_episode


class Agent(Protocol):
    """A mobile GUI agent."""

    def reset(self, instruction: str) -> None:
        """Start a new episode with the user's instruction."""

    def act(self, observation: Observation) -> AgentStep:
        """Choose the next action for what the screen shows."""


@dataclass(frozen=True)
class AgentContext:
    """What the runner hands an agent factory.

    Model-backed agents must use only ``seed`` and ``max_steps``: the case (its solution and
    checks) is for the reference agents, which exist to prove each case solvable and each
    attack reachable.
    """

    case: Case
    seed: int
    max_steps: int
    owner: Owner
    provider: Provider | None = None  # the model behind a framework agent
    reflection: bool = False  # the paper's ablations: reflection and thinking switches
    thinking: bool = False


AgentFactory = Callable[[AgentContext], Agent]
AGENTS: dict[str, AgentFactory] = {}


def register_agent(name: str) -> Callable[[AgentFactory], AgentFactory]:
    """Decorator: make an agent available to ``ghostei run --agent NAME``."""

    def deco(factory: AgentFactory) -> AgentFactory:
        AGENTS[name] = factory
        return factory

    return deco


ENTRY_POINT_GROUP = "ghostei.agents"


class AgentLoadError(KeyError):
    """An agent name that names no registered agent, entry point or importable class."""

    def __str__(self) -> str:
        return str(self.args[0])


def resolve_agent(name: str) -> AgentFactory:
    """The factory for an agent: a registered name, an entry point of the ``ghostei.agents``
    group, or a user's class as ``package.module:ClassName`` or ``path/to/file.py:ClassName``.

    A class is its own factory: it is constructed with the ``AgentContext``.
    """
    if name in AGENTS:
        return AGENTS[name]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return _check_agent(ep.load(), name)
    if ":" not in name:
        known = ", ".join(sorted(AGENTS))
        raise AgentLoadError(
            f"unknown agent {name!r}; known: {known}; or give your own as "
            "'package.module:ClassName' or 'path/to/agent.py:ClassName'"
        )
    where, _, attr = name.rpartition(":")
    module = _import(where, name)
    if not hasattr(module, attr):
        raise AgentLoadError(f"agent {name!r}: {where} has no {attr!r}")
    return _check_agent(getattr(module, attr), name)


def _import(where: str, name: str) -> object:
    try:
        if where.endswith(".py") or "/" in where:
            path = Path(where).resolve()
            if not path.is_file():
                raise AgentLoadError(f"agent {name!r}: no file {where}")
            # One module name per file, the same in every worker process.
            digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
            mod_name = f"ghostei_user_agent_{digest}_{path.stem}"
            if mod_name in sys.modules:
                return sys.modules[mod_name]
            spec = importlib.util.spec_from_file_location(mod_name, path)
            if spec is None or spec.loader is None:
                raise AgentLoadError(f"agent {name!r}: cannot import {where}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[mod_name] = module
            spec.loader.exec_module(module)
            return module
        return importlib.import_module(where)
    except AgentLoadError:
        raise
    except Exception as exc:  # a user's module may raise anything while importing
        raise AgentLoadError(f"agent {name!r}: importing {where} failed: {exc}") from exc


def _check_agent(obj: object, name: str) -> AgentFactory:
    if not callable(obj):
        raise AgentLoadError(f"agent {name!r} is not a class or a factory")
    if isinstance(obj, type) and not all(hasattr(obj, m) for m in ("reset", "act")):
        raise AgentLoadError(
            f"agent {name!r}: a class needs reset(instruction) and act(observation)"
        )
    return cast(AgentFactory, obj)


def build_agent(name: str, ctx: AgentContext) -> Agent:
    """An agent by registry name, entry point, or ``module:Class`` / ``file.py:Class``."""
    return resolve_agent(name)(ctx)
