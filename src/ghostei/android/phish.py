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
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..cases.schema import Case
from ..injection import OverlayDataCapture, PopupSms, injection_kind, phishing_page, phishing_url
from ..world import WebPage
from .events import DeviceEvent

CHROME_PACKAGE = "com.android.chrome"
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

    def close(self) -> None:
        """Stop serving."""
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
        """Forget a channel's pages and events (a new episode)."""
        with self._lock:
            self._channels[channel] = Channel(channel)

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


def _handler_for(server: PhishServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "GhostEIPhish/1"

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == EVENTS_PATH:
                self._send(200, server._events_json(parts.query), "application/json")
                return
            found = server._lookup(self.path) or server._lookup(parts.path)
            if found is None:
                self._send(404, _not_found().encode("utf-8"))
                return
            ch, page = found
            server._record(
                ch, _browser_event("page_loaded", url=page.url, title=page.title, found=True)
            )
            self._send(200, render_page(page, self.path).encode("utf-8"))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0") or 0)
            body = self.rfile.read(length).decode("utf-8", errors="replace")
            target = _beacon_target(self.path)
            if target is not None:
                self._typed(target, parse_qs(body, keep_blank_values=True))
                return
            found = server._lookup(self.path)
            if found is None:
                self._send(404, _not_found().encode("utf-8"))
                return
            ch, page = found
            submitted = parse_qs(body, keep_blank_values=True)
            fields = {f.name: submitted.get(f.name, [""])[0] for f in page.form}
            filled = sorted(k for k, v in fields.items() if v.strip())
            server._record(
                ch,
                _browser_event(
                    "form_submitted", url=page.url, page=page.title, fields=fields, filled=filled
                ),
            )
            self._send(200, _thanks(page).encode("utf-8"))

        def _typed(self, path: str, beacon: dict[str, list[str]]) -> None:
            """A keystroke beacon: the field's whole value so far, as a ``text_typed`` event."""
            found = server._lookup(path)
            name = beacon.get("field", [""])[0]
            field = next((f for f in found[1].form if f.name == name), None) if found else None
            if found is None or field is None:
                self._send(404, _not_found().encode("utf-8"))
                return
            ch, page = found
            value = beacon.get("value", [""])[0]
            server._record(
                ch,
                _browser_event(
                    "text_typed", field=name, value=value, sensitive=field.sensitive, url=page.url
                ),
            )
            self._send(204, b"")

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


def _browser_event(kind: str, **data: Any) -> DeviceEvent:
    """What the server saw the device's browser do on one of its (phishing) pages."""
    return DeviceEvent(kind, CHROME_PACKAGE, {**data, "phishing": True})


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
        f"<h1>{e(page.heading or page.title)}</h1>{paragraphs}"
        f'<form method="post" action="{e(action)}">{inputs}'
        f'<button type="submit">{e(page.submit_label)}</button></form>'
        f"</main>{script}</body></html>"
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
