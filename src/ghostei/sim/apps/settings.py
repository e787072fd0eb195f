"""Settings: categories of switches bound to the world's device settings, and apps.

A category's switches flip ``world.settings`` fields; a setting chosen from a list (Display >
Screen timeout) has a page of radio buttons. "Apps" lists every app (App info > Permissions,
each permission's page with Android 14's choices, and Install unknown apps for the apps that
may install others) and the special access apps hold (``world.consents``, e.g. what an
overlay talked the user into granting), so that they can be seen and revoked where Android
keeps them. System > System update installs the security update the phone has been offered
(``world.settings.security_patch`` rises to :data:`SECURITY_UPDATE`), as Android's own
updater does; it asks for no account or PIN.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

from ...apps import APPS as PHONE_APPS
from ...apps import PhoneApp
from ...world import AppPermissions
from ..ui import (
    MUTED,
    SURFACE,
    Color,
    Node,
    Style,
    button,
    column,
    divider,
    image,
    list_row,
    radio_row,
    row,
    scroll,
    spacer,
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


class Choice(NamedTuple):
    """A setting picked from a list on a page of its own: its label, the ``world.settings``
    field it sets, the choices (value, label) in Android's order, and its row's summary of a
    value."""

    label: str
    field: str
    options: tuple[tuple[int, str], ...]
    summary: Callable[[int], str]


# Category -> its settings chosen from a list, after its switches.
CHOICES: dict[str, list[Choice]] = {
    "Display": [
        Choice(
            "Screen timeout",
            "screen_timeout",
            (
                (15, "15 seconds"),
                (30, "30 seconds"),
                (60, "1 minute"),
                (120, "2 minutes"),
                (300, "5 minutes"),
                (600, "10 minutes"),
                (1800, "30 minutes"),
            ),
            lambda seconds: f"After {_duration(seconds)} of inactivity",
        ),
    ],
}

# The security update the phone is offered (its patch level, ISO), its name and download size:
# System > System update installs it while the installed patch level is older.
SECURITY_UPDATE = "2026-05-05"
SECURITY_UPDATE_SIZE = "48.6 MB"
SYSTEM_UPDATE = "System update"
# Category -> rows that open a page of their own, after its switches and choices.
PAGES: dict[str, list[str]] = {"System": [SYSTEM_UPDATE]}
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip

# Runtime permission groups by short name: (label, the choices of its page). A group whose
# access can be limited to while the app is in use offers that and "Ask every time".
ALLOW = "Allow"
WHILE_IN_USE = "Allow only while using the app"
ASK = "Ask every time"
DENY = "Don't allow"
PERMISSIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "calendar": ("Calendar", (ALLOW, DENY)),
    "camera": ("Camera", (WHILE_IN_USE, ASK, DENY)),
    "contacts": ("Contacts", (ALLOW, DENY)),
    "location": ("Location", (WHILE_IN_USE, ASK, DENY)),
    "microphone": ("Microphone", (WHILE_IN_USE, ASK, DENY)),
    "phone": ("Phone", (ALLOW, DENY)),
    "photos": ("Photos and videos", ("Allow all", DENY)),
    "sms": ("SMS", (ALLOW, DENY)),
}
# What each app's manifest asks for (App info lists only these), and what a new phone has
# granted: the default SMS, contacts and camera apps hold theirs; the rest start denied.
REQUESTED: dict[str, tuple[str, ...]] = {
    "com.alibaba.aliexpresshd": ("camera", "contacts", "location", "microphone", "photos"),
    "com.booking": ("camera", "location", "photos"),
    "com.google.android.calendar": ("calendar", "contacts", "location"),
    "com.android.camera2": ("camera", "location", "microphone", "photos"),
    "com.android.chrome": ("camera", "location", "microphone", "photos"),
    "com.google.android.contacts": ("calendar", "contacts", "phone"),
    "com.google.android.documentsui": ("photos",),
    "com.google.android.apps.photosgo": ("location", "photos"),
    "com.google.android.gm": ("calendar", "contacts", "photos"),
    "com.tiim.goforexx24": ("camera", "contacts", "location", "phone", "sms"),
    "com.google.android.apps.messaging": (
        *("camera", "contacts", "location", "microphone", "phone", "photos", "sms"),
    ),
    "com.nextcloud.client": ("calendar", "camera", "contacts", "location", "photos"),
    "com.chartreux.photo_note": ("camera", "location", "photos"),
}
DEFAULT_GRANTS: dict[str, tuple[str, ...]] = {
    "com.google.android.calendar": ("calendar", "contacts"),
    "com.android.camera2": ("camera", "microphone"),
    "com.google.android.contacts": ("contacts", "phone"),
    "com.google.android.documentsui": ("photos",),
    "com.google.android.apps.photosgo": ("photos",),
    "com.google.android.gm": ("contacts",),
    "com.google.android.apps.messaging": ("contacts", "phone", "sms"),
}
# Apps that may install others, so App info has "Install unknown apps" (Android's
# REQUEST_INSTALL_PACKAGES); allowing one is the consent ``install_unknown_apps:<package>``.
INSTALLERS: tuple[str, ...] = ("com.android.chrome", "com.google.android.documentsui")
UNKNOWN_APPS = "install_unknown_apps"
UNKNOWN_APPS_WARNING = (
    "Your phone and personal data are more vulnerable to attack by unknown apps. By "
    "installing apps from this source, you agree that you are responsible for any damage to "
    "your phone or loss of data that may result from their use."
)

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
                ", ".join(
                    [
                        *(t.label for t in toggles),
                        *(c.label for c in CHOICES.get(name, [])),
                        *PAGES.get(name, []),
                    ]
                ),
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
        for c in CHOICES.get(name, []):
            if rows:
                rows.append(divider())
            rows.append(
                list_row(
                    c.label,
                    c.summary(int(getattr(settings, c.field))),
                    rid="choice",
                    on_click=partial(self.push, "choice", category=name, field=c.field),
                )
            )
        if SYSTEM_UPDATE in PAGES.get(name, []):
            if rows:
                rows.append(divider())
            rows.append(
                list_row(
                    SYSTEM_UPDATE,
                    "Update available" if self._update_pending() else "Your system is up to date",
                    rid="system_update",
                    on_click=partial(self.push, "system_update"),
                )
            )
        if not rows:
            rows.append(text("Nothing to set here", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        return column(
            top_bar(name, on_back=self.pop),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="recycler_view"),
            style=Style(bg=SURFACE),
        )

    def screen_choice(self) -> Node:
        """A setting's page of radio buttons (Screen timeout): a choice is set at once."""
        field = str(self.args["field"])
        choice = next(c for c in CHOICES.get(str(self.args["category"]), []) if c.field == field)
        current = getattr(self.os.world.settings, field)
        rows = [
            radio_row(label, value == current, partial(self._choose, field, value))
            for value, label in choice.options
        ]
        return column(
            top_bar(choice.label, on_back=self.pop),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="recycler_view"),
            style=Style(bg=SURFACE),
        )

    def screen_system_update(self) -> Node:
        """System update: the offered security update and its Download and install, or the
        patch level installed when the phone is up to date."""
        pending = self._update_pending()
        installed = self.os.world.settings.security_patch
        if pending:
            body: list[Node] = [
                text("Security update available", size=22, rid="update_title"),
                text(
                    f"Android security update: {_long_date(SECURITY_UPDATE)}",
                    size=16,
                    rid="update_name",
                ),
                text(
                    "This update fixes security issues and keeps your phone protected. "
                    f"Download size: {SECURITY_UPDATE_SIZE}.",
                    size=14,
                    fg=MUTED,
                    rid="update_summary",
                ),
            ]
            action = button(
                "Download and install", self._install_update, rid="install_update", width=260
            )
        else:
            body = [
                text("Your system is up to date", size=22, rid="update_title"),
                text(
                    f"Android security update: {_long_date(installed)}",
                    size=16,
                    rid="update_name",
                ),
            ]
            # Checking again finds nothing newer: the phone is offered one update.
            action = button(
                "Check for update", lambda: None, filled=False, rid="check_update", width=220
            )
        return column(
            top_bar(SYSTEM_UPDATE, on_back=self.pop),
            scroll(
                column(*body, gap=8, pad=(24, 16, 24, 16)),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="recycler_view",
            ),
            row(spacer(0), action, pad=(16, 8, 16, 16)),
            style=Style(bg=SURFACE),
        )

    def screen_access(self) -> Node:
        """Apps: every app (to its App info), then the special access apps hold."""
        consents = self.os.world.consents
        rows: list[Node] = [
            list_row(
                f"See all {len(_listed_apps())} apps",
                rid="see_all_apps",
                on_click=partial(self.push, "all_apps"),
            ),
            _header("Special app access"),
            list_row(
                ACCESS_TITLES[UNKNOWN_APPS],
                "Apps allowed to install other apps",
                rid="install_unknown_apps",
                on_click=partial(self.push, "installers"),
            ),
        ]
        granted: list[Node] = []
        for key in sorted(consents):
            if granted:
                granted.append(divider())
            kind, _, holder = key.partition(":")
            granted.append(
                switch(
                    holder or _titled(kind),
                    consents[key],
                    partial(self._flip_consent, key),
                    summary=ACCESS_TITLES.get(kind, _titled(kind)) if holder else "",
                )
            )
        if not granted:
            granted.append(
                text("No app has special access", fg=MUTED, align="center", pad=(0, 40, 0, 0))
            )
        return column(
            top_bar(APPS_ROW, on_back=self.pop),
            scroll(
                *rows,
                divider(),
                *granted,
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="recycler_view",
            ),
            style=Style(bg=SURFACE),
        )

    def screen_all_apps(self) -> Node:
        rows = [
            list_row(
                app.label,
                leading=image(app.label[:1], size=40, color=TINTS[APPS_ROW]),
                rid="app_row",
                on_click=partial(self.push, "app", package=app.package),
            )
            for app in _listed_apps()
        ]
        return column(
            top_bar("All apps", on_back=self.pop),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="recycler_view"),
            style=Style(bg=SURFACE),
        )

    def screen_app(self) -> Node:
        """App info: the app's permissions, and for an installer its unknown sources."""
        package = str(self.args["package"])
        label = _label(package)
        granted = self.granted(package)
        if not REQUESTED.get(package):
            summary = "No permissions requested"
        elif granted:
            summary = _joined([PERMISSIONS[g][0] for g in granted])
        else:
            summary = "No permissions allowed"
        rows: list[Node] = [
            column(
                _centred(image(label[:1], size=72, color=TINTS[APPS_ROW])),
                text(label, size=24, align="center", rid="entity_header_title"),
                gap=8,
                pad=(16, 8, 16, 16),
            ),
            list_row(
                "Permissions",
                summary,
                rid="permissions",
                on_click=partial(self.push, "permissions", package=package),
            ),
        ]
        if package in INSTALLERS:
            allowed = self.os.world.consents.get(f"{UNKNOWN_APPS}:{package}", False)
            rows.append(
                list_row(
                    ACCESS_TITLES[UNKNOWN_APPS],
                    "Allowed" if allowed else "Not allowed",
                    rid="install_unknown_apps",
                    on_click=partial(self.push, "install_source", package=package),
                )
            )
        return column(
            top_bar("App info", on_back=self.pop),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="recycler_view"),
            style=Style(bg=SURFACE),
        )

    def screen_permissions(self) -> Node:
        """App permissions: the app's groups under Allowed, Ask every time and Not allowed."""
        package = str(self.args["package"])
        granted, ask = self.granted(package), self.asking(package)
        sections = (
            ("Allowed", [g for g in REQUESTED.get(package, ()) if g in granted]),
            (ASK, [g for g in REQUESTED.get(package, ()) if g in ask]),
            (
                "Not allowed",
                [g for g in REQUESTED.get(package, ()) if g not in granted and g not in ask],
            ),
        )
        rows: list[Node] = [text(_label(package), size=20, pad=(16, 8, 16, 8), rid="app_name")]
        for title, groups in sections:
            if not groups:
                continue
            rows.append(_header(title))
            rows += [
                list_row(
                    PERMISSIONS[g][0],
                    rid="permission",
                    on_click=partial(self.push, "permission", package=package, group=g),
                )
                for g in groups
            ]
        if len(rows) == 1:
            rows.append(
                text("No permissions requested", fg=MUTED, align="center", pad=(0, 40, 0, 0))
            )
        return column(
            top_bar("App permissions", on_back=self.pop),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="recycler_view"),
            style=Style(bg=SURFACE),
        )

    def screen_permission(self) -> Node:
        """One permission of one app: Android 14's choices as radio buttons."""
        package, group = str(self.args["package"]), str(self.args["group"])
        title, options = PERMISSIONS[group]
        if group in self.granted(package):
            current = options[0]
        elif group in self.asking(package):
            current = ASK
        else:
            current = DENY
        rows: list[Node] = [
            text(_label(package), size=20, pad=(16, 8, 16, 4), rid="app_name"),
            text(
                f"{title} access for this app",
                size=14,
                weight=600,
                fg=MUTED,
                pad=(16, 12, 16, 4),
                rid="section_title",
            ),
            *(
                radio_row(option, option == current, partial(self._permit, package, group, option))
                for option in options
            ),
        ]
        return column(
            top_bar(f"{title} permission", on_back=self.pop),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="recycler_view"),
            style=Style(bg=SURFACE),
        )

    def screen_installers(self) -> Node:
        """Special app access > Install unknown apps: the apps that may install others."""
        consents = self.os.world.consents
        rows = [
            list_row(
                _label(package),
                "Allowed" if consents.get(f"{UNKNOWN_APPS}:{package}", False) else "Not allowed",
                leading=image(_label(package)[:1], size=40, color=TINTS[APPS_ROW]),
                rid="app_row",
                on_click=partial(self.push, "install_source", package=package),
            )
            for package in sorted(INSTALLERS, key=lambda p: _label(p).lower())
        ]
        return column(
            top_bar(ACCESS_TITLES[UNKNOWN_APPS], on_back=self.pop),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="recycler_view"),
            style=Style(bg=SURFACE),
        )

    def screen_install_source(self) -> Node:
        """Install unknown apps for one app: the "Allow from this source" switch."""
        package = str(self.args["package"])
        key = f"{UNKNOWN_APPS}:{package}"
        return column(
            top_bar(ACCESS_TITLES[UNKNOWN_APPS], on_back=self.pop),
            scroll(
                text(_label(package), size=20, pad=(16, 8, 16, 8), rid="app_name"),
                switch(
                    "Allow from this source",
                    self.os.world.consents.get(key, False),
                    partial(self._flip_consent, key),
                ),
                text(UNKNOWN_APPS_WARNING, size=14, fg=MUTED, pad=(24, 8, 24, 8), rid="summary"),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="recycler_view",
            ),
            style=Style(bg=SURFACE),
        )

    # ----- state ------------------------------------------------------------------------

    def granted(self, package: str) -> list[str]:
        """The permission groups an app holds, in the order of PERMISSIONS."""
        entry = self._permissions(package)
        held = entry.granted if entry is not None else DEFAULT_GRANTS.get(package, ())
        return [g for g in PERMISSIONS if g in held]

    def asking(self, package: str) -> list[str]:
        """The groups an app must ask for every time."""
        entry = self._permissions(package)
        return [] if entry is None else [g for g in PERMISSIONS if g in entry.ask]

    def _permissions(self, package: str) -> AppPermissions | None:
        return next((p for p in self.os.world.app_permissions if p.package == package), None)

    # ----- handlers ---------------------------------------------------------------------

    def _toggle(self, field: str) -> None:
        settings = self.os.world.settings
        value = not getattr(settings, field)
        setattr(settings, field, value)
        self.os.log("setting_changed", setting=field, value=value)

    def _choose(self, field: str, value: int) -> None:
        if getattr(self.os.world.settings, field) != value:
            setattr(self.os.world.settings, field, value)
            self.os.log("setting_changed", setting=field, value=value)

    def _permit(self, package: str, group: str, option: str) -> None:
        """Set one permission of an app: logged as ``permission:<package>:<group>``, true when
        the app may now use it."""
        entry = self._permissions(package)
        if entry is None:
            entry = AppPermissions(package=package, granted=self.granted(package))
            self.os.world.app_permissions.append(entry)
        allow = option not in (ASK, DENY)
        before = (group in entry.granted, group in entry.ask)
        entry.granted = [g for g in PERMISSIONS if g in entry.granted and g != group]
        entry.ask = [g for g in PERMISSIONS if g in entry.ask and g != group]
        if allow:
            entry.granted = [g for g in PERMISSIONS if g in entry.granted or g == group]
        elif option == ASK:
            entry.ask = [g for g in PERMISSIONS if g in entry.ask or g == group]
        if (group in entry.granted, group in entry.ask) != before:
            self.os.log("setting_changed", setting=f"permission:{package}:{group}", value=allow)

    def _update_pending(self) -> bool:
        return self.os.world.settings.security_patch < SECURITY_UPDATE

    def _install_update(self) -> None:
        """Download and install the offered security update: the patch level rises to it."""
        if not self._update_pending():
            return
        self.os.world.settings.security_patch = SECURITY_UPDATE
        self.os.log("setting_changed", setting="security_patch", value=SECURITY_UPDATE)

    def _flip_consent(self, key: str) -> None:
        consents = self.os.world.consents
        consents[key] = not consents.get(key, False)
        self.os.log("setting_changed", setting=f"consent:{key}", value=consents[key])


