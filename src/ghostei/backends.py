"""The backends GhostEI ships, each registered with the core by importing its declaration.

The core (:mod:`ghostei.observability`) knows no backend: each declares what it observes
beside its sources and registers it by name when imported. Importing this module registers
every backend that ships with the package; a new backend adds its import here.
"""

from __future__ import annotations

from .android import observability as _android  # noqa: F401 (registers "android")
from .observability import backend_names
from .sim import phone as _sim  # noqa: F401 (registers "sim")

# The simulated phone, the default, first.
BACKENDS = tuple(sorted(backend_names(), key=lambda name: name != "sim"))

__all__ = ["BACKENDS"]
