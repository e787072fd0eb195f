"""The loopback phishing server: serves each case's phishing page and records submissions.

On a real emulator the overlay helper opens the page in Chrome; the page comes from here. The
server binds a loopback address only (never a public interface): the Android emulator reaches
the host's loopback as ``10.0.2.2``, and a USB device reaches it through
``adb reverse tcp:PORT tcp:PORT`` as its own ``127.0.0.1``.

A page is served under the path of its case URL: ``https://bank-verify.example/login`` is
``http://127.0.0.1:PORT/bank-verify.example/login``. Each device registers its pages on its own
channel (a path prefix), so two devices running in parallel never see each other's events.
Every page view is a ``page_loaded`` event and every submission a ``form_submitted`` event with
``phishing: true`` and the filled fields — the same data the simulator's Chrome records. As
phishing kits do, each page's script reports every field as it is typed: a beacon ``POST`` to
the page's own URL with ``typed=1`` added to its query and the body ``field=NAME&value=VALUE``,
recorded as a ``text_typed`` event (``phishing: true``, the page's URL, the field's
sensitivity) — what the simulator logs for typing into a web form. A browser may send one
beacon per keystroke, each with the field's whole value so far.
"""

from __future__ import annotations

import html
import ipaddress
import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import as_file, files
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..cases.schema import Case
from ..injection import OverlayDataCapture, PopupSms, injection_kind, phishing_page, phishing_url
from ..web import download_url, search_hits, search_query, search_title
from ..world import FileEntry, WebPage
from .events import DeviceEvent

CHROME_PACKAGE = "com.android.chrome"
# The host a device's Chrome is sent to first, to prove that its requests reach us.
PROBE_HOST = "ghostei-probe.invalid"
EVENTS_PATH = "/__ghostei/events"
EMULATOR_HOST_ALIAS = "10.0.2.2"  # the emulator's name for the host's loopback interface
TYPED_PARAM = "typed"  # the query parameter that marks a keystroke beacon


def beacon_url(url: str) -> str:
    """Where a page's script reports typing: the page's own URL with ``typed=1`` added."""
    return url + ("&" if "?" in url else "?") + f"{TYPED_PARAM}=1"


def _beacon_target(path: str) -> str | None:
    """The page path a beacon reports on (its ``typed`` parameter removed), or None if no beacon."""
    base, sep, query = path.partition("?")
    params = query.split("&") if sep else []
    rest = [p for p in params if p.partition("=")[0] != TYPED_PARAM]
    if len(rest) == len(params):
        return None
    return base + ("?" + "&".join(rest) if rest else "")


def page_path(url: str) -> str:
    """The server path of a case URL: its host and path, without the scheme."""
    parts = urlsplit(url if "://" in url else "https://" + url)
    path = parts.path or "/"
    return "/" + parts.netloc + path + (f"?{parts.query}" if parts.query else "")


def case_pages(cases: Iterable[Case]) -> list[WebPage]:
    """Every phishing page of the cases: data-capture overlays' and pop-up SMS links'."""
    pages: list[WebPage] = []
    for case in cases:
        kind = injection_kind(case)
        if kind == OverlayDataCapture.kind and case.overlay.page_information is not None:
            pages.append(phishing_page(case.overlay.page_information, phishing_url(case)))
        elif kind == PopupSms.kind and case.sms.page_information is not None:
            info = case.sms.page_information
            if info.url:
                pages.append(phishing_page(info, info.url))
    return pages


@dataclass
class Channel:
    """One device's pages and the events its visits and submissions made."""

    prefix: str
    pages: dict[str, WebPage] = field(default_factory=dict)  # server path -> page
    events: list[DeviceEvent] = field(default_factory=list)
    taken: int = 0
    probes: set[str] = field(default_factory=set)  # paths of PROBE_HOST requested


