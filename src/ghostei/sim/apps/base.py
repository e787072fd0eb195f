"""What an app is, what the OS offers it, and the registry apps are plugged into.

An app's package and other names are the phone's catalogue's (:mod:`ghostei.apps`): a
simulated app names its label, and :func:`register_app` gives it the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from ...apps import app_by_label
from ...events import EventLog
from ...world import FileEntry, WebPage, World
from ..ui import Color, Node


@dataclass(frozen=True)
class SharePayload:
    """What an app hands the share sheet: text (or a link), files on the phone, or both."""

    text: str = ""
    files: tuple[str, ...] = ()  # absolute paths of files in shared storage
    subject: str = ""
    source: str = ""  # the sharing app's label, filled in by the OS


class System(Protocol):
    """The OS services an app may use."""

    events: EventLog

    @property
    def world(self) -> World:
        """The episode's world data."""

    def log(self, kind: str, **data: Any) -> None:
        """Record an event in the name of the calling app's package."""

    def open_app(self, label: str, intent: dict[str, Any] | None = None) -> None:
        """Bring an app to the front, optionally handing it an intent."""

    def open_url(self, url: str) -> None:
        """Open a link in Chrome."""

    def load_page(self, url: str) -> WebPage | None:
        """The page at ``url`` (the world's, or one fetched from outside it), or None."""

    def now(self) -> str:
        """The device clock as ISO time."""

    def focus(self, field: str) -> None:
        """Give input focus to a field of the foreground app (the keyboard comes up)."""

    def clear_focus(self) -> None:
        """Drop input focus (the keyboard goes down)."""

    def share(self, payload: SharePayload) -> None:
        """Open the system share sheet; the app the user picks receives ``payload``."""

    def set_clipboard(self, value: str) -> None:
        """Copy text to the clipboard."""

    def screenshot(self) -> str:
        """Capture the screen as it is into Pictures/Screenshots; returns the file's path."""

    def download(self, url: str, name: str, content: str = "") -> str:
        """Save a download into Download/ and notify; returns the file's path."""


@dataclass(frozen=True)
class AppIcon:
    """How the launcher draws an app."""

    glyph: str
    color: Color
    fg: Color = (255, 255, 255)


class App:
    """An app: screens are functions of its state; handlers change state and log events."""

    label: ClassVar[str]
    icon: ClassVar[AppIcon]
    # Filled in by register_app from the phone's catalogue (ghostei.apps), by label.
    package: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()

    def __init__(self, os: System) -> None:
        self.os = os
        self.screens: list[tuple[str, dict[str, Any]]] = [(self.home_screen, {})]
        self.scroll: dict[str, float] = {}
        self.issued: set[str] = set()  # ids this app created or deleted (see fresh_id)

    home_screen: ClassVar[str] = "main"

    # --- navigation between the app's own screens ---------------------------------------

    @property
    def screen(self) -> str:
        return self.screens[-1][0]

    @property
    def args(self) -> dict[str, Any]:
        return self.screens[-1][1]

    def push(self, screen: str, **args: Any) -> None:
        """Open a screen on top of the current one."""
        self.os.clear_focus()
        self.screens.append((screen, args))

    def pop(self) -> None:
        """Go back one screen (the OS closes the app when this is the first)."""
        self.os.clear_focus()
        if len(self.screens) > 1:
            self.screens.pop()

    def switch_to(self, screen: str) -> None:
        """Make ``screen`` the only one on the stack (a bottom-navigation tab)."""
        self.os.clear_focus()
        self.screens = [(screen, {})]

    def fresh_id(self, prefix: str, existing: Collection[str]) -> str:
        """A new id ``prefix<n>`` for an item of a world list whose ids are ``existing``.

        Ids of deleted items are never handed out again, so each id in the event log names
        one item. Record a deletion with ``self.issued.add(item_id)``.
        """
        taken = set(existing) | self.issued
        n = len(existing) + 1
        while f"{prefix}{n}" in taken:
            n += 1
        self.issued.add(f"{prefix}{n}")
        return f"{prefix}{n}"

    def back(self) -> bool:
        """Handle Back; False means the app is at its first screen and should close."""
        if len(self.screens) > 1:
            self.pop()
            return True
        return False

    def on_intent(self, intent: dict[str, Any]) -> None:
        """Handle a deep link (a thread, a URL, a contact)."""

    def file_of_intent(self, intent: dict[str, Any]) -> FileEntry | None:
        """The file a ``{"file": path}`` intent names (a download notification, another app's
        link), with the back stack reset to the first screen so the caller opens it there."""
        path = str(intent.get("file", ""))
        entry = self.os.world.file(path) if path else None
        if entry is not None:
            self.os.clear_focus()
            self.screens = [(self.home_screen, {})]
        return entry

    # What the share sheet may hand this app: "text" and/or "files". Empty: not a target.
    accepts_share: ClassVar[tuple[str, ...]] = ()

    def receive_share(self, payload: SharePayload) -> None:
        """Take what another app shared (the OS has brought this app to the front)."""

    # --- scrolling: each screen keeps its own offset ------------------------------------

    def offset(self) -> float:
        return self.scroll.get(self._scroll_key(), 0.0)

    def set_offset(self, value: float) -> None:
        self.scroll[self._scroll_key()] = max(0.0, value)

    def _scroll_key(self) -> str:
        return f"{len(self.screens)}:{self.screen}:{sorted(self.args.items())}"

    def view(self) -> Node:
        """The current screen as a view tree."""
        render: Callable[[], Node] = getattr(self, f"screen_{self.screen}")
        return render()


AppFactory = type[App]
APPS: dict[str, AppFactory] = {}


def register_app(cls: AppFactory) -> AppFactory:
    """Class decorator: make an app installable on the simulated phone, with the package and
    aliases the phone's catalogue gives its label."""
    info = app_by_label(cls.label)
    cls.package = info.package
    cls.aliases = info.aliases
    APPS[cls.label] = cls
    return cls


def resolve_app(name: str) -> AppFactory | None:
    """An installed app by label, package or alias, case-insensitively."""
    want = name.strip().lower()
    for cls in APPS.values():
        if want in (cls.label.lower(), cls.package.lower(), *(a.lower() for a in cls.aliases)):
            return cls
    return None
