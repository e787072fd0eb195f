"""``input`` and ``monkey``: touches, keys and text, through the phone's device contract.

Every gesture becomes one ``Action`` the simulated phone carries out (``phone.act``), so it lands
in the event log exactly as the same action from a simulator agent would. Gestures map as
Android's input pipeline would interpret them: a swipe that stays within the touch slop is a tap,
or a long press when held for the long-press timeout (400 ms on API 34).
"""

from __future__ import annotations

import math
import random
import re

from ..actions import Action, ActionType
from .commands import IO, Session, UsageError, command
from .packages import app_of, installed

LONG_PRESS_MS = 400  # ViewConfiguration.DEFAULT_LONG_PRESS_TIMEOUT on API 34
TOUCH_SLOP_DP = 8
DEFAULT_SWIPE_MS = 300
RECENTS_KEY_END = 0.6  # where the recents key's swipe up from the gesture bar stops (of height)
SOURCES = frozenset(
    {
        "keyboard",
        "mouse",
        "touchpad",
        "touchscreen",
        "touchnavigation",
        "dpad",
        "gamepad",
        "joystick",
        "stylus",
        "trackball",
        "rotaryencoder",
    }
)
# KeyEvent names (without the KEYCODE_ prefix) of the keys the served phone reacts to or that
# clients send; keyCodeFromString accepts the number, the name, or KEYCODE_ + name.
KEYCODES = {
    "UNKNOWN": 0,
    "SOFT_LEFT": 1,
    "SOFT_RIGHT": 2,
    "HOME": 3,
    "BACK": 4,
    "CALL": 5,
    "ENDCALL": 6,
    **{str(d): 7 + d for d in range(10)},
    "STAR": 17,
    "POUND": 18,
    "DPAD_UP": 19,
    "DPAD_DOWN": 20,
    "DPAD_LEFT": 21,
    "DPAD_RIGHT": 22,
    "DPAD_CENTER": 23,
    "VOLUME_UP": 24,
    "VOLUME_DOWN": 25,
    "POWER": 26,
    "CAMERA": 27,
    "CLEAR": 28,
    **{chr(ord("A") + i): 29 + i for i in range(26)},
    "COMMA": 55,
    "PERIOD": 56,
    "TAB": 61,
    "SPACE": 62,
    "ENTER": 66,
    "DEL": 67,
    "GRAVE": 68,
    "MINUS": 69,
    "EQUALS": 70,
    "LEFT_BRACKET": 71,
    "RIGHT_BRACKET": 72,
    "BACKSLASH": 73,
    "SEMICOLON": 74,
    "APOSTROPHE": 75,
    "SLASH": 76,
    "AT": 77,
    "PLUS": 81,
    "MENU": 82,
    "NOTIFICATION": 83,
    "SEARCH": 84,
    "ESCAPE": 111,
    "FORWARD_DEL": 112,
    "MOVE_HOME": 122,
    "MOVE_END": 123,
    "VOLUME_MUTE": 164,
    "NUMPAD_ENTER": 160,
    "APP_SWITCH": 187,
    "SLEEP": 223,
    "WAKEUP": 224,
}
# Keys that type a character into the focused field.
_CHARACTERS = {
    **{7 + d: str(d) for d in range(10)},
    **{29 + i: chr(ord("a") + i) for i in range(26)},
    17: "*",
    18: "#",
    55: ",",
    56: ".",
    61: "\t",
    62: " ",
    68: "`",
    69: "-",
    70: "=",
    71: "[",
    72: "]",
    73: "\\",
    74: ";",
    75: "'",
    76: "/",
    77: "@",
    81: "+",
}


def java_error(io: IO, what: str, exception: str) -> int:
    """How a shell command service reports an exception (and exits with 255)."""
    io.error(f"Exception occurred while executing '{what}':")
    io.error(exception)
    return 255


def keycode(name: str) -> int:
    """KeyEvent.keyCodeFromString: a number, NAME or KEYCODE_NAME; 0 if unknown."""
    if re.fullmatch(r"\d+", name):
        return int(name)
    return KEYCODES.get(name.upper().removeprefix("KEYCODE_"), 0)


