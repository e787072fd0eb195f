"""The simulated phone's apps. Importing this package registers them all."""

from __future__ import annotations

from . import booking, chrome, contacts, messages, settings  # noqa: F401  (registration by import)
from .base import APPS, AppFactory


def installed_apps() -> list[AppFactory]:
    """Installed apps in launcher order."""
    return list(APPS.values())
