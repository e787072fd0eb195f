"""``logcat``: the phone's events, as our helper app logs them on a real device.

A stock emulator with our helper app logs only the helper's own events under tag ``GhostEI``
(:data:`ghostei.android.events.HELPER_EVENTS`: the overlays it draws and the answers to them,
with the keys the helper sends), and so does the served phone by default: one line per such
event, at priority I, from the helper's process. With ``full_events`` (``ghostei device serve
--full-events``, for debugging) every event of the phone's log is a line, from the acting
package's process, except those the phone's network already delivered to a server (a
phishing page's visit, typing and submission): the host hears of those from the server, and
must not hear twice. The message is the event as JSON
``{"kind":…,"package":…,"data":{…},"seq":…}`` (``seq`` is the event's place in the phone's
log) and the line's time the event's. The default format is API 34's ``threadtime``::

    05-12 09:41:03.000  4123  4123 I GhostEI : {"kind":"tap","package":"…","data":{…},"seq":3}

preceded, when anything is printed, by ``--------- beginning of main``. ``logcat -c`` clears
the buffer: later dumps show only newer events. The served phone cannot stream, so ``logcat``
without ``-d`` dumps too. Also: ``-s``, filter specs (``GhostEI:I *:S``), ``-v brief|process|
tag|raw|time|threadtime``, ``-t N``, ``-m N``, ``-e REGEX``, ``--pid``, ``-b``, ``-g``.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import datetime

from ..android.events import helper_report
from ..android.helper import HELPER_PACKAGE, SPEAK_PASSWORD
from ..events import Event, EventLog
from .commands import IO, Session, UsageError, command
from .packages import pid
from .settings_provider import setting_get

TAG = "GhostEI"
PRIORITIES = "VDIWEFS"
_VALUED = frozenset({"-v", "-b", "-t", "-T", "-m", "-e", "--pid", "-f", "-r", "-n", "-G"})


class _Buffer:
    """Where ``logcat -c`` last cleared the log."""

    def __init__(self) -> None:
        self.log: EventLog | None = None
        self.mark = 0

    def events(self, log: EventLog) -> list[Event]:
        if self.log is not log or self.mark > len(log):
            self.log, self.mark = log, 0
        return [log[i] for i in range(self.mark, len(log))]

    def clear(self, log: EventLog) -> None:
        self.log, self.mark = log, len(log)


def message(event: Event) -> str:
    """The JSON an event is logged as."""
    body = {"kind": event.kind, "package": event.package, "data": event.data, "seq": event.seq}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str)


def reported(events: list[Event], session: Session) -> list[tuple[Event, int]]:
    """The events the phone logs, each as logged, with the pid of the process that logs it."""
    device = session.device
    if device.full_events:
        delivered = device.network.delivered(events) if device.network is not None else set()
        return [(e, pid(e.package)) for e in events if e.seq not in delivered]
    lines: list[tuple[Event, int]] = []
    speaks = setting_get(session, "secure", SPEAK_PASSWORD) == "1"
    for event in events:
        data = helper_report(event.kind, event.data, event.package, speaks_passwords=speaks)
        if data is not None:
            # The helper app writes the line from its own process, whatever package it names.
            lines.append((replace(event, data=data), pid(HELPER_PACKAGE)))
    return lines


def line(event: Event, fmt: str, fallback_time: str, proc: int | None = None) -> str:
    """One log line in a ``-v`` format; ``proc`` is the logging pid (default: the package's)."""
    moment = datetime.fromisoformat(event.time or fallback_time)
    stamp = moment.strftime("%m-%d %H:%M:%S.000")
    proc = pid(event.package) if proc is None else proc
    text = message(event)
    if fmt == "brief":
        return f"I/{TAG:<8}({proc:5d}): {text}"
    if fmt == "process":
        return f"I({proc:5d}) {text}  ({TAG})"
    if fmt == "tag":
        return f"I/{TAG:<8}: {text}"
    if fmt == "raw":
        return text
    if fmt == "time":
        return f"{stamp} I/{TAG:<8}({proc:5d}): {text}"
    return f"{stamp} {proc:5d} {proc:5d} I {TAG:<8}: {text}"


def _visible(specs: list[tuple[str, str]], silent_default: bool) -> bool:
    level = "S" if silent_default else "V"
    for tag, prio in specs:
        if tag == "*":
            level = prio
    for tag, prio in specs:
        if tag == TAG:
            level = prio
    return PRIORITIES.index("I") >= PRIORITIES.index(level)


@command("logcat")
def logcat(session: Session, argv: list[str], io: IO) -> int:
    """logcat [-d] [-c] [-s] [-v FORMAT] [-t N] [FILTERSPEC...]."""
    args = argv[1:]
    flags: set[str] = set()
    values: dict[str, str] = {}
    specs: list[tuple[str, str]] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _VALUED:
            if i + 1 >= len(args):
                raise UsageError(f"logcat: option requires an argument -- {arg.lstrip('-')}", 1)
            values[arg] = args[i + 1]
            i += 2
            continue
        if arg.startswith("--"):
            name, _, value = arg.partition("=")
            if value:
                values[name] = value
            else:
                flags.add(name)
        elif arg.startswith("-") and len(arg) > 1:
            flags.update("-" + f for f in arg[1:])
        else:
            tag, _, prio = arg.partition(":")
            prio = (prio or "V").upper()[:1]
            if prio == "*":
                prio = "V"
            if prio not in PRIORITIES:
                raise UsageError(f'Invalid filter expression "{arg}"', 1)
            specs.append((tag, prio))
        i += 1
    buffer = session.device.slot(_Buffer)
    log = session.phone.events
    if "-c" in flags or "--clear" in flags:
        buffer.clear(log)
        return 0
    if "-g" in flags:
        io.print(
            "main: ring buffer is 256 KiB (0 B consumed), max entry is 5120 B, "
            "max payload is 4068 B"
        )
        return 0
    buffers = set(values.get("-b", "main").split(","))
    if not buffers & {"main", "all", "default"}:
        return 0
    events = reported(buffer.events(log), session)
    if not _visible(specs, "-s" in flags):
        events = []
    if "-e" in values:
        pattern = re.compile(values["-e"])
        events = [(e, p) for e, p in events if pattern.search(message(e))]
    if "--pid" in values:
        events = [(e, p) for e, p in events if str(p) == values["--pid"]]
    tail = values.get("-t") or values.get("-T")
    if tail is not None and tail.isdigit():
        events = events[-int(tail) :] if int(tail) else []
    if "-m" in values and values["-m"].isdigit():
        events = events[: int(values["-m"])]
    fmt = values.get("-v", "threadtime")
    if not events:
        return 0
    now = session.phone.now()
    io.print("--------- beginning of main")
    for event, proc in events:
        io.print(line(event, fmt, now, proc))
    return 0