def press_key(session: Session, code: int) -> None:
    """What one key press does on the phone; keys with no effect here are ignored."""
    if code == 3:
        session.act(Action(action_type="navigate_home"))
    elif code == 187:
        # APP_SWITCH: the overview of recent apps, which the three-button bar's Overview key
        # opens, and gesture navigation (or the two-button bar's pill) a short swipe up from
        # the bar: the phone's ways there, so the key is one of them.
        phone = session.phone
        key = phone.navigation_key("recent_apps")
        if key is not None:
            session.act(Action(action_type="click", x=key[0], y=key[1]))
            return
        x, bottom = phone.width // 2, phone.height - 1
        end = round(phone.height * RECENTS_KEY_END)
        session.act(Action(action_type="swipe", x=x, y=bottom, x2=x, y2=end))
    elif code in (4, 111):
        session.act(Action(action_type="navigate_back"))
    elif code in (66, 160):
        session.act(Action(action_type="keyboard_enter"))
    elif code == 67:
        session.act(Action(action_type="input_text", text="\b"))
    elif code in _CHARACTERS:
        session.act(Action(action_type="input_text", text=_CHARACTERS[code]))


def type_text(session: Session, text: str) -> None:
    """Type text into the focused field; a newline is the Enter key."""
    for i, segment in enumerate(text.split("\n")):
        if i:
            session.act(Action(action_type="keyboard_enter"))
        if segment:
            session.act(Action(action_type="input_text", text=segment))


def _number(io: IO, what: str, arg: str) -> float | None:
    try:
        return float(arg)
    except ValueError:
        java_error(io, what, f'java.lang.NumberFormatException: For input string: "{arg}"')
        return None


def _points(io: IO, what: str, args: list[str], count: int) -> list[int] | None:
    if len(args) < count:
        java_error(
            io, what, f'java.lang.IllegalArgumentException: Argument expected after "{what}"'
        )
        return None
    values = [_number(io, what, a) for a in args[:count]]
    if any(v is None for v in values):
        return None
    return [int(v) for v in values if v is not None]


def gesture(session: Session, x1: int, y1: int, x2: int, y2: int, ms: int, drag: bool) -> None:
    """A touch from (x1, y1) to (x2, y2) lasting ``ms``: a tap, long press, swipe or drag."""
    slop = TOUCH_SLOP_DP * session.phone.density
    if math.hypot(x2 - x1, y2 - y1) > slop:
        kind: ActionType = "drag" if drag else "swipe"
        session.act(Action(action_type=kind, x=x1, y=y1, x2=x2, y2=y2))
    elif ms >= LONG_PRESS_MS:
        session.act(Action(action_type="long_press", x=x1, y=y1))
    else:
        session.act(Action(action_type="click", x=x1, y=y1))


class _Pointer:
    """Where ``input motionevent DOWN`` put the finger, until UP."""

    def __init__(self) -> None:
        self.down: tuple[int, int] | None = None


@command("input")
def input_(session: Session, argv: list[str], io: IO) -> int:
    """input [SOURCE] [-d DISPLAY] text|keyevent|tap|swipe|draganddrop|motionevent|press|roll."""
    args = argv[1:]
    if args and args[0] in SOURCES:
        args = args[1:]
    if args[:1] == ["-d"]:
        args = args[2:]
    if not args:
        raise UsageError(
            "Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n\n"
            "The commands and default sources are:\n"
            "      text <string> (Default: keyboard)\n"
            "      keyevent [--longpress|--doubletap|--async|--delay DURATION] "
            "<key code number or name> ... (Default: keyboard)\n"
            "      tap <x> <y> (Default: touchscreen)\n"
            "      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
            "      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
            "      press (Default: trackball)\n"
            "      roll <dx> <dy> (Default: trackball)\n"
            "      motionevent <DOWN|UP|MOVE|CANCEL> <x> <y> (Default: touchscreen)",
            255,
        )
    sub, rest = args[0], args[1:]
    if sub == "text":
        return _text(session, rest, io)
    if sub == "keyevent":
        codes = [a for a in rest if not a.startswith("--")]
        if not codes:
            return java_error(io, sub, "java.lang.IllegalArgumentException: Argument expected")
        for arg in codes:
            press_key(session, keycode(arg))
        return 0
    if sub == "tap":
        pts = _points(io, sub, rest, 2)
        if pts is None:
            return 255
        session.act(Action(action_type="click", x=pts[0], y=pts[1]))
        return 0
    if sub in ("swipe", "draganddrop"):
        pts = _points(io, sub, rest, 4)
        if pts is None:
            return 255
        ms = _number(io, sub, rest[4]) if len(rest) > 4 else DEFAULT_SWIPE_MS
        if ms is None:
            return 255
        x1, y1, x2, y2 = pts
        gesture(session, x1, y1, x2, y2, int(ms), drag=sub == "draganddrop")
        return 0
    if sub == "motionevent":
        return _motion(session, rest, io)
    if sub in ("press", "roll", "keycombination"):
        return 0  # trackball and chorded keys have no effect on the simulated phone
    io.error(f"Unknown command: {sub}")
    return 255


