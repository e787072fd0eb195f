"""``logcat``: the phone's events, as our helper app logs them on a real device.

Every event of the phone's log is one line with tag ``GhostEI`` at priority I, whose message is
the event as JSON ``{"kind":…,"package":…,"data":{…},"seq":…}``; the line's time is the event's
and its pid the acting package's. The default format is API 34's ``threadtime``::

    05-12 09:41:03.000  4123  4123 I GhostEI : {"kind":"tap","package":"…","data":{…},"seq":3}

preceded, when anything is printed, by ``--------- beginning of main``. ``logcat -c`` clears
the buffer: later dumps show only newer events. The served phone cannot stream, so ``logcat``
without ``-d`` dumps too. Also: ``-s``, filter specs (``GhostEI:I *:S``), ``-v brief|process|
tag|raw|time|threadtime``, ``-t N``, ``-m N``, ``-e REGEX``, ``--pid``, ``-b``, ``-g``.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

from ..events import Event, EventLog
from .commands import IO, Session, UsageError, command
from .packages import pid

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


def line(event: Event, fmt: str, fallback_time: str) -> str:
    """One log line in a ``-v`` format."""
    moment = datetime.fromisoformat(event.time or fallback_time)
    stamp = moment.strftime("%m-%d %H:%M:%S.000")
    proc = pid(event.package)
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
    events = buffer.events(log)
    if not _visible(specs, "-s" in flags):
        events = []
    if "-e" in values:
        pattern = re.compile(values["-e"])
        events = [e for e in events if pattern.search(message(e))]
    if "--pid" in values:
        events = [e for e in events if str(pid(e.package)) == values["--pid"]]
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
    for event in events:
        io.print(line(event, fmt, now))
    return 0
