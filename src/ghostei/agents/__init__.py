"""Agents: the contract, the registry, and the reference agents that need no model."""

from . import reference  # noqa: F401  (registration by import)
from .base import AGENTS, Agent, AgentContext, AgentStep, build_agent, register_agent

__all__ = ["AGENTS", "Agent", "AgentContext", "AgentStep", "build_agent", "register_agent"]
