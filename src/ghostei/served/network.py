"""The served phone's network: the one place its browser reaches a server outside the phone.

On a real emulator the overlay helper's broadcast carries ``served_url``, where the host's
loopback phishing server serves the overlay's page (``weburl``), and Chrome loads the page from
there: the server records the visit, the keystroke beacons of the page's script and the
submission. The simulated Chrome shows the page from the phone's own world and only logs these
as events, which a stock device does not report. So the served phone's network does what the
real browser's requests do: the helper's broadcast gives it a route (case URL -> served URL),
and it watches the phone's event log for Chrome's

- ``page_loaded`` of a routed URL: ``GET`` the served URL;
- ``text_typed`` into a field of a routed page: the page script's beacon, ``POST`` to the
  served URL with ``typed=1`` and ``field=<name>&value=<value>`` (see :func:`..phish.beacon_url`);
- ``form_submitted`` of a routed page: ``POST`` every field of the page's form to the served
  URL (``application/x-www-form-urlencoded``, empty fields included, as a browser sends them).

Pages the world does not have are fetched from the host: when Chrome opens an ``http(s)`` URL
on the host (``10.0.2.2``, the emulator's alias for the host's loopback, or a loopback
address), :meth:`PhoneNetwork.fetch_page` GETs it and reads it as a plain HTML page
(:mod:`.html_page`), which Chrome then shows as a page of its own: typing into its fields is the
phone's ``text_typed`` events with the page's URL, and submitting its form is a
``form_submitted`` event and the browser's request, the form's fields sent to its ``action``
(``POST`` as ``application/x-www-form-urlencoded``, or a ``GET`` with them as the query). The
paper's harness serves its overlay's page this way (``weburl=http://10.0.2.2:8000``). A page
is ``phishing`` when it comes from the server an overlay named (the same scheme, host and
port as an overlay's ``weburl``): the attacker's own page.

Requests run while the phone handles the input that caused them, so the server has recorded
them when the adb command returns, in the order the phone made them. They reach the host's
loopback only: the emulator's host alias ``10.0.2.2`` is ``127.0.0.1`` here (the served phone
runs on the host), and any other address is unreachable, as it is for an emulator without
internet. Each request has a short timeout; a failure is kept in :attr:`PhoneNetwork.failures`
and never breaks the phone (a real browser shows an error page and carries on). The direct
simulator has no network at all: this lives in the served phone only.
"""

from __future__ import annotations

import codecs
import http.client
import ipaddress
import re
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlencode, urljoin, urlsplit

from ..android import web
from ..android.phish import CHROME_PACKAGE, EMULATOR_HOST_ALIAS, beacon_url
from ..android.web import ChromeFlags, parse_chrome_flags
from ..events import Event, EventLog
from ..sim.phone import SimPhone
from ..world import WebPage
from .html_page import HtmlPage, parse_page
from .vfs import PhoneFS

DEFAULT_TIMEOUT = 2.0  # seconds per request: a loopback server answers in milliseconds
HOST_ALIASES: Mapping[str, str] = {EMULATOR_HOST_ALIAS: "127.0.0.1"}
# What the API-34 emulator image's Chrome sends.
USER_AGENT = (
    "Mozilla/5.0 (Linux; Android 14; sdk_gphone64_x86_64) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/113.0.5672.136 Mobile Safari/537.36"
)
FORM_TYPE = "application/x-www-form-urlencoded"
NAVIGATION_ACCEPT = (
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
)
MAX_PAGE_BYTES = 2_000_000  # a page larger than this is not read further
MAX_REDIRECTS = 5


@dataclass(frozen=True)
class NetworkFailure:
    """A request that did not reach its server (or that the server refused)."""

    method: str
    url: str
    reason: str


