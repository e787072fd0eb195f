"""The simulated phone's apps. Importing this package registers every module in it."""

from __future__ import annotations

import importlib
import pkgutil

from .base import APPS, AppFactory

# Registration by import: an app is a module in this package with a @register_app class.
# Sorted, so the launcher's order does not depend on the file system.
for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module != "base":
        importlib.import_module(f"{__name__}.{_module}")


def installed_apps() -> list[AppFactory]:
    """Installed apps in launcher order (by label)."""
    return sorted(APPS.values(), key=lambda cls: cls.label.lower())
