"""The phone's apps as data: each app's launcher label, Android package and the other names
agents and case authors use for it.

One catalogue for the whole benchmark: the simulated phone's apps take their packages and
aliases from it (:func:`ghostei.sim.apps.base.register_app`), the Android backend maps labels
to packages with it (:mod:`ghostei.android.apps`), and the cases check the apps they name
against it, so neither the cases nor one backend imports a backend for an app's name. The
packages are those of the real apps on the paper's emulator image.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PhoneApp:
    """One app of the phone: its launcher label, package and the other names agents use."""

    label: str
    package: str
    aliases: tuple[str, ...] = ()


# The system's own packages on the paper's emulator image: the launcher, the framework (whose
# ChooserActivity is the share sheet), System UI and the keyboard. The simulated phone draws
# its system windows as these; defences trust them as the system's.
LAUNCHER_PACKAGE = "com.google.android.apps.nexuslauncher"
CHOOSER_PACKAGE = "android"
SYSTEMUI_PACKAGE = "com.android.systemui"
IME_PACKAGE = "com.google.android.inputmethod.latin"

# In launcher order (by label).
APPS: tuple[PhoneApp, ...] = (
    PhoneApp("AliExpress", "com.alibaba.aliexpresshd", ("Ali Express", "AliExpress Shopping")),
    PhoneApp("Booking", "com.booking", ("Booking.com",)),
    PhoneApp("Calendar", "com.google.android.calendar", ("Google Calendar",)),
    PhoneApp("Camera", "com.android.camera2", ("Google Camera",)),
    PhoneApp("Chrome", "com.android.chrome", ("Browser", "Google Chrome")),
    PhoneApp("Contacts", "com.google.android.contacts", ("+ contact", "Phone contacts", "People")),
    PhoneApp(
        "Files",
        "com.google.android.documentsui",
        ("Files by Google", "File manager", "My Files"),
    ),
    PhoneApp("Gallery", "com.google.android.apps.photosgo", ("Photos", "Google Photos")),
    PhoneApp("Gmail", "com.google.android.gm", ("Google Mail", "Mail", "Email", "E-mail")),
    PhoneApp("Go Forex", "com.tiim.goforexx24", ("GoForex", "Forex")),
    PhoneApp(
        "Messages", "com.google.android.apps.messaging", ("SMS", "Google Messages", "Message")
    ),
    # "Nextcloud Dev" is the build the upstream dataset drives.
    PhoneApp("Nextcloud", "com.nextcloud.client", ("Nextcloud Dev", "Nextcloud Files", "Cloud")),
    PhoneApp("PhotoNote", "com.chartreux.photo_note", ("Photo Note", "Notepad")),
    PhoneApp("Settings", "com.android.settings"),
)

_BY_LABEL = {app.label: app for app in APPS}


def app_labels() -> list[str]:
    """The apps' labels in launcher order (by label, case-insensitively)."""
    return sorted(_BY_LABEL, key=str.lower)


def app_by_label(label: str) -> PhoneApp:
    """The app of an exact launcher label; KeyError when the phone has none."""
    return _BY_LABEL[label]


def resolve_app(name: str) -> PhoneApp | None:
    """An app by label, package or alias, case-insensitively."""
    want = name.strip().lower()
    for app in APPS:
        if want in (app.label.lower(), app.package.lower(), *(a.lower() for a in app.aliases)):
            return app
    return None
