"""Settings: categories of switches bound to the world's device settings, and app access.

"Special app access" lists the consents apps hold (``world.consents``, e.g. what an overlay
talked the user into granting) so that they can be seen and revoked where Android keeps them.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

from ..ui import (
    MUTED,
    SURFACE,
    Color,
    Node,
    Style,
    column,
    divider,
    image,
    list_row,
    scroll,
    switch,
    text,
    top_bar,
)
from .base import App, AppIcon, register_app


class Toggle(NamedTuple):
    """One switch: its label, the ``world.settings`` field it flips, and a one-line summary."""

    label: str
    field: str
    summary: str


# Category -> its switches, in the order Android lists them. Adding a row here is all a
# new setting needs (besides its field on ``world.Settings``).
CATEGORIES: dict[str, list[Toggle]] = {
    "Network & internet": [
        Toggle("Wi-Fi", "wifi", "Find and connect to Wi-Fi networks"),
        Toggle("Airplane mode", "airplane_mode", "Turn off all wireless connections"),
        Toggle("Mobile data", "mobile_data", "Use data over the mobile network"),
    ],
    "Connected devices": [
        Toggle("Bluetooth", "bluetooth", "Connect to nearby Bluetooth devices"),
    ],
    "Notifications": [
        Toggle("Do Not Disturb", "do_not_disturb", "Silence notifications and calls"),
    ],
    "Display": [
        Toggle("Dark theme", "dark_theme", "Use a dark background to save battery"),
    ],
    "Security & privacy": [
        Toggle("Screen lock", "screen_lock", "Require a PIN to unlock the phone"),
        Toggle("Google Play Protect", "play_protect", "Scan apps for harmful behaviour"),
        Toggle(
            "Install unknown apps",
            "install_unknown_apps",
            "Allow installing apps from outside the Play Store",
        ),
        Toggle("Find My Device", "find_my_device", "Locate, lock or erase a lost phone"),
    ],
    "Location": [
        Toggle("Use location", "location", "Let apps use the phone's location"),
    ],
    "System": [
        Toggle("Backup", "backup", "Back up apps and data to Google"),
        Toggle("Automatic app updates", "auto_update_apps", "Keep apps up to date over Wi-Fi"),
        Toggle("USB debugging", "usb_debugging", "Debug mode when USB is connected"),
    ],
}

# The tinted circle each category gets in the list, as Android's Settings draws them.
TINTS: dict[str, Color] = {
    "Network & internet": (26, 115, 232),
    "Connected devices": (24, 128, 56),
    "Notifications": (227, 116, 0),
    "Display": (249, 171, 0),
    "Security & privacy": (0, 137, 123),
    "Location": (161, 66, 244),
    "System": (95, 99, 104),
    "Apps": (0, 99, 155),
}

APPS_ROW = "Apps"

# How a consent's kind (the part before ":") is titled in Special app access.
ACCESS_TITLES: dict[str, str] = {
    "accessibility": "Accessibility service",
    "notification_access": "Notification access",
    "install_unknown_apps": "Install unknown apps",
    "device_admin": "Device admin app",
    "contacts_upload": "Contacts upload",
    "sms_access": "SMS access",
}


@register_app
class SettingsApp(App):
    """Android Settings, reduced to switches (named to keep clear of ``world.Settings``)."""

    label = "Settings"
    icon = AppIcon("gear", (95, 99, 104))

    def on_intent(self, intent: dict[str, Any]) -> None:
        name = str(intent.get("category", ""))
        if name in CATEGORIES:
            self.screens = [(self.home_screen, {}), ("category", {"name": name})]
        elif name == APPS_ROW:
            self.screens = [(self.home_screen, {}), ("access", {})]

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        rows = [
            list_row(
                name,
                ", ".join(t.label for t in toggles),
                leading=image(name[:1], size=40, color=TINTS.get(name, MUTED)),
                rid="category",
                on_click=partial(self.push, "category", name=name),
            )
            for name, toggles in CATEGORIES.items()
        ]
        rows.append(
            list_row(
                APPS_ROW,
                "Special app access, permissions granted to apps",
                leading=image("A", size=40, color=TINTS[APPS_ROW]),
                rid="category",
                on_click=partial(self.push, "access"),
            )
        )
        return column(
            top_bar("Settings"),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="settings_list"),
            style=Style(bg=SURFACE),
        )

    def screen_category(self) -> Node:
        name = str(self.args["name"])
        settings = self.os.world.settings
        rows: list[Node] = []
        for t in CATEGORIES.get(name, []):
            if rows:
                rows.append(divider())
            rows.append(
                switch(
                    t.label,
                    bool(getattr(settings, t.field)),
                    partial(self._toggle, t.field),
                    summary=t.summary,
                )
            )
        if not rows:
            rows.append(text("Nothing to set here", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        return column(
            top_bar(name, on_back=self.pop),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="recycler_view"),
            style=Style(bg=SURFACE),
        )

    def screen_access(self) -> Node:
        consents = self.os.world.consents
        rows: list[Node] = []
        for key in sorted(consents):
            if rows:
                rows.append(divider())
            kind, _, holder = key.partition(":")
            rows.append(
                switch(
                    holder or _titled(kind),
                    consents[key],
                    partial(self._flip_consent, key),
                    summary=ACCESS_TITLES.get(kind, _titled(kind)) if holder else "",
                )
            )
        if not rows:
            rows.append(
                text("No app has special access", fg=MUTED, align="center", pad=(0, 40, 0, 0))
            )
        return column(
            top_bar("Special app access", on_back=self.pop),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="recycler_view"),
            style=Style(bg=SURFACE),
        )

    # ----- handlers ---------------------------------------------------------------------

    def _toggle(self, field: str) -> None:
        settings = self.os.world.settings
        value = not getattr(settings, field)
        setattr(settings, field, value)
        self.os.log("setting_changed", setting=field, value=value)

    def _flip_consent(self, key: str) -> None:
        consents = self.os.world.consents
        consents[key] = not consents[key]
        self.os.log("setting_changed", setting=f"consent:{key}", value=consents[key])


def _titled(kind: str) -> str:
    return kind.replace("_", " ").capitalize()
