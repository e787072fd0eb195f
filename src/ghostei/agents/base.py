"""The agent contract and the registry agents are plugged into."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

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


def build_agent(name: str, ctx: AgentContext) -> Agent:
    """An agent by registry name."""
    if name not in AGENTS:
        raise KeyError(f"unknown agent {name!r}; known: {', '.join(sorted(AGENTS))}")
    return AGENTS[name](ctx)
