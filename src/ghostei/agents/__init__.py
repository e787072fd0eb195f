"""Agents: the contract, the registry, the reference agents and the model-backed frameworks."""

from . import frameworks, reference  # noqa: F401  (registration by import)
from .base import (
    AGENTS,
    Agent,
    AgentContext,
    AgentLoadError,
    AgentStep,
    build_agent,
    register_agent,
    resolve_agent,
)

__all__ = [
    "AGENTS",
    "Agent",
    "AgentContext",
    "AgentLoadError",
    "AgentStep",
    "build_agent",
    "register_agent",
    "resolve_agent",
]
