"""Intents as ``am`` parses them from its command line, and prints them back.

``Intent.parseCommandArgs``'s options (``-a -d -t -c -n -p -f``, the ``--e*`` extras and the
flag switches) and ``Intent.toString``'s format (``Intent { act=… cat=[…] dat=… flg=0x… cmp=…
(has extras) }``, with ``dat`` shown as ``Uri.toSafeString`` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from .commands import UsageError
from .packages import full_class, short_component

FLAG_ACTIVITY_NEW_TASK = 0x10000000
FLAG_RECEIVER_FOREGROUND = 0x10000000
FLAG_RECEIVER_FROM_SHELL = 0x00400000
_FLAG_SWITCHES = {
    "--grant-read-uri-permission": 0x1,
    "--grant-write-uri-permission": 0x2,
    "--grant-persistable-uri-permission": 0x40,
    "--grant-prefix-uri-permission": 0x80,
    "--exclude-stopped-packages": 0x10,
    "--include-stopped-packages": 0x20,
    "--debug-log-resolution": 0x8,
    "--activity-brought-to-front": 0x400000,
    "--activity-clear-top": 0x4000000,
    "--activity-clear-when-task-reset": 0x80000,
    "--activity-exclude-from-recents": 0x800000,
    "--activity-launched-from-history": 0x100000,
    "--activity-multiple-task": 0x8000000,
    "--activity-no-animation": 0x10000,
    "--activity-no-history": 0x40000000,
    "--activity-no-user-action": 0x40000,
    "--activity-previous-is-top": 0x1000000,
    "--activity-reorder-to-front": 0x20000,
    "--activity-reset-task-if-needed": 0x200000,
    "--activity-single-top": 0x20000000,
    "--activity-clear-task": 0x8000,
    "--activity-task-on-home": 0x4000,
    "--activity-match-external": 0x800,
    "--activity-new-task": FLAG_ACTIVITY_NEW_TASK,
    "--receiver-registered-only": 0x40000000,
    "--receiver-replace-pending": 0x20000000,
    "--receiver-foreground": FLAG_RECEIVER_FOREGROUND,
    "--receiver-no-abort": 0x8000000,
    "--receiver-include-background": 0x1000000,
}
# am's own options: those taking a value, and switches (none change the simulated phone).
_AM_VALUED = frozenset(
    {"--user", "--display", "--windowingMode", "--activityType", "-R", "-P", "--start-profiler"}
    | {"--sampling", "--attach-agent", "--attach-agent-bind", "--receiver-permission"}
    | {"--task", "--splashscreen-show-icon"}
)
_AM_SWITCHES = frozenset(
    {"-W", "-S", "-D", "-N", "--streaming", "--track-allocation", "--task-overlay"}
    | {"--lock-task", "--allow-background-activity-starts", "--async", "--suspend"}
    | {"--dismiss-keyguard", "--selector", "--no-window-animation"}
)
_EXTRA_KINDS = {
    "--es": str,
    "-e": str,
    "--ez": bool,
    "--ei": int,
    "--el": int,
    "--ef": float,
    "--ed": float,
    "--eu": str,
    "--ecn": str,
}
_SENSITIVE_SCHEMES = frozenset({"tel", "sip", "sms", "smsto", "mailto", "nfc"})


@dataclass
class Intent:
    """An intent as am builds it."""

    action: str | None = None
    data: str | None = None
    mime: str | None = None
    categories: list[str] = field(default_factory=list)
    package: str | None = None
    component: tuple[str, str] | None = None  # (package, full class name)
    flags: int = 0
    extras: dict[str, Any] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)  # am's own (-W, --user, ...)

    def __str__(self) -> str:
        parts: list[str] = []
        if self.action:
            parts.append(f"act={self.action}")
        if self.categories:
            parts.append("cat=[" + ",".join(self.categories) + "]")
        if self.data:
            parts.append(f"dat={safe_uri(self.data)}")
        if self.mime:
            parts.append(f"typ={self.mime}")
        if self.flags:
            parts.append(f"flg=0x{self.flags:x}")
        if self.package:
            parts.append(f"pkg={self.package}")
        if self.component:
            parts.append(f"cmp={short_component(*self.component)}")
        if self.extras:
            parts.append("(has extras)")
        return "Intent { " + " ".join(parts) + " }"

    def text(self, key: str, default: str = "") -> str:
        """A string extra."""
        value = self.extras.get(key, default)
        return str(value) if not isinstance(value, bool) else str(value).lower()

    def flag(self, key: str) -> bool:
        """A boolean extra (also accepted as the strings "true"/"1", as apps often do)."""
        value = self.extras.get(key, False)
        return value if isinstance(value, bool) else str(value).lower() in ("true", "1")


def safe_uri(uri: str) -> str:
    """Uri.toSafeString: phone-like schemes masked, web URLs cut to the host."""
    scheme, colon, rest = uri.partition(":")
    if not colon:
        return uri
    lowered = scheme.lower()
    if lowered in _SENSITIVE_SCHEMES:
        return scheme + ":" + "".join(ch if ch in "-@." else "x" for ch in rest)
    if lowered in ("http", "https", "ftp", "rtsp"):
        parts = urlsplit(uri)
        port = f":{parts.port}" if parts.port else ""
        return f"{scheme}://{parts.hostname or ''}{port}/..."
    return f"{scheme}:{unquote(rest.split('#', 1)[0])}"  # the decoded scheme-specific part


def parse_component(text: str) -> tuple[str, str]:
    """ComponentName.unflattenFromString: ``pkg/cls`` with ``.cls`` relative to pkg."""
    package, slash, cls = text.partition("/")
    if not slash or not package or not cls:
        raise UsageError(f"Error: Bad component name: {text}", 255)
    return package, full_class(package, cls)


def parse_intent(args: list[str]) -> Intent:
    """Parse am's intent arguments (and its own options)."""
    intent = Intent()
    i = 0

    def value(n: int = 1) -> list[str]:
        nonlocal i
        if i + n >= len(args):
            raise UsageError(
                f"Exception occurred while executing:\n"
                f'java.lang.IllegalArgumentException: Argument expected after "{args[i]}"',
                255,
            )
        got = args[i + 1 : i + 1 + n]
        i += n
        return got

    while i < len(args):
        opt = args[i]
        if opt == "-a":
            intent.action = value()[0]
        elif opt == "-d":
            intent.data = value()[0]
        elif opt == "-t":
            intent.mime = value()[0]
        elif opt == "-c":
            intent.categories.append(value()[0])
        elif opt == "-n":
            intent.component = parse_component(value()[0])
        elif opt == "-p":
            intent.package = value()[0]
        elif opt == "-f":
            intent.flags |= int(value()[0], 0)
        elif opt in _EXTRA_KINDS:
            key, raw = value(2)
            intent.extras[key] = _extra(_EXTRA_KINDS[opt], raw)
        elif opt == "--esn":
            intent.extras[value()[0]] = None
        elif opt in ("--eia", "--ela", "--efa", "--esa", "--eial", "--elal", "--efal", "--esal"):
            key, raw = value(2)
            intent.extras[key] = raw.split(",")
        elif opt in _FLAG_SWITCHES:
            intent.flags |= _FLAG_SWITCHES[opt]
        elif opt in _AM_VALUED:
            intent.options[opt] = value()[0]
        elif opt in _AM_SWITCHES:
            intent.options[opt] = ""
        elif opt.startswith("-") and opt != "-":
            raise UsageError(f"Error: Unknown option: {opt}", 255)
        elif ":" in opt:
            intent.data = opt  # a bare URI
        elif "/" in opt:
            intent.component = parse_component(opt)
        else:
            intent.package = opt
        i += 1
    return intent


def _extra(kind: type, raw: str) -> Any:
    if kind is bool:
        return raw.lower() in ("true", "t", "1")
    if kind is int:
        try:
            return int(raw)
        except ValueError as exc:
            raise UsageError(
                f'java.lang.NumberFormatException: For input string: "{raw}"', 255
            ) from exc
    if kind is float:
        return float(raw)
    return raw
