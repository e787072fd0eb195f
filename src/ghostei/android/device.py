"""The device contract over adb: a real emulator (or the served simulated phone) as a Device.

How each part of the contract maps to adb:

- ``reset``: ``avd snapshot list`` on the emulator console; load ``ghostei-case-<id>`` if the
  AVD has it (the case's world, planted content included), else ``ghostei-base`` and seed the
  case's world data (contacts and sent SMS through content providers, incoming SMS with the
  console's ``sms send``, files by push, settings with ``settings put``); then ``logcat -c``.
- ``observe``: ``uiautomator dump --windows`` (plain ``dump`` where the device lacks it) and a
  pull of the dump, repeated until two dumps agree (the screen settled); the screenshot is
  ``exec-out screencap -p``, taken only when someone looks at it.
- ``act``: ``input tap|swipe|keyevent|text``, ``am broadcast -a ADB_INPUT_TEXT`` for text
  ``input text`` cannot type, ``monkey -p PKG`` for ``open_app``; terminal actions are only
  logged. Afterwards new events are read: GhostEI logcat lines, the phishing server's
  submissions and new rows of ``content://sms/sent``.
- ``show_overlay``: a broadcast to the helper app's ``AdbReceiver``; ``receive_sms``: the
  console's ``sms send``.
- ``state``: the world as far as the device can tell (SMS, contacts, settings, foreground)
  over the case's world data.
"""

from __future__ import annotations

import atexit
import hashlib
import io
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import Any, Protocol, cast

from PIL import Image

from ..actions import Action
from ..device import OverlaySpec, log_host_action
from ..events import EventLog
from ..observability import Observability
from ..observation import Observation, UIElement, touch_point
from ..uidump import DumpError, Screen, parse_dump
from ..world import Contact, FileEntry, World, build_world
from . import seed as seeding
from . import web
from .apps import (
    KEYCODE_BACK,
    KEYCODE_ENTER,
    KEYCODE_HOME,
    LAUNCHER_PACKAGE,
    MESSAGES_PACKAGE,
    PackageMap,
)
from .console import ConsoleError, EmulatorConsole, console_port
from .events import DeviceEvent, DeviceReading, EventReader
from .helper import HELPER_PACKAGE, OVERLAY_OP, OVERLAY_RECEIVER, SPEAK_PASSWORD
from .observability import with_pages
from .phish import PhishServer, page_path
from .providers import (
    ATTENDEES_MARK,
    CALENDAR_ATTENDEES,
    CALENDAR_EVENTS,
    MMS,
    MMS_PARTS,
    MMS_PARTS_MARK,
    mms_addr_uri,
    mms_details_command,
    mms_messages,
    parse_rows,
)
from .transport import AdbError, AdbTransport, AdbutilsTransport

OVERLAY_ACTION = "com.example.broadcast.UPDATE_POPUP"
# The MMS provider's messages and their parts, in one shell line.
MMS_QUERY = f"content query --uri {MMS}; echo {MMS_PARTS_MARK}; content query --uri {MMS_PARTS}"
# Per device (adb server port, serial): whether its Chrome was seen to follow the flags that
# send it to the web server. Proven once per process: a device's Chrome, image and network
# do not change between episodes.
_WEB_PROVEN: dict[tuple[int | None, str], bool] = {}
ADB_KEYBOARD_ACTION = "ADB_INPUT_TEXT"  # the ADBKeyboard IME types any Unicode text
DUMP_PATH = "/sdcard/window_dump.xml"
BASE_SNAPSHOT = "ghostei-base"
SWIPE_MS = 300
SCROLL_MS = 400
LONG_PRESS_MS = 1000
DRAG_MS = 1500
SCROLL_FRACTION = 0.45  # of the screen height, as the simulator scrolls


def case_snapshot(case_id: int) -> str:
    """The AVD snapshot that holds a case's world."""
    return f"ghostei-case-{case_id}"


# The world's parts the seeding below gives a device (contacts, SMS, files, settings), or that
# are not on the device at all: the owner's profile (the judge's reference), the web (served
# by the phishing server), the clock and the consents an overlay records.
SEEDED_HERE = frozenset(
    {"owner", "contacts", "sms", "files", "settings", "web", "clock", "consents"}
)


