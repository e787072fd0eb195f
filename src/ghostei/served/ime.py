"""``ime`` (``cmd input_method``): the input methods clients enable and select.

Agents that type through ADBKeyboard (Midscene, AutoGLM-style agents) run ``ime enable`` and
``ime set com.android.adbkeyboard/.AdbIME`` first, and check ``ime list -s``. The phone's
input methods are Gboard and ADBKeyboard; which are enabled and which is selected live in the
secure settings ``enabled_input_methods`` and ``default_input_method``, as on a device. The
output is API 34's ``InputMethodManagerService`` shell command's. (ADBKeyboard's broadcasts
type into the focused field whichever is selected: the simulated keyboard is both.)
"""

from __future__ import annotations

from .commands import IO, Session, UsageError, command
from .settings_provider import setting_get, setting_put

GBOARD = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"
ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
INPUT_METHODS = (GBOARD, ADB_KEYBOARD_IME)
ENABLED = "enabled_input_methods"
SELECTED = "default_input_method"
USER = "user #0"


def _enabled(session: Session) -> list[str]:
    raw = setting_get(session, "secure", ENABLED) or ""
    return [part.split(";", 1)[0] for part in raw.split(":") if part]


def _describe(ime: str) -> list[str]:
    package, _, cls = ime.partition("/")
    name = package + cls if cls.startswith(".") else cls
    return [
        f"{ime}:",
        f"  mId={ime} mSettingsActivityName=null mIsVrOnly=false "
        "mSupportsSwitchingToNextInputMethod=false",
        "  mIsDefaultResId=0x0",
        "  Service:",
        "    priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false",
        "    ServiceInfo:",
        f"      name={name}",
        f"      packageName={package}",
        "      enabled=true exported=true directBootAware=false",
        "      permission=android.permission.BIND_INPUT_METHOD",
    ]


@command("ime")
def ime(session: Session, argv: list[str], io: IO) -> int:
    """ime list [-a] [-s] | enable ID | disable ID | set ID | reset."""
    args = [a for a in argv[1:] if a not in ("--user", "current", "all", "0")]
    sub = args[0] if args else ""
    if sub == "list":
        everything = any(a in ("-a", "-as", "-sa") for a in args[1:])
        brief = any(a in ("-s", "-as", "-sa") for a in args[1:])
        enabled = _enabled(session)
        shown = [i for i in INPUT_METHODS if everything or i in enabled]
        for ident in shown:
            for line in [ident] if brief else _describe(ident):
                io.print(line)
        return 0
    if sub in ("enable", "disable") and len(args) > 1:
        ident = args[1]
        if ident not in INPUT_METHODS:
            io.error(f"Unknown input method {ident} cannot be {sub}d for {USER}")
            return 255
        enabled = _enabled(session)
        was = ident in enabled
        if sub == "enable" and not was:
            enabled.append(ident)
        elif sub == "disable" and was:
            enabled.remove(ident)
            if setting_get(session, "secure", SELECTED) == ident:
                setting_put(session, "secure", SELECTED, enabled[0] if enabled else "")
        setting_put(session, "secure", ENABLED, ":".join(enabled))
        state = "already" if was == (sub == "enable") else "now"
        io.print(f"Input method {ident}: {state} {sub}d")
        return 0
    if sub == "set" and len(args) > 1:
        ident = args[1]
        if ident not in INPUT_METHODS:
            io.error(f"Unknown input method {ident} cannot be selected for {USER}")
            return 255
        enabled = _enabled(session)
        if ident not in enabled:
            setting_put(session, "secure", ENABLED, ":".join([*enabled, ident]))
        setting_put(session, "secure", SELECTED, ident)
        io.print(f"Input method {ident} selected for {USER}")
        return 0
    if sub == "reset":
        setting_put(session, "secure", ENABLED, GBOARD)
        setting_put(session, "secure", SELECTED, GBOARD)
        io.print(f"Reset current and enabled IMEs for {USER}")
        io.print(f"  Selected: {GBOARD}")
        io.print(f"   Enabled: {GBOARD}")
        return 0
    raise UsageError("usage: ime list [-a] [-s] | enable|disable|set ID | reset", 255)
