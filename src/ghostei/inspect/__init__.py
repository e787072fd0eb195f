"""Deprecated: the inspect_ai task moved to :mod:`ghostei.integrations.inspect`.

Importing this package still gives the same names, with a :class:`DeprecationWarning`. The
``inspect eval ghostei/ghostei`` entry point already points at the new place. It will be
removed in a later release (see CHANGELOG.md).
"""

from __future__ import annotations

import warnings

from ..integrations.inspect import (
    PHONE_TOOLS,
    action_to_tool_call,
    ghostei_task,
    judge_episode,
    phone_agent,
    tool_call_to_action,
)

__all__ = [
    "PHONE_TOOLS",
    "action_to_tool_call",
    "ghostei_task",
    "judge_episode",
    "phone_agent",
    "tool_call_to_action",
]

warnings.warn(
    "ghostei.inspect moved to ghostei.integrations.inspect; import that instead",
    DeprecationWarning,
    stacklevel=2,
)
