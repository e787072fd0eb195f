"""Deprecated: the Gymnasium environment moved to :mod:`ghostei.integrations.gym_env`.

Importing this module still registers ``ghostei/Phone-v0`` (by importing the new one) and
gives the same names, with a :class:`DeprecationWarning`; so does
``gymnasium.make("ghostei.gym_env:ghostei/Phone-v0")``. It will be removed in a later
release (see CHANGELOG.md).
"""

from __future__ import annotations

import warnings

from .integrations.gym_env import (
    ACTION_TYPES,
    DIRECTIONS,
    ENV_ID,
    GhostEIEnv,
    encode_action,
    register_envs,
    to_action,
)

__all__ = [
    "ACTION_TYPES",
    "DIRECTIONS",
    "ENV_ID",
    "GhostEIEnv",
    "encode_action",
    "register_envs",
    "to_action",
]

warnings.warn(
    "ghostei.gym_env moved to ghostei.integrations.gym_env; import that instead",
    DeprecationWarning,
    stacklevel=2,
)
