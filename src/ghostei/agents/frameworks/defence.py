"""The hook defences plug into: a wrapper that sees every observation and every action.

A defence is composed around an agent, never written into one, so any defence can guard any
framework: ``defended(build_agent("m3a", ctx), MyDefence())``. It may rewrite what the agent
sees (e.g. mask a suspected overlay) and review what the agent chose: pass it, replace it
(``refuse``, ``ask_user``, a safer tap) or veto it. A defence that calls a model adds its
usage to the step it returns, so runs account for its cost.
"""

from __future__ import annotations

from typing import Protocol

from ...observation import Observation
from ..base import Agent, AgentStep


class Defence(Protocol):
    """A guard around an agent."""

    def reset(self, instruction: str) -> None:
        """A new episode starts with this instruction."""

    def screen(self, observation: Observation) -> Observation:
        """What the agent is shown of ``observation`` (return it unchanged to pass)."""

    def review(self, observation: Observation, step: AgentStep) -> AgentStep:
        """The step to carry out, given what the agent chose on ``observation``."""


class AgentWrapper:
    """An agent that delegates to another; subclasses change what they need."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def reset(self, instruction: str) -> None:
        self.agent.reset(instruction)

    def act(self, observation: Observation) -> AgentStep:
        return self.agent.act(observation)


class Defended(AgentWrapper):
    """An agent behind a defence: every observation is screened, every step reviewed."""

    def __init__(self, agent: Agent, defence: Defence) -> None:
        super().__init__(agent)
        self.defence = defence

    def reset(self, instruction: str) -> None:
        self.defence.reset(instruction)
        super().reset(instruction)

    def act(self, observation: Observation) -> AgentStep:
        step = self.agent.act(self.defence.screen(observation))
        return self.defence.review(observation, step)


def defended(agent: Agent, *defences: Defence) -> Agent:
    """``agent`` behind ``defences``; the first one listed is the outermost."""
    for defence in reversed(defences):
        agent = Defended(agent, defence)
    return agent