class Console(Protocol):
    """What the backend asks of the emulator console."""

    def snapshots(self) -> list[str]:
        """Snapshot names."""

    def load_snapshot(self, name: str) -> None:
        """Restore a snapshot."""

    def send_sms(self, sender: str, body: str) -> None:
        """Deliver an SMS."""

    def close(self) -> None:
        """Hang up."""


@dataclass
class DeviceObservation(Observation):
    """An Observation whose frame is the device's own PNG, fetched on first use.

    The PNG ``screencap`` sends is kept as it is (no decoding and re-encoding to save a frame).
    Caching is by hand, not with ``functools.cached_property``: in Python 3.11 that holds one
    lock per property for all instances, and a capture from a simulated phone served in the
    same process (whose ``screencap`` reads another Observation's ``png``) would wait on it
    forever.
    """

    capture: Callable[[], bytes] = field(default=bytes, repr=False)

    @property
    def png(self) -> bytes:
        """The frame as PNG bytes, as the device encoded it."""
        data = self.__dict__.get("_png")
        if data is None:
            data = self.__dict__["_png"] = self.capture()
        return cast(bytes, data)

    @property
    def frame(self) -> tuple[bytes, str]:
        """The device's PNG, named by a hash of its bytes: they are stored as they came."""
        data = self.png
        return data, hashlib.sha256(data).hexdigest()

    @property
    def screenshot(self) -> Image.Image:
        """The frame as a PIL image (RGB)."""
        image = self.__dict__.get("_screenshot")
        if image is None:
            image = self.__dict__["_screenshot"] = _decode_png(self.png)
        return cast(Image.Image, image)

    @property
    def xml(self) -> str:
        """The uiautomator dump of the active window."""
        return self.dump_xml()


def _decode_png(data: bytes) -> Image.Image:
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except OSError as exc:
        raise DeviceError("screencap gave no PNG") from exc
    return image.convert("RGB")


class DeviceError(RuntimeError):
    """The device cannot do what the episode needs (say what to fix)."""


_shared_lock = threading.Lock()
_shared: PhishServer | None = None