class PhoneNetwork:
    """How one served phone's browser reaches servers: routes from the helper, requests out."""

    def __init__(
        self,
        phone: SimPhone,
        *,
        fs: PhoneFS | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        host_aliases: Mapping[str, str] = HOST_ALIASES,
    ) -> None:
        self.phone = phone
        self.fs = fs  # where Chrome's flags file is (None: Chrome has no flags)
        self.timeout = timeout
        self.host_aliases = dict(host_aliases)
        # Chrome's flags, read when the running Chrome started: (that Chrome, its flags).
        self._chrome: tuple[object, ChromeFlags] | None = None
        self.failures: list[NetworkFailure] = []
        self._routes: dict[str, str] = {}  # case URL -> served URL
        self._log: EventLog | None = None  # the phone's log the routes belong to
        self._delivered: set[int] = set()  # seqs of events a server received
        self._pages: dict[str, HtmlPage] = {}  # URL -> the host's page Chrome last loaded
        self._attackers: set[str] = set()  # origins of the pages overlays named
        phone.web_fetch = self.fetch_page  # Chrome asks the network for pages off the world

    def route(self, url: str, served_url: str) -> None:
        """Chrome loads ``url`` from ``served_url`` (the helper's broadcast said so)."""
        self.watch()
        self._routes[url] = served_url

    def served_url(self, url: str) -> str | None:
        """Where ``url`` is loaded from in the phone's present OS, or None if from nowhere."""
        return self._routes.get(url) if self._log is self.phone.events else None

    def delivered(self, events: Iterable[Event]) -> set[int]:
        """The seqs of ``events`` (of the phone's present log) that reached a server."""
        if self._log is not self.phone.events:
            return set()
        return {e.seq for e in events if e.seq in self._delivered}

    def watch(self) -> None:
        """Follow the phone's present log (the shell calls this before every command)."""
        log = self.phone.events
        if log is self._log:
            return
        # A new log is a fresh OS (a snapshot load): Chrome remembers no route of the old one,
        # and the old log gets no more events, so its subscription simply goes quiet.
        self._log = log
        self._routes = {}
        self._delivered = set()
        self._pages = {}
        self._attackers = set()
        log.subscribe(self._on_event)

    def overlay_named(self, url: str) -> None:
        """An overlay's page is ``url``: pages from its server are the attacker's."""
        self.watch()
        origin = _origin(url)
        if origin:
            self._attackers.add(origin)

    def host_page(self, url: str) -> HtmlPage | None:
        """The page from the host Chrome last loaded at ``url`` in the present OS, or None."""
        return self._pages.get(url) if self._log is self.phone.events else None

    def fetch_page(self, url: str) -> WebPage | None:
        """Load ``url`` from the host, as Chrome does when it opens it: the page it serves,
        or None when ``url`` is not on the host (or the host does not answer with a page:
        a failure is kept, and Chrome shows it cannot reach the site)."""
        self.watch()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not _on_host(
            self.host_aliases.get(parts.hostname or "", parts.hostname or "")
        ):
            return None
        got = self._exchange("GET", url)
        if got is None:
            return None
        status, content_type, body, final = got
        if status >= 400 or "html" not in content_type.lower():
            reason = f"HTTP {status}" if status >= 400 else f"not a page ({content_type})"
            self.failures.append(NetworkFailure("GET", url, reason))
            return None
        charset = _charset(content_type)
        page = parse_page(final, body.decode(charset, "replace"))
        page.url = url  # the page is where Chrome opened it (a redirect's target is not shown)
        self._pages[url] = page
        return page.web_page(phishing=_origin(url) in self._attackers)

    def _on_event(self, event: Event) -> None:
        if event.package != CHROME_PACKAGE or self._log is not self.phone.events:
            return
        url = str(event.data.get("url", ""))
        page = self._pages.get(url)
        if page is not None and url not in self._routes:
            if event.kind == "form_submitted" and page.has_form:
                self._submit(page, event)
            return
        served = self._routes.get(url)
        host = ""
        if served is None:
            served, host = self._resolved(url)
        if served is None:
            return
        ok = False
        if event.kind == "page_loaded":
            ok = self._request("GET", served, named=host, dest="document")
        elif event.kind == "text_typed":
            body = urlencode(
                {"field": event.data.get("field", ""), "value": event.data.get("value", "")}
            )
            ok = self._request("POST", beacon_url(served), body, named=host, dest="empty")
        elif event.kind == "form_submitted":
            body = urlencode(self._form(url, event))
            ok = self._request("POST", served, body, named=host, dest="document")
        if ok:
            self._delivered.add(event.seq)

    def _submit(self, page: HtmlPage, event: Event) -> None:
        """Send a host page's form as the browser does: to its action, by its method."""
        raw = event.data.get("fields", {})
        values = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
        body = urlencode(page.submission(values))
        if page.method == "POST":
            ok = self._request("POST", page.action, body)
        else:
            ok = self._request("GET", page.action.split("#", 1)[0].split("?", 1)[0] + "?" + body)
        if ok:
            self._delivered.add(event.seq)

    def chrome_flags(self) -> ChromeFlags:
        """The flags the running Chrome started with: read from the flags file when this
        Chrome started (a force-stopped one reads it again when it comes back). Chrome
        reads the file because the image is debuggable, as the Google APIs images are."""
        chrome = self.phone.apps.get("Chrome")
        if chrome is None:
            return ChromeFlags()
        if self._chrome is None or self._chrome[0] is not chrome:
            raw = self.fs.read(web.FLAGS_FILE) if self.fs is not None else None
            flags = parse_chrome_flags(raw.decode("utf-8", "replace")) if raw else ChromeFlags()
            self._chrome = (chrome, flags)
        return self._chrome[1]

    def _resolved(self, url: str) -> tuple[str | None, str]:
        """Where Chrome's host-resolver rules send ``url`` (the URL asked of the server and
        the ``Host`` it names), or None when they leave it to the internet."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return None, ""
        flags = self.chrome_flags()
        target = flags.resolve(parts.hostname)
        if target is None:
            return None, ""
        if parts.scheme == "https" and not flags.ignore_certificate_errors:
            # The server's certificate names no real host: Chrome shows its warning page.
            self.failures.append(NetworkFailure("GET", url, "certificate not trusted"))
            return None, ""
        address, port = target
        port = port or parts.port or (443 if parts.scheme == "https" else 80)
        rest = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return f"{parts.scheme}://{address}:{port}{rest}", parts.netloc

    def _form(self, url: str, event: Event) -> list[tuple[str, str]]:
        """Every field of the page's form in page order, as a browser submits it."""
        raw = event.data.get("fields", {})
        values = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
        page = self.phone.world.page(url)
        names = [f.name for f in page.form] if page is not None else list(values)
        return [(name, values.get(name, "")) for name in names]

    def _request(
        self,
        method: str,
        url: str,
        body: str | None = None,
        *,
        named: str = "",
        dest: str = "document",
    ) -> bool:
        """Send one request as Chrome does (``dest``: a tab's page, or ``empty`` for a
        script's); ``named`` is the ``Host`` it names when the address was resolved for it.
        True when the server took it (2xx/3xx), else a failure is kept."""
        got = self._exchange(method, url, body, named=named, dest=dest, follow=False)
        if got is None:
            return False
        if got[0] >= 400:
            self.failures.append(NetworkFailure(method, url, f"HTTP {got[0]}"))
            return False
        return True

    def _exchange(
        self,
        method: str,
        url: str,
        body: str | None = None,
        *,
        named: str = "",
        dest: str = "document",
        follow: bool = True,
    ) -> tuple[int, str, bytes, str] | None:
        """One request (and, with ``follow``, the redirects of a GET): the status, content
        type, body (up to :data:`MAX_PAGE_BYTES`) and final URL, or None (a failure kept)
        when no server answered."""
        for _ in range(MAX_REDIRECTS + 1):
            got = self._once(method, url, body, named=named, dest=dest)
            if got is None:
                return None
            status, content_type, data, location = got
            if not (follow and method == "GET" and status in (301, 302, 303, 307, 308)):
                return status, content_type, data, url
            if not location:
                return status, content_type, data, url
            url = urljoin(url, location)
            named = ""
        self.failures.append(NetworkFailure(method, url, "too many redirects"))
        return None

    def _once(
        self, method: str, url: str, body: str | None, *, named: str, dest: str
    ) -> tuple[int, str, bytes, str] | None:
        """One HTTP exchange: status, content type, body and ``Location``; None on failure."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        target = self.host_aliases.get(host, host)
        reason = _unreachable(parts.scheme, target)
        if reason:
            self.failures.append(NetworkFailure(method, url, reason))
            return None
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        # The Host header names the server as the page's URL does (10.0.2.2:PORT, or the
        # page's own host when the rules resolved it), with Chrome's fetch metadata.
        headers = {
            "Host": named or parts.netloc,
            "User-Agent": USER_AGENT,
            "Accept": NAVIGATION_ACCEPT if dest == "document" else "*/*",
            "Sec-Fetch-Dest": dest,
            "Sec-Fetch-Mode": "navigate" if dest == "document" else "no-cors",
        }
        data = body.encode("utf-8") if body is not None else None
        if data is not None:
            headers["Content-Type"] = FORM_TYPE
        conn: http.client.HTTPConnection
        if parts.scheme == "https":
            # Only a resolved host's requests are TLS here, and Chrome was told to accept
            # the server's certificate (--ignore-certificate-errors).
            unverified = ssl.create_default_context()
            unverified.check_hostname = False
            unverified.verify_mode = ssl.CERT_NONE
            conn = http.client.HTTPSConnection(
                target, parts.port, timeout=self.timeout, context=unverified
            )
        else:
            conn = http.client.HTTPConnection(target, parts.port, timeout=self.timeout)
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            content = response.read(MAX_PAGE_BYTES)
            status = response.status
            content_type = response.getheader("Content-Type", "") or ""
            location = response.getheader("Location", "") or ""
        except (OSError, http.client.HTTPException) as exc:
            self.failures.append(NetworkFailure(method, url, f"{type(exc).__name__}: {exc}"))
            return None
        finally:
            conn.close()
        return status, content_type, content, location


def _origin(url: str) -> str:
    """A URL's scheme, host and port (the default port named), or '' if it has no host."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return ""
    return f"{parts.scheme}://{parts.hostname.lower()}:{port}"


def _on_host(host: str) -> bool:
    """Whether ``host`` (aliases resolved) is the host's loopback."""
    return bool(host) and not _unreachable("http", host)


def _charset(content_type: str) -> str:
    """The charset a Content-Type names (UTF-8 unless it names a known one)."""
    found = re.search(r"charset=([\w-]+)", content_type, re.IGNORECASE)
    if found:
        try:
            codecs.lookup(found.group(1))
            return found.group(1)
        except LookupError:
            pass
    return "utf-8"


def _unreachable(scheme: str, host: str) -> str:
    """Why the phone cannot reach ``host`` ('' if it can): the host's loopback only."""
    if scheme not in ("http", "https"):
        return f"unsupported scheme {scheme!r}"
    if host == "localhost":
        return ""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    return "" if loopback else f"{host} is unreachable: the phone reaches only the host"
