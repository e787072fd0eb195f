"""Which Android package each benchmark app is, and the key codes the backend sends.

The apps are the phone's catalogue (:mod:`ghostei.apps`), which the simulated phone's apps
also read, so both backends name the same packages. ``open_app`` resolves a label, package
or alias here, case-insensitively.
"""

from __future__ import annotations

from ..apps import APPS as APPS
from ..apps import PhoneApp

# One launchable app: its launcher label, package and the other names agents use.
AndroidApp = PhoneApp

LAUNCHER_PACKAGE = "com.google.android.apps.nexuslauncher"
SYSTEMUI_PACKAGE = "com.android.systemui"
MESSAGES_PACKAGE = "com.google.android.apps.messaging"

# android.view.KeyEvent codes the backend sends with ``input keyevent``.
KEYCODE_HOME = 3
KEYCODE_BACK = 4
KEYCODE_ENTER = 66
KEYCODE_APP_SWITCH = 187


class PackageMap:
    """Label/alias/package lookups over a list of apps (the defaults, or a user's own)."""

    def __init__(self, apps: tuple[AndroidApp, ...] = APPS) -> None:
        self.apps = apps
        self._by_name: dict[str, AndroidApp] = {}
        for app in apps:
            for name in (app.label, app.package, *app.aliases):
                self._by_name.setdefault(name.strip().casefold(), app)
        self._by_package = {app.package: app for app in apps}

    def resolve(self, name: str) -> AndroidApp | None:
        """The app a label, alias or package names, or None."""
        return self._by_name.get(name.strip().casefold())

    def by_package(self, package: str) -> AndroidApp | None:
        """The app of a package, or None (system packages, the launcher, unknown apps)."""
        return self._by_package.get(package)

    @classmethod
    def from_mapping(cls, mapping: dict[str, str]) -> PackageMap:
        """A map from ``{label: package}`` pairs added to (and overriding) the defaults."""
        extra = {label.casefold() for label in mapping}
        kept = tuple(a for a in APPS if a.label.casefold() not in extra)
        return cls(kept + tuple(AndroidApp(label, pkg) for label, pkg in mapping.items()))
