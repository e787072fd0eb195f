"""Parsers from each agent family's raw output into the canonical action.

``parse_action(fmt, text, screen)`` never raises: output that cannot be understood becomes an
``invalid`` action carrying the raw text, which the runner records as a step.
"""

from __future__ import annotations

from . import androidworld, appagent, mobile_agent, uitars  # noqa: F401  (registration)
from .base import PARSERS, ParseError, Screen, parse_action, register_parser

__all__ = ["PARSERS", "ParseError", "Screen", "parse_action", "register_parser"]