def shared_phish_server() -> PhishServer:
    """One loopback phishing server per process, started on first use."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = PhishServer()
            atexit.register(_shared.close)
        return _shared


class AndroidDevice:
    """An Android device (emulator or phone) reached through adb, as a GhostEI Device."""

    def __init__(
        self,
        serial: str,
        *,
        adb_port: int | None = None,
        case_id: int | None = None,
        phish_server: PhishServer | None = None,
        package_map: PackageMap | None = None,
        transport: AdbTransport | None = None,
        console: Callable[[], Console] | None = None,
        settle_dumps: int = 3,
        wait_dumps: int = 6,
        probe_timeout: float = web.PROBE_TIMEOUT,
    ) -> None:
        self.serial = serial
        self.probe_timeout = probe_timeout
        self.case_id = case_id
        self.adb = transport or AdbutilsTransport(serial, adb_port=adb_port)
        self.phish = phish_server
        self.apps = package_map or PackageMap()
        self._console_factory = console or _console_for(serial)
        self._console: Console | None = None
        self.settle_dumps = max(1, settle_dumps)
        self.wait_dumps = max(self.settle_dumps, wait_dumps)
        self._windows_dump = True  # uiautomator dump --windows, until the device says no
        self._size: tuple[int, int] | None = None
        self._channel = phish_server.channel(re.sub(r"\W", "_", serial)) if phish_server else ""
        self._generation = 0  # bumps with every change of the screen we cause
        self._world = build_world(None)
        self._synced: dict[str, Any] = {}
        self.events = EventLog()
        self._reader = EventReader()
        self._screen: Screen | None = None
        self._foreground = ""
        self._now = self._world.clock
        self.snapshot: str | None = None  # the snapshot the episode started from
        self.unseeded: list[str] = []  # world data this device could not be given
        self._served_pages: set[str] = set()  # phishing URLs sent to the phishing server
        self._focus: tuple[str, str] | None = None  # the focused text field: (id, window)
        self._unread: set[str] = set()  # world data the device did not answer for
        # Whether the helper reads password fields' text (speak_password), read at reset.
        self._speaks_passwords = False
        # Whether Chrome's flags send its navigations to the web server in this episode
        # (android.web); proven once per device and process (_WEB_PROVEN).
        self._web_key = (adb_port, serial)
        self._web_routed = False

    # ----- the device contract -------------------------------------------------------------

    @property
    def observability(self) -> Observability:
        """What a stock device with our helper app reports in this episode: the phishing
        server's reports count only if every phishing page was sent to it."""
        pages = [p.url for p in self._world.web if p.phishing]
        seen = with_pages(
            pages,
            self._served_pages,
            speaks_passwords=self._speaks_passwords,
            routed=self._web_routed,
        )
        return replace(seen, blind_state=(*seen.blind_state, *sorted(self._unread)))

    @property
    def world(self) -> World:
        """The case's world data as given to the device (injections plant into it)."""
        return self._world

    def reset(self, setup: dict[str, Any] | None, seed: int = 0) -> Observation:
        """Load the case's snapshot (or the base one and seed the world); events start empty."""
        self._world = build_world(setup)
        self._now = self._world.clock
        self.events = EventLog()
        self.events.clock = lambda: self._now
        self.unseeded = []
        self._served_pages = set()
        self._focus = None
        self._unread = set()
        self.snapshot = self._load_snapshot()
        if self.phish is not None and self._web_key not in _WEB_PROVEN:
            _WEB_PROVEN[self._web_key] = self._prove_web()
            self.snapshot = self._load_snapshot()  # the probe left Chrome in front
        self._web_routed = _WEB_PROVEN.get(self._web_key, False) and self._route_web()
        if not self._from_case_snapshot:
            self._seed(build_world(None), self._world)
        self._synced = self._world.model_dump(mode="json")
        if self.phish is not None:
            self.phish.clear(self._channel)
            self._register_pages(self._world)
        self._start_event_log()
        spoken = self.adb.shell(f"settings get secure {SPEAK_PASSWORD}").strip()
        self._speaks_passwords = spoken == "1"
        self._generation += 1
        obs = self._observe(self.settle_dumps)
        self._foreground = obs.foreground_package
        return obs

    @property
    def _from_case_snapshot(self) -> bool:
        return self.case_id is not None and self.snapshot == case_snapshot(self.case_id)

    def observe(self) -> Observation:
        """The current screen, once it has settled."""
        self._flush_world()
        return self._observe(self.settle_dumps)

    def act(self, action: Action) -> Observation:
        """Carry out one action; new events are read before the screen is returned."""
        self._flush_world()
        if not log_host_action(self.events, action):
            getattr(self, f"_do_{action.action_type}")(action)
        if action.terminal or action.action_type == "invalid":
            return self._observe(1)
        self._generation += 1
        dumps = self.wait_dumps if action.action_type == "wait" else self.settle_dumps
        obs = self._observe(dumps)
        reported = self._sync_events(obs.foreground_package)
        self._note_focus(obs, reported)
        return obs

    def begin_step(self, step: int) -> None:
        """Events from now on belong to agent step ``step``."""
        self.events.step = step

    def state(self) -> dict[str, Any]:
        """World data as far as the device can tell, plus device facts."""
        world = self._world.model_copy(deep=True)
        out = self.adb.shell(
            f"content query --uri {seeding.SMS_INBOX}; echo {seeding.SPLIT}; "
            f"content query --uri {seeding.SMS_SENT}; echo {seeding.SPLIT}; "
            f"content query --uri {seeding.CONTACT_DATA}; echo {seeding.SPLIT}; "
            f"{seeding.FILES_COMMAND}; echo {seeding.SPLIT}; "
            f"{seeding.settings_get_command()}; echo {seeding.SPLIT}; "
            f"content query --uri {CALENDAR_EVENTS}; echo {ATTENDEES_MARK}; "
            f"content query --uri {CALENDAR_ATTENDEES}; echo {seeding.SPLIT}; {MMS_QUERY}"
        )
        # What the device did not answer keeps the case's starting world, which is no
        # observation: the judge is told it could not see it.
        self._unread = {"sms", "contacts", "files", "settings", "calendar"}
        parts = out.split(seeding.SPLIT)
        if len(parts) == 7:
            inbox, sent, contact_rows, listing, settings, calendar, mms = parts
            mms_rows, _, mms_parts = mms.partition(MMS_PARTS_MARK)
            if _answered(inbox) and _answered(sent) and _answered(mms_rows):
                messages = mms_messages(mms_rows, mms_parts)
                addresses = {
                    m.id: self.adb.shell(f"content query --uri {mms_addr_uri(m.id)}")
                    for m in messages
                }
                world.sms = seeding.sms_from_rows(inbox, sent, messages, addresses)
                self._unread.discard("sms")
            if _answered(contact_rows):
                world.contacts = seeding.contacts_from_rows(contact_rows, world.contacts)
                self._unread.discard("contacts")
            files = seeding.files_from_listing(listing, world.files)
            if files is not None:
                world.files = files
                self._unread.discard("files")
            world.settings = seeding.parse_settings(settings, world.settings)
            self._unread.discard("settings")
            if all(_answered(t) for t in calendar.partition(ATTENDEES_MARK)[::2]):
                world.calendar = seeding.calendar_from_rows(calendar, world.calendar)
                self._unread.discard("calendar")
        for e in self.events:
            if e.kind in ("consent_granted", "consent_denied"):
                world.consents[str(e.data.get("consent", ""))] = e.kind == "consent_granted"
        return {
            "world": world.model_dump(mode="json"),
            "foreground": self._foreground,
            "overlays": _open_overlays(self.events),
            "notifications": [
                str(e.data.get("title", "")) for e in self.events.of_kind("notification_posted")
            ],
            "device": {"serial": self.serial, "snapshot": self.snapshot, "unseeded": self.unseeded},
        }

    # ----- injection surfaces ----------------------------------------------------------------

    def show_overlay(self, spec: OverlaySpec) -> None:
        """Broadcast the overlay to the helper app (upstream's extras plus ours).

        The helper draws system-alert windows only: an overlay launched into an app's task
        (``spec.task``, the task-hijack variant) is refused; ``spec.styled_as`` is not sent
        (the helper draws its own colours; the title and brand carry the app's name)."""
        if spec.task:
            raise DeviceError(
                "the helper app cannot launch an activity into another app's task "
                f"({spec.task}): the task-hijack variant runs on the simulator only"
            )
        self._flush_world()
        extras: list[tuple[str, str, str]] = [
            ("--es", "title", spec.title),
            ("--es", "content", spec.content),
            ("--es", "cancel", spec.cancel),
            ("--es", "confirm", spec.confirm),
            ("--es", "weburl", spec.url),
            ("--ez", "isUrgent", "true" if spec.urgent else "false"),
            ("--es", "style", spec.style),
            ("--es", "brand", spec.brand),
            ("--es", "consent", spec.consent),
            ("--es", "package", spec.package),
        ]
        served = self._served_url(spec.url)
        if served:
            extras.append(("--es", "served_url", served))
            self._served_pages.add(spec.url)
        args = " ".join(f"{flag} {key} {seeding.q(value)}" for flag, key, value in extras)
        out = self.adb.shell(f"am broadcast -n {OVERLAY_RECEIVER} -a {OVERLAY_ACTION} {args}")
        result = re.search(r"Broadcast completed: result=(-?\d+)", out)
        if result is None:
            raise DeviceError(f"the overlay broadcast failed on {self.serial}: {out.strip()}")
        if result.group(1) == "1":  # the helper's answer when it may not draw overlays
            raise DeviceError(
                f"the helper app may not draw overlays on {self.serial}: adb shell appops set "
                f"{HELPER_PACKAGE} {OVERLAY_OP} allow"
            )
        self._generation += 1
        self._sync_events(self._foreground)

    def receive_sms(self, sender: str, body: str) -> None:
        """An SMS through the emulator console's radio."""
        self._flush_world()
        sender = radio_number(sender)
        self._console_call(partial(_send_sms, sender=sender, body=body))
        self._generation += 1
        before = len(self.events)
        self._sync_events(self._foreground)
        if not any(e.kind == "sms_received" for e in list(self.events)[before:]):
            # A real device reports nothing of it: the console delivered it, so record that.
            self.events.append("sms_received", MESSAGES_PACKAGE, sender=sender, body=body)

    # ----- observation -----------------------------------------------------------------------

    def _observe(self, dumps: int) -> Observation:
        screen = self._settled_screen(dumps)
        self._screen = screen
        width, height = self._screen_size()
        generation = self._generation
        capture = partial(self._screencap, generation)
        return DeviceObservation(
            width=width,
            height=height,
            elements=screen.elements,
            foreground_package=screen.foreground_package or self._dumpsys_foreground(),
            keyboard_shown=screen.keyboard_shown,
            step=self.events.step,
            render=lambda: _decode_png(capture()),
            dump_xml=lambda: screen.active_xml,
            capture=capture,
            lasting=False,  # a capture after the device acted would be refused as stale
        )

    def _settled_screen(self, dumps: int) -> Screen:
        # Consecutive dumps until two agree: animations and late layout are over. Bounded;
        # a dump takes long enough on a real device that no sleep is needed between them.
        xml = self._dump()
        for _ in range(dumps - 1):
            again = self._dump()
            if again == xml:
                break
            xml = again
        try:
            return parse_dump(xml)
        except DumpError as exc:
            raise DeviceError(f"unreadable uiautomator dump from {self.serial}: {exc}") from exc

    def _dump(self) -> str:
        flag = "--windows " if self._windows_dump else ""
        out = self.adb.shell(f"uiautomator dump {flag}{DUMP_PATH}")
        if "dumped to" not in out and self._windows_dump:
            self._windows_dump = False  # before Android 13: the active window only
            return self._dump()
        if "dumped to" not in out:
            raise DeviceError(f"uiautomator dump failed on {self.serial}: {out.strip()}")
        return self.adb.pull(DUMP_PATH).decode("utf-8", errors="replace")

    def _screencap(self, generation: int) -> bytes:
        if generation != self._generation:
            raise DeviceError("this observation is stale: the device has acted since")
        data = self.adb.exec_out("screencap -p")
        if not data.startswith(b"\x89PNG"):
            raise DeviceError(f"screencap gave no PNG on {self.serial}: {data[:80]!r}")
        return data

    def _screen_size(self) -> tuple[int, int]:
        if self._size is None:
            out = self.adb.shell("wm size")
            m = re.search(r"Override size: (\d+)x(\d+)", out) or re.search(
                r"Physical size: (\d+)x(\d+)", out
            )
            if m is None:
                raise DeviceError(f"`wm size` gave no size on {self.serial}: {out.strip()}")
            self._size = (int(m.group(1)), int(m.group(2)))
        return self._size

    def _dumpsys_foreground(self) -> str:
        out = self.adb.shell("dumpsys window windows")
        for pattern in (
            r"mFocusedApp=.*?ActivityRecord\{\S+ \S+ ([\w.]+)/",
            r"mCurrentFocus=Window\{\S+ \S+ ([\w.]+)/",
        ):
            m = re.search(pattern, out)
            if m:
                return m.group(1)
        return LAUNCHER_PACKAGE

    # ----- actions ---------------------------------------------------------------------------

    def _point(self, action: Action) -> tuple[int, int] | None:
        point = touch_point(action, self._screen.elements if self._screen else [])
        if point is None:
            self.events.append("invalid_action", "", reason=f"no element with index {action.index}")
        return point

    def _do_click(self, action: Action) -> None:
        point = self._point(action)
        if point is not None:
            self.adb.shell(f"input tap {point[0]} {point[1]}")

    def _do_double_tap(self, action: Action) -> None:
        point = self._point(action)
        if point is not None:
            tap = f"input tap {point[0]} {point[1]}"
            self.adb.shell(f"{tap}; {tap}")

    def _do_long_press(self, action: Action) -> None:
        point = self._point(action)
        if point is not None:
            x, y = point
            self.adb.shell(f"input swipe {x} {y} {x} {y} {LONG_PRESS_MS}")

    def _do_input_text(self, action: Action) -> None:
        assert action.text is not None
        if action.index is not None or action.x is not None:
            point = self._point(action)
            if point is None:
                return
            self.adb.shell(f"input tap {point[0]} {point[1]}")  # focus the field first
        if action.text:
            self.adb.shell(type_command(action.text))

    def _do_keyboard_enter(self, action: Action) -> None:
        self.adb.shell(f"input keyevent {KEYCODE_ENTER}")

    def _do_scroll(self, action: Action) -> None:
        x, y, x2, y2 = self._scroll_swipe(action)
        self.adb.shell(f"input swipe {x} {y} {x2} {y2} {SCROLL_MS}")

    def _do_swipe(self, action: Action) -> None:
        self.adb.shell(f"input swipe {action.x} {action.y} {action.x2} {action.y2} {SWIPE_MS}")

    def _do_drag(self, action: Action) -> None:
        # A slow swipe: what AppAgent and adbutils' users send to drag on any API level.
        self.adb.shell(f"input swipe {action.x} {action.y} {action.x2} {action.y2} {DRAG_MS}")

    def _do_navigate_back(self, action: Action) -> None:
        self.adb.shell(f"input keyevent {KEYCODE_BACK}")

    def _do_navigate_home(self, action: Action) -> None:
        self.adb.shell(f"input keyevent {KEYCODE_HOME}")

    def _do_open_app(self, action: Action) -> None:
        assert action.app_name is not None
        app = self.apps.resolve(action.app_name)
        if app is None:
            self.events.append("invalid_action", "", reason=f"no app named {action.app_name!r}")
            return
        out = self.adb.shell(f"monkey -p {app.package} -c android.intent.category.LAUNCHER 1")
        if "No activities found" in out or "monkey aborted" in out:
            self.events.append("invalid_action", "", reason=f"{app.package} is not installed")

    def _do_wait(self, action: Action) -> None:
        pass  # act() waits for the screen to settle, with more dumps than after other actions

    def _scroll_swipe(self, action: Action) -> tuple[int, int, int, int]:
        width, height = self._screen_size()
        target = self._scroll_target(action)
        if action.x is not None and action.y is not None:
            x, y = action.x, action.y
        elif target is not None:
            x, y = target.center
        else:
            x, y = width // 2, height // 2
        step = int(height * SCROLL_FRACTION)
        dx, dy = {"down": (0, -step), "up": (0, step), "left": (step, 0), "right": (-step, 0)}[
            action.direction or "down"
        ]
        # The finger starts on the target and travels ``step``: the content moves as far as
        # the simulator scrolls. Where the end would leave the screen, start further in.
        if not 0 <= y + dy < height and target is not None:
            top, bottom = target.bounds[1], target.bounds[3] - 1
            y = min(max(y, top), bottom)
            y = max(top, min(bottom, height - 1 - dy)) if dy > 0 else min(bottom, max(top, -dy))
        if not 0 <= x + dx < width and target is not None:
            left, right = target.bounds[0], target.bounds[2] - 1
            x = max(left, min(right, width - 1 - dx)) if dx > 0 else min(right, max(left, -dx))
        return x, y, min(max(x + dx, 0), width - 1), min(max(y + dy, 0), height - 1)

    def _scroll_target(self, action: Action) -> UIElement | None:
        screen = self._screen
        if screen is None:
            return None
        if action.index is not None and 0 <= action.index < len(screen.elements):
            return screen.elements[action.index]
        active = screen.active
        scrollables = [
            e
            for e in screen.elements
            if e.scrollable and (active is None or e.window == active.name)
        ]
        return scrollables[-1] if scrollables else None

    # ----- events ----------------------------------------------------------------------------

    def _read_device(self) -> DeviceReading:
        """The helper's logcat lines, the SMS provider's sent box, the calendar's events and
        attendees, the mapped settings and the installed packages, in one adb round trip."""
        out = self.adb.shell(
            f"logcat -d -v threadtime -s GhostEI; echo {seeding.SPLIT}; "
            f"content query --uri {seeding.SMS_SENT}; echo {seeding.SPLIT}; "
            f"content query --uri {CALENDAR_EVENTS}; echo {ATTENDEES_MARK}; "
            f"content query --uri {CALENDAR_ATTENDEES}; echo {seeding.SPLIT}; "
            f"{seeding.settings_get_command()}; echo {seeding.SPLIT}; pm list packages; "
            f"echo {seeding.SPLIT}; content query --uri {MMS}"
        )
        parts = [*out.split(seeding.SPLIT), "", "", "", "", ""]
        return DeviceReading(*parts[:6])

    def _mms_details(self, message_id: str) -> str:
        return self.adb.shell(mms_details_command(message_id))

    def _start_event_log(self) -> None:
        """What the device logged so far, the SMS it has sent, its calendar and settings are
        not news."""
        self.adb.shell("logcat -c")
        self._reader.baseline(self._read_device())

    def _sync_events(self, foreground: str) -> list[DeviceEvent]:
        """Read new events; ``foreground`` is the app in front now. Returns the device's."""
        extra = self.phish.take_events(self._channel) if self.phish is not None else []
        new = self._reader.read(self._read_device(), extra, self._mms_details)
        for event in new:
            self._append(event)
        if foreground and foreground != self._foreground:
            app = self.apps.by_package(foreground)
            reported = any(e.kind == "app_opened" and e.package == foreground for e in new)
            if app is not None and not reported:
                # A real device says nothing when an app comes to the front: what triggers
                # need is read from the foreground instead.
                self.events.append("app_opened", app.package, app=app.label)
        self._foreground = foreground
        return new

    def _note_focus(self, obs: Observation, reported: list[DeviceEvent]) -> None:
        """A text field that took input focus: the helper's accessibility service reports
        it when enabled; every dump also marks the focused field, named by its resource id
        (a field without one is not named), which is noted unless the helper said so."""
        field = next((e for e in obs.elements if e.focused and e.editable), None)
        focus = (field.resource_id, field.window) if field is not None else None
        if field is not None and focus != self._focus and ":id/" in field.resource_id:
            name = field.resource_id.rpartition(":id/")[2]
            # One focus, one event: the helper's, when its service is on.
            if not any(e.kind == "field_focused" for e in reported):
                self.events.append("field_focused", field.package, field=name, window=field.window)
        self._focus = focus

    def _append(self, event: DeviceEvent) -> None:
        if event.stamp:
            self._now = _iso_time(event.stamp, self._world.clock)
        self.events.append(event.kind, event.package, **event.data)

    # ----- snapshots and seeding ---------------------------------------------------------------

    def _load_snapshot(self) -> str | None:
        names = self._console_call(lambda c: c.snapshots())
        wanted = case_snapshot(self.case_id) if self.case_id is not None else None
        for name in (wanted, BASE_SNAPSHOT):
            if name is not None and name in names:
                self._console_call(partial(_load, name=name))
                self.adb.wait_for_device(60.0)
                return name
        self.unseeded.append("no ghostei snapshot: the device was used as it is")
        self.adb.shell(f"input keyevent {KEYCODE_HOME}")
        return None

    def _seed(self, before: World, after: World) -> None:
        """Give the device the world data that ``after`` has and ``before`` had not."""
        old = before.model_dump(mode="json")
        for contact in after.contacts:
            if contact.model_dump(mode="json") not in old["contacts"]:
                self._seed_contact(contact)
        for sms in after.sms:
            if sms.model_dump(mode="json") in old["sms"]:
                continue
            if sms.incoming:
                number = radio_number(sms.address)
                self._console_call(partial(_send_sms, sender=number, body=sms.body))
            else:
                self.adb.shell(seeding.sms_sent_insert(sms))
        for entry in after.files:
            if entry.model_dump(mode="json") not in old["files"]:
                self._seed_file(entry)
        lines = seeding.settings_put(after.settings, before.settings)
        if lines:
            self.adb.shell("; ".join(lines))
        # Every other part of the world an app keeps to itself (mail, reservations, notes, a
        # wishlist, app permissions, ...) only a case snapshot holds: named, never dropped, so
        # a field added to the world is unseeded until it is taught here.
        new = after.model_dump(mode="json")
        self.unseeded += [k for k in new if k not in SEEDED_HERE and new[k] != old[k]]

    def _seed_contact(self, contact: Contact) -> None:
        self.adb.shell(seeding.raw_contact_insert())
        rows = parse_rows(self.adb.shell(seeding.raw_contact_ids()))
        ids = [int(r["_id"]) for r in rows if r.get("_id", "").isdigit()]
        if not ids:
            self.unseeded.append(f"contact {contact.name}")
            return
        self.adb.shell("; ".join(seeding.contact_data_inserts(max(ids), contact)))

    def _seed_file(self, entry: FileEntry) -> None:
        self.adb.push(entry.content.encode("utf-8"), entry.path)

    def _flush_world(self) -> None:
        # Injections plant into ``world`` after reset: pages go to the phishing server, and
        # without a case snapshot (which holds planted content) the rest is seeded.
        current = self._world.model_dump(mode="json")
        if current == self._synced:
            return
        if self.phish is not None:
            self._register_pages(self._world)
        if not self._from_case_snapshot:
            self._seed(World.model_validate(self._synced), self._world)
            self._start_event_log()  # planted content is no event of the episode
        self._synced = current

    def _register_pages(self, world: World) -> None:
        # Every page of the world: Chrome's routed navigations reach the legitimate ones too.
        assert self.phish is not None
        for page in world.web:
            self.phish.add_page(page, self._channel)

    def _server_host(self, port: int) -> str:
        try:
            return web.server_host(self.adb, self.serial, port)
        except AdbError as exc:
            raise DeviceError(f"adb reverse failed on {self.serial}: {exc}") from exc

    def _road(self) -> web.ChromeRoad:
        assert self.phish is not None
        port = self.phish.routed_port(self._channel)
        return web.ChromeRoad(
            self.adb, self.phish, self._channel, self._server_host(port), self._dumpsys_foreground
        )

    def _route_web(self) -> bool:
        return self._road().point()

    def _prove_web(self) -> bool:
        return self._road().prove(self.probe_timeout)

    def _served_url(self, url: str) -> str:
        """Where the device loads a phishing URL from the loopback server ('' if not ours)."""
        if self.phish is None or not url or not any(p.url == url for p in self._world.web):
            return ""
        host = self._server_host(self.phish.port)
        return self.phish.base_url(host) + self._channel + page_path(url)

    def _console_call(self, call: Callable[[Console], Any]) -> Any:
        for attempt in (1, 2):
            if self._console is None:
                self._console = self._console_factory()
            try:
                return call(self._console)
            except ConsoleError:
                self._console.close()
                self._console = None
                if attempt == 2:
                    raise
        return None

    def close(self) -> None:
        """Hang up the console (adb needs no closing)."""
        if self._console is not None:
            self._console.close()
            self._console = None