def _text(session: Session, args: list[str], io: IO) -> int:
    if not args:
        return java_error(io, "text", "java.lang.IllegalArgumentException: Argument expected")
    # InputShellCommand.sendText: "%s" stands for a space (adb shell splits on real ones).
    text = re.sub(r"%s", " ", args[0])
    if any(not (32 <= ord(ch) < 127 or ch in "\n\t") for ch in text):
        # The virtual keyboard's key map cannot produce the character, so no events exist.
        return java_error(
            io, "text", "java.lang.NullPointerException: Attempt to get length of null array"
        )
    type_text(session, text)
    return 0


def _motion(session: Session, args: list[str], io: IO) -> int:
    if not args or args[0].upper() not in ("DOWN", "UP", "MOVE", "CANCEL"):
        return java_error(io, "motionevent", "java.lang.IllegalArgumentException: Unknown action")
    pointer = session.device.slot(_Pointer)
    action = args[0].upper()
    pts = _points(io, "motionevent", args[1:], 2) if action != "CANCEL" else [0, 0]
    if pts is None:
        return 255
    if action == "DOWN":
        pointer.down = (pts[0], pts[1])
    elif action == "UP" and pointer.down is not None:
        x1, y1 = pointer.down
        pointer.down = None
        gesture(session, x1, y1, pts[0], pts[1], DEFAULT_SWIPE_MS, drag=False)
    elif action == "CANCEL":
        pointer.down = None
    return 0


@command("monkey")
def monkey(session: Session, argv: list[str], io: IO) -> int:
    """monkey -p PKG [-c CATEGORY] [-s SEED] [--throttle MS] [-v] COUNT.

    The first event launches the package; further events are taps at random points
    (seeded by ``-s``), as monkey's touch events are.
    """
    args = argv[1:]
    for arg in args:
        io.print(f"  bash arg: {arg}")
    io.print("args: [" + ", ".join(args) + "]")
    for arg in args:
        io.print(f' arg: "{arg}"')
    packages: list[str] = []
    seed = 0
    count = 0
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-p", "-c", "-s", "--throttle", "--pct-touch", "--pct-motion") and i + 1 < len(
            args
        ):
            if arg == "-p":
                packages.append(args[i + 1])
            if arg == "-s":
                seed = int(args[i + 1]) if args[i + 1].lstrip("-").isdigit() else 0
            io.print(f'data="{args[i + 1]}"')
            i += 2
            continue
        if re.fullmatch(r"\d+", arg):
            count = int(arg)
        i += 1
    launchable = [p for p in packages if app_of(p) is not None]
    if not launchable or not all(installed(p) for p in packages):
        io.error("** No activities found to run, monkey aborted.")
        return 251
    if count < 1:
        io.error("** Error: Count not specified")
        return 1
    session.act(Action(action_type="open_app", app_name=launchable[0]))
    rng = random.Random(seed)
    for _ in range(count - 1):
        x, y = rng.randrange(session.phone.width), rng.randrange(session.phone.height)
        session.act(Action(action_type="click", x=x, y=y))
    io.print(f"Events injected: {count}")
    io.print("## Network stats: elapsed time=11ms (0ms mobile, 0ms wifi, 11ms not connected)")
    return 0
