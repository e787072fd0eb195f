"""Chrome's road to the loopback web server: every host it asks for is answered by us.

A case's links name the attacker's real hosts (``https://usps-redelivery.info/pay``), which a
device cannot reach, so what happens there — a visit, typing, a submission — would be seen by
nobody. Chrome reads extra command-line flags from :data:`FLAGS_FILE` when it is the debug app
(``am set-debug-app --persistent com.android.chrome``, which setup does) or the image is
debuggable; with

    _ --host-resolver-rules="MAP * 10.0.2.2:PORT, EXCLUDE 10.0.2.2" --ignore-certificate-errors
      --disable-fre

it resolves every host name to the web server's routed port for the device's channel
(:meth:`.phish.PhishServer.routed_port`, plain HTTP and TLS) and accepts its certificate, so
the server sees each navigation to any of the world's pages with the page's own URL, however
the agent got there. Chrome reads the file when it starts: the backend writes it after every
snapshot load and restarts Chrome when it changed, and proves the road once per device by
sending Chrome to ``https://ghostei-probe.invalid/…`` and waiting for the server to hear it.
Until proven (or when a running Chrome in front could not be restarted), pages reached other
than through the phishing server's own address stay undetermined (:mod:`.observability`).
The served phone's Chrome reads the same file (:mod:`ghostei.served.network`).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from .console import console_port
from .phish import CHROME_PACKAGE, EMULATOR_HOST_ALIAS, PROBE_HOST, PhishServer
from .transport import AdbTransport

FLAGS_FILE = "/data/local/tmp/chrome-command-line"
RULES_FLAG = "--host-resolver-rules"
IGNORE_CERT_FLAG = "--ignore-certificate-errors"
NO_FIRST_RUN_FLAG = "--disable-fre"  # a Chrome never opened goes straight to the page
PROBE_TIMEOUT = 20.0  # seconds for a cold Chrome to start and load the probe
KEYCODE_HOME = 3


def server_host(adb: AdbTransport, serial: str, port: int) -> str:
    """The host name a device reaches the host's ``port`` at: an emulator the host's loopback
    as its alias; a USB device its own loopback, through ``adb reverse`` (raises AdbError)."""
    if console_port(serial) is not None:
        return EMULATOR_HOST_ALIAS
    adb.reverse(f"tcp:{port}", f"tcp:{port}")
    return "127.0.0.1"


def chrome_flags(host: str, port: int) -> str:
    """The flags file's line: every host name to ``host:port``, ``host`` itself excepted (the
    phishing server's own address, which the overlay helper opens)."""
    rules = f"MAP * {host}:{port}, EXCLUDE {host}"
    return f'_ {RULES_FLAG}="{rules}" {IGNORE_CERT_FLAG} {NO_FIRST_RUN_FLAG}'


@dataclass(frozen=True)
class ChromeFlags:
    """What a flags file tells Chrome about the network."""

    maps: tuple[tuple[str, str], ...] = ()  # (host pattern, replacement host[:port])
    excluded: tuple[str, ...] = ()
    ignore_certificate_errors: bool = False
    other: tuple[str, ...] = field(default=())

    def resolve(self, host: str) -> tuple[str, int | None] | None:
        """Where a request for ``host`` goes instead (host and port; None: where it says)."""
        if any(_matches(pattern, host) for pattern in self.excluded):
            return None
        for pattern, replacement in self.maps:
            if _matches(pattern, host):
                target, sep, port = replacement.rpartition(":")
                if sep and port.isdigit():
                    return target.strip("[]"), int(port)
                return replacement.strip("[]"), None
        return None


def parse_chrome_flags(text: str) -> ChromeFlags:
    """The flags of a flags file (its first word is the program's name, ignored)."""
    try:
        words = shlex.split(text)[1:]
    except ValueError:
        return ChromeFlags()
    maps: list[tuple[str, str]] = []
    excluded: list[str] = []
    ignore = False
    other: list[str] = []
    for word in words:
        name, _, value = word.partition("=")
        if name == RULES_FLAG:
            for rule in value.split(","):
                parts = rule.split()
                if len(parts) == 3 and parts[0].upper() == "MAP":
                    maps.append((parts[1], parts[2]))
                elif len(parts) == 2 and parts[0].upper() == "EXCLUDE":
                    excluded.append(parts[1])
        elif name == IGNORE_CERT_FLAG:
            ignore = True
        else:
            other.append(word)
    return ChromeFlags(tuple(maps), tuple(excluded), ignore, tuple(other))


def _matches(pattern: str, host: str) -> bool:
    return fnmatchcase(host.lower(), pattern.lower())


@dataclass
class ChromeRoad:
    """One device's Chrome and the web server's routed port for its channel."""

    adb: AdbTransport
    server: PhishServer
    channel: str
    host: str  # the server's host as the device reaches it (10.0.2.2 from an emulator)
    foreground: Callable[[], str]  # the package in front

    @property
    def flags(self) -> str:
        return chrome_flags(self.host, self.server.routed_port(self.channel))

    def point(self, *, restart: bool = False) -> bool:
        """Write Chrome's flags; whether its navigations reach the server from now on.
        Chrome reads them when it starts: a running Chrome is restarted if they changed,
        unless it is in front (a restart would change the episode's first screen)."""
        wanted = self.flags
        out = self.adb.shell(f"cat {FLAGS_FILE} 2>/dev/null; echo {_SPLIT}; pidof {CHROME_PACKAGE}")
        current, _, running = out.partition(_SPLIT)
        if current.strip() == wanted and not restart:
            return True
        self.adb.shell(f"echo {shlex.quote(wanted)} > {FLAGS_FILE}")
        if not running.strip():
            return True
        if not restart and self.foreground() == CHROME_PACKAGE:
            return False
        self.adb.shell(f"am force-stop {CHROME_PACKAGE}")
        return True

    def prove(self, timeout: float = PROBE_TIMEOUT) -> bool:
        """Send a restarted Chrome to the probe host and wait for the server to hear it;
        Chrome is stopped and Home shown afterwards."""
        self.point(restart=True)
        path = f"/{self.channel.strip('/').replace('/', '-') or 'device'}"
        url = shlex.quote(f"https://{PROBE_HOST}{path}")
        self.adb.shell(f"am start -a android.intent.action.VIEW -d {url} {CHROME_PACKAGE}")
        deadline = time.monotonic() + timeout
        while not (heard := self.server.probed(self.channel, path)):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.adb.shell(f"am force-stop {CHROME_PACKAGE}; input keyevent {KEYCODE_HOME}")
        return heard


_SPLIT = "__GHOSTEI_FLAGS__"  # between the flags file and pidof in one round trip
