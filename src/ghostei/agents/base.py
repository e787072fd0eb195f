"""The agent contract and the registry agents are plugged into."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from ..actions import Action
from ..cases.schema import Case
from ..observation import Observation
from ..plugins import PluginLoadError, load_plugin
from ..providers.base import Provider
from ..world import Owner


@dataclass(frozen=True)
class Blocked:
    """An action a defence stopped: which defence, why, and what the agent had chosen."""

    defence: str
    reason: str
    action: Action

    def to_json(self) -> dict[str, Any]:
        """As a step's ``blocked`` record and an ``action_blocked`` event's data hold it."""
        return {
            "defence": self.defence,
            "reason": self.reason,
            "action": self.action.model_dump(exclude_none=True),
        }


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
    # Set when a defence stopped the agent's action (``action`` is then what was done
    # instead); the runner records it as an ``action_blocked`` event.
    blocked: Blocked | None = None

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


# Families of agents named ``FAMILY:ARGUMENT`` (``probe:typed-unsent``): each family makes
# the factory for its argument.
AGENT_FAMILIES: dict[str, Callable[[str], AgentFactory]] = {}


def register_agent_family(
    prefix: str,
) -> Callable[[Callable[[str], AgentFactory]], Callable[[str], AgentFactory]]:
    """Decorator: make ``PREFIX:ARGUMENT`` agents, each built by ``maker(ARGUMENT)``."""

    def deco(maker: Callable[[str], AgentFactory]) -> Callable[[str], AgentFactory]:
        AGENT_FAMILIES[prefix] = maker
        return maker

    return deco


ENTRY_POINT_GROUP = "ghostei.agents"
# The error for a name that finds no agent (one class for every kind of plug-in).
AgentLoadError = PluginLoadError


def resolve_agent(name: str) -> AgentFactory:
    """The factory for an agent: a registered name, an entry point of the ``ghostei.agents``
    group, or a user's class as ``package.module:ClassName`` or ``path/to/file.py:ClassName``.

    A class is its own factory: it is constructed with the ``AgentContext``. A name of a
    registered family, ``FAMILY:ARGUMENT``, is that family's agent for the argument.
    """
    family, sep, argument = name.partition(":")
    if sep and name not in AGENTS and family in AGENT_FAMILIES:
        if not argument:
            raise AgentLoadError(f"agent {name!r}: name one after {family}:")
        return AGENT_FAMILIES[family](argument)
    return _check_agent(load_plugin(name, AGENTS, ENTRY_POINT_GROUP, "agent"), name)


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
