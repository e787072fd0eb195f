"""``ghostei phish-server``: the loopback phishing server on its own, for a device run by hand
or by another harness. Page addresses go to stderr; each visit and submission is printed on
stdout as one JSON line (``{"kind": …, "package": …, "data": {…}}``)."""

from __future__ import annotations

import json
import signal
import threading
from types import FrameType

import click
from rich.console import Console
from rich.table import Table

from ..cases import CaseError, select_cases
from .events import DeviceEvent
from .phish import EMULATOR_HOST_ALIAS, PhishServer, case_pages

out = Console()
err = Console(stderr=True)


@click.command("phish-server")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Loopback address to bind (an emulator reaches 127.0.0.1 as 10.0.2.2).",
)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option(
    "--cases",
    "cases_spec",
    default=None,
    help="Cases whose pages to serve (ids or a path; default: the built-in cases).",
)
def phish_server(host: str, port: int, cases_spec: str | None) -> None:
    """Serve every case's phishing page on loopback and print each submission."""
    try:
        cases = select_cases(cases_spec)
    except CaseError as exc:
        raise click.BadParameter(str(exc), param_hint="--cases") from None
    lock = threading.Lock()

    def on_event(channel: str, event: DeviceEvent) -> None:
        line = json.dumps({"kind": event.kind, "package": event.package, "data": event.data})
        with lock:
            out.print(line, markup=False, highlight=False, soft_wrap=True)
            out.file.flush()

    try:
        server = PhishServer(host, port, on_event=on_event)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--host") from None
    except OSError as exc:
        raise click.UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, on_signal)
    try:
        pages = case_pages(cases)
        table = Table(title=f"GhostEI phishing pages on {server.base_url()}")
        table.add_column("case URL")
        table.add_column("from an emulator")
        for page in pages:
            path = server.add_page(page)
            table.add_row(page.url, server.base_url(EMULATOR_HOST_ALIAS) + path)
        err.print(table)
        err.print(f"{len(pages)} page(s); ready; Ctrl-C stops", highlight=False)
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.close()
