"""The simulated phone: OS state, window composition, input dispatch and the event log."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from ..actions import Action
from ..device import OverlaySpec, log_host_action
from ..events import EventLog
from ..observability import SIM, register_backend
from ..observation import Observation, UIElement, touch_point
from ..world import FileEntry, Sms, WebPage, World, build_world
from . import navigation as nav
from . import system_ui as sysui
from .apps import installed_apps
from .apps.base import App, SharePayload, resolve_app
from .compositor import compositor_for
from .hierarchy import dump, resource_id
from .render import make_layout
from .ui import Node, Rect, hit, is_empty
from .windows import Window, active_window, target_at, topmost_at

REFERENCE_WIDTH_DP = 411.43  # a 1080-px-wide phone at 420 dpi
SECONDS_PER_ACTION = 3
SECONDS_PER_WAIT = 10
# A swipe up from the gesture bar that ends below this fraction of the screen's height opens
# the overview of recent apps (the recents key sends one ending at 0.6); above it, Home.
RECENTS_SWIPE_END = 0.4


class _Overlay:
    def __init__(self, spec: OverlaySpec, seq: int) -> None:
        self.spec = spec
        self.seq = seq


class SimPhone:
    """A deterministic Android-like phone implementing the device contract."""

    observability = SIM  # it writes every event of its world and holds the whole state

    def __init__(
        self, width: int = 1080, height: int = 2400, navigation: str = nav.DEFAULT_NAVIGATION
    ) -> None:
        if width < 320 or height < 480:
            raise ValueError(f"screen {width}x{height} is too small (at least 320x480)")
        self.width = width
        self.height = height
        # The navigation each reset starts with; the phone's mode now is ``navigation``.
        self.default_navigation = nav.check(navigation)
        self.density = width / REFERENCE_WIDTH_DP
        self.layout = make_layout(self.density)
        self.compositor = compositor_for(width, height, self.density)
        self.renderer = self.compositor.renderer
        # Where Chrome gets a page the world does not have (the served phone's network, which
        # fetches pages from the host); None: nowhere, as on the direct simulator.
        self.web_fetch: Callable[[str], WebPage | None] | None = None
        self.reset(None)

    # ----- the device contract -------------------------------------------------------------

    def reset(self, setup: dict[str, Any] | None, seed: int = 0) -> Observation:
        """Fresh OS state and world data; the event log starts empty."""
        self._world = build_world(setup)
        self._clock = datetime.fromisoformat(self._world.clock)
        self.events = EventLog()
        self.events.clock = self.now
        self.apps: dict[str, App] = {}
        self.foreground: str | None = None  # an app label; None is the launcher
        self.focus_field: str | None = None
        self.overlays: list[_Overlay] = []
        self.notifications: list[sysui.Notification] = []
        self.heads_up: tuple[sysui.Notification, int] | None = None
        self.shade_open = False
        self.recents_open = False  # the overview of recent apps is on screen
        self._recent: list[str] = []  # app labels, the most recently opened last
        self._recents_offset = 0.0
        self.share_sheet: SharePayload | None = None
        self._elements: list[UIElement] = []
        self._keyboard: Window | None = None  # laid out once (see _keyboard_window)
        self._acting_package = ""
        self.seed = seed
        # A mode switched during an episode (settings, cmd overlay) does not outlive it.
        self.navigation: nav.Navigation = self.default_navigation
        return self.observe()

    @property
    def world(self) -> World:
        """Live world data."""
        return self._world

    def set_navigation(self, mode: str) -> None:
        """Switch the system navigation (gestures, buttons or two-button) from now on, as
        Settings' System navigation does; the switch itself is no event."""
        self.navigation = nav.check(mode)

    def navigation_key(self, rid: str) -> tuple[int, int] | None:
        """Where the navigation bar's key ``rid`` (back, home, recent_apps) is, its centre;
        None if the bar has no such key (gesture navigation has none)."""
        bar = self._navigation_window(self._px(nav.BAR_DP[self.navigation]))
        for node in bar.root.walk():
            if node.rid == rid and node.clickable:
                left, top, right, bottom = node.bounds
                return (left + right) // 2, (top + bottom) // 2
        return None

    def begin_step(self, step: int) -> None:
        """Events from now on belong to agent step ``step``."""
        self.events.step = step

    def close(self) -> None:
        """Nothing to release: the simulated phone lives in this process."""

    def state(self) -> dict[str, Any]:
        """World data plus OS facts, for judges."""
        return {
            "world": self._world.model_dump(mode="json"),
            "foreground": self.foreground_package,
            "overlays": [o.spec.title for o in self.overlays],
            "notifications": [n.title for n in self.notifications],
        }

    def observe(self) -> Observation:
        """Lay out every window; pixels and XML are produced only if asked for."""
        windows = self._windows()
        elements = self._elements_of(windows)
        self._elements = elements
        self._windows_cache = windows
        keyboard = any(w.kind == "keyboard" for w in windows)
        return Observation(
            width=self.width,
            height=self.height,
            elements=elements,
            foreground_package=self.foreground_package,
            keyboard_shown=keyboard,
            step=self.events.step,
            render=lambda: self.compositor.render(windows),
            encode=lambda image: self.compositor.frame(windows, image),
            dump_xml=lambda: dump(active_window(windows)),
        )

    def windows(self) -> list[Window]:
        """The windows on screen now, bottom to top, laid out (for dumps of every window)."""
        return self._windows()

    def act(self, action: Action) -> Observation:
        """Carry out one action; the returned observation shows its effect."""
        # Hit-test against the device as it is now (an injection may have changed the
        # screen since the last observation); element indices keep the meaning they had
        # in the observation the agent saw. Actions that touch no window need no layout.
        if action.action_type not in WINDOWLESS_ACTIONS:
            self._windows_cache = self._windows()
        if not log_host_action(self.events, action):
            getattr(self, f"_do_{action.action_type}")(action)
        seconds = SECONDS_PER_WAIT if action.action_type == "wait" else SECONDS_PER_ACTION
        self._clock += timedelta(seconds=seconds)
        self._tick_heads_up()
        return self.observe()

    # ----- injection surfaces ----------------------------------------------------------------

    def show_overlay(self, spec: OverlaySpec) -> None:
        """Add an attacker's system-alert window above the apps; or, for a spec with a
        ``task``, launch it as a full-screen activity on top of that app's task."""
        if spec.task:
            self._launch_into_task(spec)
            return
        overlay = _Overlay(spec, len(self.overlays))
        self.overlays.append(overlay)
        self.focus_field = None  # the overlay takes window focus; the app's keyboard goes down
        self.events.append(
            "overlay_shown", spec.package, title=spec.title, style=spec.style, urgent=spec.urgent
        )

    def _launch_into_task(self, spec: OverlaySpec) -> None:
        # StrandHogg: an activity whose taskAffinity is the app's joins the app's task, whose
        # top it now is, and the task comes to the front (it usually is there already: the
        # attacker fires when the app opens). Its views report the app's package.
        cls = resolve_app(spec.task)
        if cls is None:
            raise ValueError(f"an overlay launched into the task of {spec.task!r}: no such app")
        if self.foreground != cls.label:
            self.open_app(cls.label)
        self.overlays.append(_Overlay(spec, len(self.overlays)))
        self.focus_field = None
        self.events.append(
            "overlay_shown",
            spec.package,
            title=spec.title,
            style=spec.style,
            urgent=spec.urgent,
            task=spec.task,
        )

    def receive_sms(self, sender: str, body: str) -> None:
        """Deliver an SMS into the inbox and pop a heads-up notification."""
        messages = resolve_app("Messages")
        package = messages.package if messages else "com.google.android.apps.messaging"
        sms = Sms(
            id=f"in{len(self._world.sms)}", address=sender, body=body, time=self.now(), read=False
        )
        self._world.sms.append(sms)
        self.events.append("sms_received", package, sender=sender, body=body)
        self.post_notification(
            package, "Messages", self._world.display_name(sender), body, {"thread": sender}
        )

    def post_notification(
        self, package: str, label: str, title: str, body: str, intent: dict[str, Any]
    ) -> None:
        """Post a notification with a heads-up."""
        n = sysui.Notification(
            len(self.notifications), package, label, title, body, self.now()[11:16], label, intent
        )
        self.notifications.append(n)
        self.heads_up = (n, sysui.HEADS_UP_STEPS)
        self.events.append("notification_posted", package, id=n.id, title=title, body=body)

    # ----- services for apps (the System protocol) -------------------------------------------

    def log(self, kind: str, **data: Any) -> None:
        """An event in the name of the app that is handling input."""
        self.events.append(kind, self._acting_package or self.foreground_package, **data)

    def now(self) -> str:
        """Device time, ISO format."""
        return self._clock.isoformat(timespec="seconds")

    def open_app(self, label: str, intent: dict[str, Any] | None = None) -> None:
        """Bring an app to the front, creating it on first use."""
        cls = resolve_app(label)
        if cls is None:
            self.events.append("invalid_action", "", reason=f"no app named {label!r}")
            return
        self.shade_open = False
        self.recents_open = False
        self.share_sheet = None
        self.focus_field = None
        self._recent = [*(r for r in self._recent if r != cls.label), cls.label]
        app = self.apps.get(cls.label)
        if app is None:
            app = cls(self)
            self.apps[cls.label] = app
        self.foreground = cls.label
        self.events.append("app_opened", cls.package, app=cls.label)
        if intent:
            caller, self._acting_package = self._acting_package, cls.package
            try:
                app.on_intent(intent)
            finally:
                self._acting_package = caller

    def load_page(self, url: str) -> WebPage | None:
        """The page Chrome shows for ``url``: fetched afresh when it comes from outside the
        world (it joins the world's web, replacing what was fetched before), else the
        world's own page, or None."""
        fetched = self.web_fetch(url) if self.web_fetch is not None else None
        if fetched is not None:
            while (old := self._world.page(fetched.url)) is not None:
                self._world.web.remove(old)  # the same page by the world's reckoning
            self._world.web.append(fetched)
            return fetched
        return self._world.page(url)

    def open_url(self, url: str) -> None:
        """Follow a link: Chrome opens it."""
        self.open_app("Chrome", {"url": url})

    def focus(self, field: str) -> None:
        """Input focus to a field of the foreground app."""
        self.focus_field = field

    def clear_focus(self) -> None:
        """No input focus; the keyboard goes down."""
        self.focus_field = None

    def share(self, payload: SharePayload) -> None:
        """Open the share sheet over the sharing app."""
        source = self.foreground or ""
        self.share_sheet = SharePayload(payload.text, tuple(payload.files), payload.subject, source)
        self.focus_field = None
        self.log("share_opened", source=source, text=payload.text, files=list(payload.files))

    def share_targets(self, payload: SharePayload) -> list[str]:
        """Labels of the apps that take this payload (never the sharing app), then Copy."""
        wanted = {"files"} if payload.files else {"text"}
        labels = [
            cls.label
            for cls in installed_apps()
            if wanted <= set(cls.accepts_share) and cls.label != payload.source
        ]
        return [*labels, "Copy"] if payload.text and not payload.files else labels

    def set_clipboard(self, value: str) -> None:
        """Copy text to the clipboard."""
        self._world.clipboard = value
        self.log("clipboard_set", text=value)

    def screenshot(self) -> str:
        """Capture every visible window's text (heads-up notifications too) as an image file."""
        windows = [w for w in self._windows() if w.kind not in ("keyboard", "shade")]
        lines = [
            node.text or node.desc
            for w in windows
            for node in w.root.walk()
            if (node.text or node.desc) and not is_empty(node.visible_bounds)
        ]
        stamp = self._clock.strftime("%Y%m%d-%H%M%S")
        path = f"/sdcard/Pictures/Screenshots/Screenshot_{stamp}.png"
        content = "Screenshot of the screen showing: " + " | ".join(lines)
        self._world.files.append(FileEntry(path=path, content=content, modified=self.now()))
        self.events.append(
            "screenshot_taken",
            sysui.SYSTEMUI_PACKAGE,
            path=path,
            text=content,
            foreground=self.foreground_package,
        )
        return path

    def download(self, url: str, name: str, content: str = "") -> str:
        """Save a file from the web into Download/ and post the completion notification."""
        path = f"/sdcard/Download/{name}"
        self._world.files = [f for f in self._world.files if f.path != path]
        self._world.files.append(FileEntry(path=path, content=content, modified=self.now()))
        package = self._acting_package or self.foreground_package
        self.events.append("download_completed", package, url=url, path=path)
        self.post_notification(package, "Files", "Download complete", name, {"file": path})
        return path

    @property
    def foreground_package(self) -> str:
        """The package of the foreground activity."""
        if self.foreground is None:
            return sysui.LAUNCHER_PACKAGE
        return self.apps[self.foreground].package

    # ----- window composition ------------------------------------------------------------------

    def _px(self, dp: float) -> int:
        return round(dp * self.density)

    def _windows(self) -> list[Window]:
        w, h = self.width, self.height
        status_h, nav_h = self._px(sysui.STATUS_BAR_DP), self._px(nav.BAR_DP[self.navigation])
        windows: list[Window] = []
        content = self._foreground_view()
        focused = self._mark_focus(content)
        keyboard_h = self._px(sysui.KEYBOARD_DP) + nav_h if focused is not None else 0
        bottom = h - keyboard_h if keyboard_h else h - nav_h
        windows.append(self._activity_window(content, status_h, bottom, nav_h))
        if self.share_sheet is not None:
            windows.append(self._chooser_window(self.share_sheet, status_h, nav_h))
        for overlay in self.overlays:
            if not overlay.spec.task:
                windows.append(self._overlay_window(overlay, status_h, nav_h))
        if focused is not None:
            windows.append(self._keyboard_window((0, h - keyboard_h, w, h - nav_h)))
        clock = self._clock.strftime("%-H:%M")
        windows.append(
            self._window(
                "StatusBar",
                "status_bar",
                sysui.SYSTEMUI_PACKAGE,
                sysui.status_bar(clock),
                (0, 0, w, status_h),
            )
        )
        windows.append(self._navigation_window(nav_h))
        if self.heads_up is not None and not self.shade_open:
            n = self.heads_up[0]
            card = sysui.heads_up(n, lambda: self._open_notification(n))
            self.layout.place(card, 0, status_h, w, None)
            # The window holds the card's shadow (drawn 6 px below it): a window's pixels
            # stay inside its frame, which the compositor relies on.
            frame = (0, status_h, w, card.bounds[3] + max(self._px(4), 6))
            windows.append(Window("HeadsUp", "heads_up", sysui.SYSTEMUI_PACKAGE, card, frame))
        if self.shade_open:
            panel = sysui.shade(
                self.notifications,
                clock,
                self._open_notification,
                self._clear_notifications,
                self._screenshot_tile,
            )
            windows.append(
                self._window(
                    "NotificationShade",
                    "shade",
                    sysui.SYSTEMUI_PACKAGE,
                    panel,
                    (0, status_h, w, h - nav_h),
                    focusable=True,
                )
            )
        return windows

    def _navigation_window(self, nav_h: int) -> Window:
        bar = sysui.navigation_bar(
            self.navigation,
            back=self._do_navigate_back,
            home=self._do_navigate_home,
            recents=self._show_recents,
        )
        frame = (0, self.height - nav_h, self.width, self.height)
        return self._window("NavigationBar", "navigation_bar", sysui.SYSTEMUI_PACKAGE, bar, frame)

    def _keyboard_window(self, frame: Rect) -> Window:
        """The keyboard, laid out once per frame: its keys never change (their taps call
        this phone's methods), and building and placing them was a tenth of every step
        with a field focused."""
        cached = self._keyboard
        if cached is None or cached.frame != frame:
            board = sysui.keyboard(self._type, self._key_backspace, self._key_enter)
            cached = self._keyboard = self._window(
                "InputMethod", "keyboard", sysui.IME_PACKAGE, board, frame
            )
        return cached

    def _window(
        self,
        name: str,
        kind: Any,
        package: str,
        root: Node,
        frame: Rect,
        *,
        focusable: bool = False,
    ) -> Window:
        left, top, right, bottom = frame
        self.layout.place(root, left, top, right - left, bottom - top)
        return Window(name, kind, package, root, frame, focusable=focusable)

    def recent_apps(self) -> list[str]:
        """The running apps' labels in the overview's order: the most recently opened first."""
        return [label for label in reversed(self._recent) if label in self.apps]

    def _show_recents(self) -> None:
        """The overview of recent apps, over Home (it is the launcher's); asked for again
        while it shows, it switches to the most recent app, as the recents key does."""
        recent = self.recent_apps()
        if self.recents_open and recent:
            self.open_app(recent[0])
            return
        self.shade_open = False
        self.share_sheet = None
        self.focus_field = None
        self.foreground = None
        self.recents_open = True
        self._recents_offset = 0.0  # the overview opens at its top
        self.events.append("recents_opened", sysui.LAUNCHER_PACKAGE, apps=recent)

    def _scroll_recents(self, value: float) -> None:
        self._recents_offset = max(0.0, value)

    def _clear_recents(self) -> None:
        """ "Clear all": every recent app's task ends (its state goes), Home shows."""
        for label in self.recent_apps():
            del self.apps[label]
        self._recent = []
        self.recents_open = False
        self.events.append("navigated_home", sysui.LAUNCHER_PACKAGE)

    def _foreground_view(self) -> Node:
        if self.foreground is None and self.recents_open:
            apps = [cls for label in self.recent_apps() if (cls := resolve_app(label))]
            return sysui.recents(
                apps, self.open_app, self._clear_recents, self._recents_offset, self._scroll_recents
            )
        if self.foreground is None:
            date = self._clock.strftime("%a, %b %-d")
            return sysui.launcher(installed_apps(), date, self.open_app)
        hijack = self._task_top()
        if hijack is not None:  # the activity on top of the app's task: the attacker's
            return sysui.overlay(
                replace(hijack.spec, style="fullscreen"),
                partial(self._overlay_answer, hijack, True),
                partial(self._overlay_answer, hijack, False),
            )
        return self.apps[self.foreground].view()

    def _task_top(self) -> _Overlay | None:
        """The attacker's activity on top of the foreground app's task, if one was launched
        into it (the last one launched is on top)."""
        if self.foreground is None:
            return None
        package = self.apps[self.foreground].package
        tops = [o for o in self.overlays if o.spec.task and _same_app(o.spec.task, package)]
        return tops[-1] if tops else None

    def _system_overlays(self) -> list[_Overlay]:
        """The attackers' system-alert windows (not those launched into a task)."""
        return [o for o in self.overlays if not o.spec.task]

    def _activity_window(self, content: Node, top: int, bottom: int, nav_h: int) -> Window:
        w, h = self.width, self.height
        self.layout.place(content, 0, top, w, bottom - top)
        root_content = Node(
            cls="android.widget.FrameLayout", rid="android:id/content", children=[content]
        )
        root_content.bounds = (0, top, w, bottom)
        status_bg = Node(rid="android:id/statusBarBackground", bounds=(0, 0, w, top))
        nav_bg = Node(rid="android:id/navigationBarBackground", bounds=(0, h - nav_h, w, h))
        decor = Node(cls="android.widget.FrameLayout", children=[root_content, status_bg, nav_bg])
        decor.bounds = (0, 0, w, h)
        package = self.foreground_package
        name = package + "/" + (self.foreground or "Launcher")
        bg = content.style.bg
        return Window(name, "activity", package, decor, (0, 0, w, h), focusable=True, background=bg)

    def _chooser_window(self, payload: SharePayload, top: int, nav_h: int) -> Window:
        names = [f.rsplit("/", 1)[-1] for f in payload.files]
        summary = ", ".join(names) if names else payload.text
        targets = [(label, resolve_app(label)) for label in self.share_targets(payload)]
        root = sysui.share_sheet(summary, targets, self._share_to)
        self.layout.place(root, 0, top, self.width, self.height - nav_h - top)
        return Window(
            "android/com.android.internal.app.ChooserActivity",
            "chooser",
            sysui.CHOOSER_PACKAGE,
            root,
            (0, 0, self.width, self.height),
            focusable=True,
            scrim=True,
        )

    def _overlay_window(self, overlay: _Overlay, top: int, nav_h: int) -> Window:
        # A MATCH_PARENT system-alert window: it takes every touch, wherever its panel is.
        spec = overlay.spec
        root = sysui.overlay(
            spec,
            partial(self._overlay_answer, overlay, True),
            partial(self._overlay_answer, overlay, False),
        )
        self.layout.place(root, 0, top, self.width, self.height - nav_h - top)
        full = spec.style == "fullscreen"
        return Window(
            f"{spec.package}/overlay{overlay.seq}",
            "overlay",
            spec.package,
            root,
            (0, 0, self.width, self.height),
            focusable=True,
            scrim=not full,
            background=root.style.bg if full else None,
        )

    def _mark_focus(self, content: Node) -> Node | None:
        if self.focus_field is None:
            return None
        for node in content.walk():
            if node.editable and node.field_name == self.focus_field:
                node.focused = True
                return node
        self.focus_field = None  # the field left the screen
        return None

    def _elements_of(self, windows: list[Window]) -> list[UIElement]:
        elements: list[UIElement] = []
        for window in windows:
            if window.kind == "keyboard":
                continue  # the IME's keys are not exposed to agents as elements
            for node in window.root.walk():
                if is_empty(node.visible_bounds):
                    continue
                if not (
                    node.clickable
                    or node.editable
                    or node.checkable
                    or node.scrollable
                    or node.text
                    or node.desc
                ):
                    continue
                elements.append(
                    UIElement(
                        index=len(elements),
                        text=node.text,
                        content_desc=node.desc,
                        resource_id=resource_id(node, window.package),
                        class_name=node.cls,
                        bounds=node.visible_bounds,
                        package=window.package,
                        window=window.name,
                        clickable=node.clickable,
                        long_clickable=node.long_clickable,
                        focusable=node.focusable,
                        focused=node.focused,
                        checkable=node.checkable,
                        checked=node.checked,
                        enabled=node.enabled,
                        scrollable=node.scrollable,
                        editable=node.editable,
                        password=node.password,
                        hint=node.hint,
                    )
                )
        return elements

    # ----- input dispatch --------------------------------------------------------------------

    def _point(self, action: Action) -> tuple[int, int] | None:
        point = touch_point(action, self._elements)
        if point is None and action.index is not None:
            self.events.append("invalid_action", "", reason=f"no element with index {action.index}")
        return point

    def _tap(self, x: int, y: int, *, long: bool = False) -> None:
        windows = self._windows_cache
        window = topmost_at(windows, x, y)
        if window is None or not (0 <= x < self.width and 0 <= y < self.height):
            self.events.append("invalid_action", "", reason=f"tap at ({x}, {y}) is off screen")
            return
        node = target_at(window.root, x, y)
        self.events.append(
            "tap",
            window.package,
            x=x,
            y=y,
            window=window.name,
            long=long,
            target=(node.text or node.desc or node.rid) if node else "",
            resource_id=resource_id(node, window.package) if node else "",
        )
        if node is None:
            return
        self._acting_package = window.package
        try:
            if long:
                if node.on_long_click is not None:
                    node.on_long_click()
            elif node.editable:
                self._focus_node(window, node)
            elif node.on_click is not None:
                node.on_click()
        finally:
            self._acting_package = ""

    def _focus_node(self, window: Window, node: Node) -> None:
        if window.kind != "activity":
            return
        self.focus_field = node.field_name
        self.events.append(
            "field_focused",
            window.package,
            field=view_id(node),
            sensitive=node.sensitive,
            window=window.name,
        )
        if node.on_click is not None:
            node.on_click()

    def _focused_node(self) -> tuple[Window, Node] | None:
        for window in self._windows_cache:
            if window.kind != "activity":
                continue
            for node in window.root.walk():
                if node.focused and node.editable:
                    return window, node
        return None

    def _type(self, typed: str) -> None:
        found = self._focused_node()
        if found is None:
            self.events.append("invalid_action", "", reason="no text field has focus")
            return
        window, node = found
        assert node.on_text is not None
        value = node.value + typed if typed != "\b" else node.value[:-1]
        node.on_text(value)
        node.value = value  # typing again before the next layout appends to what is there
        self.events.append(
            "text_typed",
            window.package,
            field=view_id(node),
            value=value,
            typed=typed,
            sensitive=node.sensitive,
            window=window.name,
            **({"password": True} if node.password else {}),
            # What the app says about where the field is (a web page's url), after the
            # field's own keys so that every event's data keeps one order.
            **node.context,
        )

    def _key_backspace(self) -> None:
        self._type("\b")

    def _key_enter(self) -> None:
        self._do_keyboard_enter(Action(action_type="keyboard_enter"))

    def _scroll_target(self, x: int | None, y: int | None) -> Node | None:
        windows = self._windows_cache
        candidates: list[Node] = []
        if x is not None and y is not None:
            window = topmost_at(windows, x, y)
            if window is not None:
                candidates = [
                    n for n in window.root.walk() if n.scrollable and hit(n.visible_bounds, x, y)
                ]
        if not candidates:
            window = active_window(windows)
            if window is not None:
                candidates = [n for n in window.root.walk() if n.scrollable]
        return candidates[-1] if candidates else None

    def _scroll_by(self, node: Node | None, dy_px: int) -> None:
        if node is None or node.on_scroll is None:
            self.events.append("scrolled", self.foreground_package, moved=False)
            return
        viewport_dp = (node.bounds[3] - node.bounds[1]) / self.density
        limit = max(0.0, node.content_height - viewport_dp)
        new = min(limit, max(0.0, node.scroll_offset + dy_px / self.density))
        node.on_scroll(new)
        self.events.append("scrolled", self.foreground_package, moved=new != node.scroll_offset)

    def _share_to(self, label: str) -> None:
        payload = self.share_sheet
        assert payload is not None
        self.share_sheet = None
        self.events.append(
            "share_target_chosen",
            sysui.CHOOSER_PACKAGE,
            target=label,
            source=payload.source,
            text=payload.text,
            files=list(payload.files),
        )
        if label == "Copy":
            self._acting_package = sysui.CHOOSER_PACKAGE
            self.set_clipboard(payload.text)
            return
        self.open_app(label)
        app = self.apps[self.foreground] if self.foreground else None
        if app is not None:
            caller, self._acting_package = self._acting_package, app.package
            try:
                app.receive_share(payload)
            finally:
                self._acting_package = caller

    def _screenshot_tile(self) -> None:
        # The shade collapses first, so the capture shows the screen beneath it.
        self.shade_open = False
        self.screenshot()

    def _open_notification(self, n: sysui.Notification) -> None:
        self.heads_up = None
        self.shade_open = False
        self.events.append("notification_opened", n.package, id=n.id, title=n.title, body=n.body)
        self.open_app(n.label, n.intent)

    def _clear_notifications(self) -> None:
        for n in self.notifications:
            self.events.append("notification_dismissed", n.package, id=n.id)
        self.notifications.clear()
        self.shade_open = False

    def _tick_heads_up(self) -> None:
        if self.heads_up is not None:
            n, left = self.heads_up
            self.heads_up = (n, left - 1) if left > 1 else None

    def _overlay_answer(self, overlay: _Overlay, confirmed: bool) -> None:
        # The overlay's own buttons are the only way to close it; either answer is an event.
        spec = overlay.spec
        self.overlays.remove(overlay)
        kind, label = (
            ("overlay_confirmed", spec.confirm) if confirmed else ("overlay_dismissed", spec.cancel)
        )
        self.events.append(kind, spec.package, title=spec.title, label=label)
        if spec.consent:
            self._world.consents[spec.consent] = confirmed
            verdict = "consent_granted" if confirmed else "consent_denied"
            self.events.append(verdict, spec.package, consent=spec.consent)
        if confirmed and spec.url:
            self.events.append("link_opened", spec.package, url=spec.url, source="overlay")
            self.open_url(spec.url)

    # ----- one handler per action type ---------------------------------------------------------

    def _do_click(self, action: Action) -> None:
        point = self._point(action)
        if point is not None:
            self._tap(*point)

    def _do_double_tap(self, action: Action) -> None:
        point = self._point(action)
        if point is not None:
            self._tap(*point)
            self._windows_cache = self._windows()
            self._tap(*point)

    def _do_long_press(self, action: Action) -> None:
        point = self._point(action)
        if point is not None:
            self._tap(*point, long=True)

    def _do_input_text(self, action: Action) -> None:
        assert action.text is not None
        if action.index is not None or action.x is not None:
            point = self._point(action)
            if point is None:
                return
            self._tap(*point)
            self._windows_cache = self._windows()
        self._type(action.text)

    def _do_keyboard_enter(self, action: Action) -> None:
        found = self._focused_node()
        package = found[0].package if found else self.foreground_package
        self.events.append("key_enter", package, field=view_id(found[1]) if found else "")
        if found is not None and found[1].on_submit is not None:
            self._acting_package = package
            try:
                found[1].on_submit()
            finally:
                self._acting_package = ""

    def _do_scroll(self, action: Action) -> None:
        x, y = (action.x, action.y) if action.x is not None else (None, None)
        if action.index is not None and 0 <= action.index < len(self._elements):
            x, y = self._elements[action.index].center
        step = int(self.height * 0.45)
        dy = {"down": step, "up": -step}.get(action.direction or "", 0)
        self._scroll_by(self._scroll_target(x, y), dy)

    def _do_swipe(self, action: Action) -> None:
        assert (
            action.x is not None
            and action.y is not None
            and action.x2 is not None
            and action.y2 is not None
        )
        x, y, x2, y2 = action.x, action.y, action.x2, action.y2
        status_h = self._px(sysui.STATUS_BAR_DP)
        on_bar = y >= self.height - self._px(nav.BAR_DP[self.navigation])
        if on_bar and self.navigation != "gestures":
            # A bar of keys takes the touch: a swipe off a key presses nothing, except the
            # two-button bar's swipe up from its Home pill, which is the overview.
            if self.navigation == "two-button" and y - y2 > self.height // 8:
                self._show_recents()
            else:
                self.events.append("scrolled", self.foreground_package, moved=False)
            return
        if on_bar and y - y2 > self.height // 8:
            # Gesture navigation, up from the gesture bar: a swipe that stops in the lower
            # part of the screen is swipe-up-and-hold (the overview of recent apps), a
            # longer one goes Home.
            if y2 >= self.height * RECENTS_SWIPE_END:
                self._show_recents()
            else:
                self._do_navigate_home(action)
            return
        if y <= status_h * 2 and y2 - y > self.height // 8:
            self.shade_open = True
            self.focus_field = None
            self.events.append("shade_opened", sysui.SYSTEMUI_PACKAGE)
            return
        window = topmost_at(self._windows_cache, x, y)
        if (
            window is not None
            and window.kind == "heads_up"
            and y2 < y
            and self.heads_up is not None
        ):
            n = self.heads_up[0]
            self.heads_up = None
            self.events.append("notification_dismissed", n.package, id=n.id)
            return
        if window is not None and window.kind == "shade" and y2 < y:
            self.shade_open = False
            return
        if abs(y2 - y) >= abs(x2 - x):
            self._scroll_by(self._scroll_target(x, y), y - y2)
        else:
            self.events.append("scrolled", self.foreground_package, moved=False)

    _do_drag = _do_swipe

    def _do_navigate_back(self, action: Action | None = None) -> None:
        self.events.append("navigated_back", self.foreground_package)
        if self.shade_open:
            self.shade_open = False
        elif self.focus_field is not None:
            self.focus_field = None
        elif self._system_overlays():
            pass  # attackers' overlays swallow Back: only their own buttons close them
        elif self.recents_open:
            self.recents_open = False  # Back leaves the overview for Home
        elif self.share_sheet is not None:
            self.share_sheet = None
        elif (hijack := self._task_top()) is not None:
            # An activity in the app's task finishes on Back; the app's own screen is back.
            self.overlays.remove(hijack)
            spec = hijack.spec
            self.events.append("overlay_dismissed", spec.package, title=spec.title, label="Back")
        elif self.foreground is not None:
            app = self.apps[self.foreground]
            self._acting_package = app.package
            try:
                handled = app.back()
            finally:
                self._acting_package = ""
            if not handled:
                self.foreground = None

    def _do_navigate_home(self, action: Action | None = None) -> None:
        self.recents_open = False
        self.shade_open = False
        self.share_sheet = None
        self.focus_field = None
        self.foreground = None
        self.events.append("navigated_home", sysui.LAUNCHER_PACKAGE)

    def _do_open_app(self, action: Action) -> None:
        assert action.app_name is not None
        self.open_app(action.app_name)

    def _do_wait(self, action: Action) -> None:
        pass


# Actions carried out without the laid-out windows (no hit test, no focused field, no node's
# callback): the host's (answer, finish, ...; see log_host_action) and these. Laying the
# screen out again for them cost a tenth of an episode.
WINDOWLESS_ACTIONS = frozenset(
    {"navigate_back", "navigate_home", "open_app", "wait"}
    | {"status", "finish", "answer", "refuse", "ask_user", "invalid"}
)


def _same_app(name: str, package: str) -> bool:
    # A task is named by its app's package (or anything resolve_app takes).
    cls = resolve_app(name)
    return (cls.package if cls is not None else name) == package


def view_id(node: Node) -> str:
    """How events name a field: its view id's entry name, as Android's accessibility and a
    dump name it (``com.x:id/compose_message_text`` is ``compose_message_text``), so a check
    or a trigger reads the same on a device; a field without an id by its semantic name."""
    return node.rid.rpartition(":id/")[2] or node.field_name


register_backend("sim", SIM)  # the core looks the declaration up by name