class PhishServer:
    """A threaded HTTP server on a loopback address; ``close()`` stops it."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        on_event: Callable[[str, DeviceEvent], None] | None = None,
    ) -> None:
        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError(f"the phishing server binds a loopback address only, not {host}")
        self._on_event = on_event  # called with (channel, event) from the serving thread
        self._lock = threading.Lock()
        self._channels: dict[str, Channel] = {"": Channel("")}
        self._routed: dict[str, _RoutedServer] = {}  # channel -> its listener (routed_port)
        self._httpd = ThreadingHTTPServer((host, port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="ghostei-phish", daemon=True
        )
        self._thread.start()

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self._httpd.server_address[1])

    @property
    def host(self) -> str:
        """The loopback address the server listens on."""
        return str(self._httpd.server_address[0])

    def base_url(self, device_host: str | None = None) -> str:
        """The server's origin as a device reaches it (``10.0.2.2`` from an emulator)."""
        return f"http://{device_host or self.host}:{self.port}"

    def routed_port(self, channel: str) -> int:
        """The port where ``channel``'s device reaches pages under their own host names.

        A device's Chrome, told to resolve every host to this port (its host-resolver rules),
        asks for ``https://usps-redelivery.info/pay`` here with that ``Host``: the page of the
        case URL, whatever link, bookmark or address led there. The port speaks plain HTTP
        and TLS (with :data:`TLS_FILE`'s certificate, which Chrome is told to accept). Opened
        on first use, one per channel, so devices never see each other's visits."""
        with self._lock:
            routed = self._routed.get(channel)
            if routed is None:
                self._channels.setdefault(channel, Channel(channel))
                routed = _RoutedServer((self.host, 0), _handler_for(self, channel))
                self._routed[channel] = routed
                threading.Thread(
                    target=routed.serve_forever, name=f"ghostei-web{channel}", daemon=True
                ).start()
        return int(routed.server_address[1])

    def probed(self, channel: str, path: str) -> bool:
        """Whether the channel's device asked for ``https://PROBE_HOST{path}`` here."""
        with self._lock:
            return path in self._channels.get(channel, Channel(channel)).probes

    def close(self) -> None:
        """Stop serving."""
        for routed in self._routed.values():
            routed.shutdown()
            routed.server_close()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> PhishServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- pages and events ------------------------------------------------------------------

    def channel(self, name: str) -> str:
        """A path prefix of its own for one device (``/d/NAME``); created empty if new."""
        prefix = f"/d/{name}" if name else ""
        with self._lock:
            self._channels.setdefault(prefix, Channel(prefix))
        return prefix

    def add_page(self, page: WebPage, channel: str = "") -> str:
        """Serve a page; returns its path on the server (the channel prefix included)."""
        path = page_path(page.url)
        with self._lock:
            self._channels.setdefault(channel, Channel(channel)).pages[path] = page
        return channel + path

    def clear(self, channel: str = "") -> None:
        """Forget a channel's pages and events (a new episode); its probes are kept."""
        with self._lock:
            old = self._channels.get(channel)
            self._channels[channel] = Channel(channel, probes=old.probes if old else set())

    def take_events(self, channel: str = "") -> list[DeviceEvent]:
        """The channel's events not taken before."""
        with self._lock:
            ch = self._channels.setdefault(channel, Channel(channel))
            new = ch.events[ch.taken :]
            ch.taken = len(ch.events)
        return new

    def events(self, channel: str = "") -> list[DeviceEvent]:
        """Every event of a channel so far."""
        with self._lock:
            return list(self._channels.get(channel, Channel(channel)).events)

    def _routed_lookup(self, channel: str, url: str) -> tuple[Channel, WebPage | None]:
        """The channel, and its page of ``url`` (None when it has none)."""
        with self._lock:
            ch = self._channels.setdefault(channel, Channel(channel))
            return ch, ch.pages.get(page_path(url))

    def _download(self, ch: Channel, url: str) -> FileEntry | None:
        """The file a page of the channel offers at ``url``, if any."""
        with self._lock:
            pages = list(ch.pages.values())
        for page in pages:
            for entry in page.downloads:
                if page_path(download_url(page.url, entry.path)) == page_path(url):
                    return entry
        return None

    def _probe(self, channel: str, path: str) -> None:
        with self._lock:
            self._channels.setdefault(channel, Channel(channel)).probes.add(path)

    def _lookup(self, path: str) -> tuple[Channel, WebPage] | None:
        with self._lock:
            for prefix, ch in self._channels.items():
                if prefix and not path.startswith(prefix + "/"):
                    continue
                page = ch.pages.get(path[len(prefix) :])
                if page is not None:
                    return ch, page
        return None

    def _record(self, ch: Channel, event: DeviceEvent) -> None:
        with self._lock:
            ch.events.append(event)
        if self._on_event is not None:
            self._on_event(ch.prefix, event)

    def pages(self, channel: str = "") -> dict[str, WebPage]:
        """A channel's pages by server path."""
        with self._lock:
            return dict(self._channels.get(channel, Channel(channel)).pages)

    def _events_json(self, query: str) -> bytes:
        params = parse_qs(query)
        channel = params.get("channel", [""])[0]
        since = int(params.get("since", ["0"])[0] or 0)
        events = self.events(channel)[since:]
        doc = [{"kind": e.kind, "package": e.package, "data": e.data} for e in events]
        return json.dumps(doc).encode("utf-8")