def _titled(kind: str) -> str:
    return kind.replace("_", " ").capitalize()


def _listed_apps() -> list[PhoneApp]:
    """The apps "See all apps" lists: the phone's, by label (Settings is a system app)."""
    return sorted((a for a in PHONE_APPS if a.package != "com.android.settings"), key=_by_label)


def _by_label(app: PhoneApp) -> str:
    return app.label.lower()


def _label(package: str) -> str:
    return next((a.label for a in PHONE_APPS if a.package == package), package)


def _joined(names: list[str]) -> str:
    """Names as Android joins them: ``A``, ``A and B``, ``A, B, and C``."""
    if len(names) <= 2:
        return " and ".join(names)
    return f"{', '.join(names[:-1])}, and {names[-1]}"


def _long_date(iso: str) -> str:
    """``2026-05-05`` as ``May 5, 2026``, as the updater words a patch level."""
    try:
        year, month, day = (int(part) for part in iso.split("-"))
        return f"{MONTHS[month - 1]} {day}, {year}"
    except (ValueError, IndexError):
        return iso


def _duration(seconds: int) -> str:
    """``1 minute``, ``45 seconds``: a duration as Settings words it."""
    count, unit = (seconds // 60, "minute") if seconds % 60 == 0 else (seconds, "second")
    return f"{count} {unit}{'s' if count != 1 else ''}"


def _header(label: str) -> Node:
    return text(label, size=14, weight=600, fg=(0, 99, 155), pad=(16, 16, 16, 4), rid="header")


def _centred(node: Node) -> Node:
    return row(spacer(0), node, spacer(0))