def type_command(text: str) -> str:
    """The shell line that types ``text`` into the focused field.

    ``input text`` types printable ASCII, with ``%s`` for a space; anything else (accents,
    emoji, line breaks, a literal ``%s``) goes through the ADBKeyboard IME's broadcast, which
    the upstream harness installs for the same reason.
    """
    if text.isascii() and text.isprintable() and "%s" not in text:
        return "input text " + seeding.q(text.replace(" ", "%s"))
    return f"am broadcast -a {ADB_KEYBOARD_ACTION} --es msg {seeding.q(text)}"


def radio_number(number: str) -> str:
    """A number as the console's ``sms send`` takes it: ``+`` and digits, no spacing."""
    compact = re.sub(r"[\s().-]", "", number)
    if not re.fullmatch(r"\+?\d+", compact):
        raise DeviceError(f"an emulator receives SMS from phone numbers only, not {number!r}")
    return compact


def _console_for(serial: str) -> Callable[[], Console]:
    port = console_port(serial)

    def connect() -> Console:
        if port is None:
            raise DeviceError(
                f"{serial} is not an emulator: snapshots and SMS need an emulator console"
            )
        return EmulatorConsole(port)

    return connect


def _load(console: Console, name: str) -> None:
    console.load_snapshot(name)


def _send_sms(console: Console, sender: str, body: str) -> None:
    console.send_sms(sender, body)


def _answered(text: str) -> bool:
    # ``content query`` prints rows, or "No result found."; anything else is an error.
    return "Row:" in text or "No result found" in text


def _open_overlays(events: EventLog) -> list[str]:
    shown: list[str] = []
    for e in events:
        title = str(e.data.get("title", ""))
        if e.kind == "overlay_shown":
            shown.append(title)
        elif e.kind in ("overlay_confirmed", "overlay_dismissed") and title in shown:
            shown.remove(title)
    return shown


def _iso_time(stamp: str, clock: str) -> str:
    """A logcat stamp (``MM-DD HH:MM:SS.mmm``) as ISO time, the year taken from ``clock``."""
    try:
        year = datetime.fromisoformat(clock).year
        return datetime.strptime(f"{year}-{stamp[:14]}", "%Y-%m-%d %H:%M:%S").isoformat()
    except ValueError:
        return clock


__all__ = ["AndroidDevice", "DeviceError", "shared_phish_server", "type_command"]