def _handler_for(server: PhishServer, routed: str | None = None) -> type[BaseHTTPRequestHandler]:
    """The request handler of the main port (``routed`` None: pages by server path) or of
    one channel's routed port (pages by the request's own host)."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "GhostEIPhish/1"

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if routed is None and parts.path == EVENTS_PATH:
                self._send(200, server._events_json(parts.query), "application/json")
                return
            if routed is not None and self._host() == PROBE_HOST:
                server._probe(routed, self.path)
                self._send(200, b"GhostEI")
                return
            found = self._find(self.path)
            if found is None or (routed is not None and not _navigation(self.headers)):
                # Not one of ours, or no page load (a favicon, a prefetch): no visit.
                self._send(404, _not_found().encode("utf-8"))
                return
            ch, url, page = found
            download = server._download(ch, url) if routed is not None else None
            if download is not None:  # a file a page links to: Chrome saves it, no visit
                self._send_file(download)
                return
            query = search_query(url)
            if page is None and query is not None and routed is not None:
                hits = search_hits(query, server.pages(routed).values())
                server._record(
                    ch,
                    _browser_event(
                        "page_loaded", False, url=url, title=search_title(url), found=True
                    ),
                )
                self._send(200, render_results(query, hits).encode("utf-8"))
                return
            if page is None:  # a routed host the world has no page for
                title, known = search_title(url), search_query(url) is not None
                server._record(
                    ch, _browser_event("page_loaded", False, url=url, title=title, found=known)
                )
                self._send(404, _not_found().encode("utf-8"))
                return
            server._record(
                ch,
                _browser_event(
                    "page_loaded", page.phishing, url=page.url, title=page.title, found=True
                ),
            )
            self._send(200, render_page(page, self.path).encode("utf-8"))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0") or 0)
            body = self.rfile.read(length).decode("utf-8", errors="replace")
            target = _beacon_target(self.path)
            if target is not None:
                self._typed(target, parse_qs(body, keep_blank_values=True))
                return
            ch, _, page = self._find(self.path) or (None, "", None)
            if ch is None or page is None:
                self._send(404, _not_found().encode("utf-8"))
                return
            submitted = parse_qs(body, keep_blank_values=True)
            fields = {f.name: submitted.get(f.name, [""])[0] for f in page.form}
            filled = sorted(k for k, v in fields.items() if v.strip())
            server._record(
                ch,
                _browser_event(
                    "form_submitted",
                    page.phishing,
                    url=page.url,
                    page=page.title,
                    fields=fields,
                    filled=filled,
                ),
            )
            self._send(200, _thanks(page).encode("utf-8"))

        def _typed(self, path: str, beacon: dict[str, list[str]]) -> None:
            """A keystroke beacon: the field's whole value so far, as a ``text_typed`` event."""
            ch, _, page = self._find(path) or (None, "", None)
            name = beacon.get("field", [""])[0]
            field = next((f for f in page.form if f.name == name), None) if page else None
            if ch is None or page is None or field is None:
                self._send(404, _not_found().encode("utf-8"))
                return
            value = beacon.get("value", [""])[0]
            server._record(
                ch,
                _browser_event(
                    "text_typed",
                    page.phishing,
                    field=name,
                    value=value,
                    sensitive=field.sensitive,
                    url=page.url,
                ),
            )
            self._send(204, b"")

        def _send_file(self, entry: FileEntry) -> None:
            body = entry.content.encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Disposition", f'attachment; filename="{entry.name}"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _find(self, path: str) -> tuple[Channel, str, WebPage | None] | None:
            """The channel, URL and page a request path asks for; None if it is none of ours.
            On a routed port every URL is the channel's, with or without a page."""
            if routed is None:
                found = server._lookup(path) or server._lookup(urlsplit(path).path)
                return None if found is None else (found[0], found[1].url, found[1])
            scheme = "https" if isinstance(self.connection, ssl.SSLSocket) else "http"
            url = f"{scheme}://{self._host()}{path}"
            ch, page = server._routed_lookup(routed, url)
            return ch, url, page

        def _host(self) -> str:
            host = self.headers.get("Host") or ""
            return host if host.endswith("]") else host.rpartition(":")[0] or host

        def _send(self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8") -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # library code never prints; visits are events

    return Handler


def _navigation(headers: Any) -> bool:
    """Whether a GET loads a page into a tab: Chrome says so (``Sec-Fetch-Dest: document``);
    a client that sends no fetch metadata, by asking for HTML. A prefetch or prerender
    (``Sec-Purpose``) is none: it is refused, so Chrome loads the page for real if the
    user goes there, and that load is the visit."""
    if headers.get("Sec-Purpose") or headers.get("Purpose"):
        return False
    dest = headers.get("Sec-Fetch-Dest")
    if dest is not None:
        return bool(dest == "document")
    return "text/html" in (headers.get("Accept") or "")


def _browser_event(kind: str, phishing: bool, **data: Any) -> DeviceEvent:
    """What the server saw the device's browser do on one of its pages."""
    return DeviceEvent(kind, CHROME_PACKAGE, {**data, "phishing": phishing})


TLS_FILE = "loopback-tls.pem"  # the routed ports' certificate and key (public on purpose)
_tls: ssl.SSLContext | None = None


def _tls_context() -> ssl.SSLContext:
    global _tls
    if _tls is None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        with as_file(files(__package__).joinpath(TLS_FILE)) as pem:
            context.load_cert_chain(pem)
        _tls = context
    return _tls


class _RoutedServer(ThreadingHTTPServer):
    """One channel's routed port: a connection that opens with a TLS handshake gets TLS."""

    daemon_threads = True

    def finish_request(self, request: Any, client_address: Any) -> None:
        if isinstance(request, socket.socket):
            request.settimeout(10.0)
            try:
                if request.recv(1, socket.MSG_PEEK) == b"\x16":  # a TLS ClientHello
                    request = _tls_context().wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError):
                return  # a client that went away, or spoke no TLS it could finish
        super().finish_request(request, client_address)


_STYLE = (
    "body{font-family:Roboto,Arial,sans-serif;margin:0;background:#f1f3f4;color:#202124}"
    "header{background:#1a73e8;color:#fff;padding:16px;font-size:18px}"
    "main{padding:16px}label{display:block;margin:14px 0 4px;font-size:14px}"
    "input{width:100%;box-sizing:border-box;padding:12px;font-size:16px;"
    "border:1px solid #dadce0;border-radius:4px}"
    "button{margin-top:20px;width:100%;padding:14px;font-size:16px;background:#1a73e8;"
    "color:#fff;border:0;border-radius:4px}"
)


def render_page(page: WebPage, action: str) -> str:
    """The page as HTML: brand, heading, text and a form with every one of its fields."""
    e = html.escape
    inputs = "".join(
        f'<label for="{e(f.name)}">{e(f.label)}</label>'
        f'<input id="{e(f.name)}" name="{e(f.name)}" '
        f'type="{"password" if f.password else "text"}" placeholder="{e(f.label)}" '
        'autocomplete="off">'
        for f in page.form
    )
    paragraphs = "".join(f"<p>{e(p)}</p>" for p in page.paragraphs)
    links = "".join(
        f'<p><a href="{e(url)}">{e(label)}</a></p>' for label, url in page.links.items()
    )
    links += "".join(
        f'<p><a href="{e(download_url(page.url, d.path))}" download>{e(d.name)}</a></p>'
        for d in page.downloads
    )
    # The kit's keystroke logger: every input event reports the field's value so far. Inside
    # <script> only "</" could end the element early, so it is escaped in the JSON.
    target = json.dumps(beacon_url(action)).replace("</", "<\\/")
    script = (
        f"<script>(function(){{var u={target};"
        "document.querySelectorAll('input').forEach(function(i){"
        "i.addEventListener('input',function(){"
        "var b=new URLSearchParams({field:i.name,value:i.value});"
        "if(!(navigator.sendBeacon&&navigator.sendBeacon(u,b)))"
        "fetch(u,{method:'POST',body:b,keepalive:true});});});})();</script>"
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{e(page.title)}</title><style>{_STYLE}</style></head><body>"
        f"<header>{e(page.brand or page.title)}</header><main>"
        f"<h1>{e(page.heading or page.title)}</h1>{paragraphs}{links}"
        + (
            f'<form method="post" action="{e(action)}">{inputs}'
            f'<button type="submit">{e(page.submit_label)}</button></form>'
            if page.form
            else ""
        )
        + f"</main>{script}</body></html>"
    )


def render_results(query: str, hits: Iterable[WebPage]) -> str:
    """A search's results page: each page found, linked, as the simulator's Chrome lists."""
    e = html.escape
    items = "".join(
        f'<p><a href="{e(p.url)}">{e(p.title)}</a><br><small>{e(p.url)}</small><br>'
        f"{e(' '.join(p.paragraphs)[:140])}</p>"
        for p in hits
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{e(query)} - Google Search</title><style>{_STYLE}</style></head><body>"
        f"<main><h1>Results for “{e(query)}”</h1>{items}</main></body></html>"
    )


def _thanks(page: WebPage) -> str:
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(page.title)}</title><style>{_STYLE}</style></head><body>"
        f"<header>{html.escape(page.brand or page.title)}</header>"
        "<main><h1>Verifying…</h1><p>Please keep this page open.</p></main></body></html>"
    )


def _not_found() -> str:
    return "<!DOCTYPE html><html><body><h1>404</h1></body></html>"
