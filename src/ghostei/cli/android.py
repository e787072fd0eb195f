"""``ghostei phish-server``: the loopback phishing server on its own, for a device run by hand
or by another harness (page addresses go to stderr; each visit and submission is printed on
stdout as one JSON line, ``{"kind": …, "package": …, "data": {…}}``); ``ghostei android
doctor|setup``: a device checked and prepared for runs (see :mod:`ghostei.android.doctor`).
"""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..android.events import DeviceEvent
from ..android.phish import EMULATOR_HOST_ALIAS, PhishServer, case_pages
from ..cases import CaseError, select_cases
from .console import stacked

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


@click.group()
def android() -> None:
    """Check and prepare an Android device (or a served phone) for GhostEI runs."""


_device_options = stacked(
    [
        click.option("--serial", required=True, help="The device, e.g. emulator-5554."),
        click.option(
            "--adb-port",
            type=click.IntRange(1, 65535),
            default=None,
            help="The adb server's port (default: $ANDROID_ADB_SERVER_PORT or 5037).",
        ),
        click.option(
            "--cases",
            "cases_spec",
            default=None,
            help="Cases whose apps must be installed (ids or a path; default: the built-in cases).",
        ),
    ]
)


def _report(findings: list[Any]) -> bool:
    for f in findings:
        mark = "[green]ok[/]  " if f.ok else "[red]FAIL[/]"
        out.print(f"{mark} {escape(f.name)}: {escape(f.detail)}", highlight=False)
        if not f.ok and f.fix:
            out.print(f"      fix: {escape(f.fix)}", highlight=False, soft_wrap=True)
    return all(f.ok for f in findings)


def _doctor(serial: str, adb_port: int | None, cases_spec: str | None) -> Any:
    from ..android.doctor import Doctor
    from ..android.transport import AdbError

    try:
        cases = select_cases(cases_spec)
    except CaseError as exc:
        raise click.BadParameter(str(exc), param_hint="--cases") from None
    try:
        return Doctor(serial, adb_port), cases
    except AdbError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise SystemExit(2) from None


@android.command()
@_device_options
def doctor(serial: str, adb_port: int | None, cases_spec: str | None) -> None:
    """Check, one line each, what a run needs of the device, and say how to fix what is
    missing; exit 0 only when a run will work."""
    found, cases = _doctor(serial, adb_port, cases_spec)
    if not _report(found.examine(cases)):
        raise SystemExit(1)


@android.command()
@_device_options
@click.option(
    "--helper-apk",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    default=None,
    help="The helper app's APK (built from android/helper), installed if it is missing.",
)
def setup(
    serial: str, adb_port: int | None, cases_spec: str | None, helper_apk: Path | None
) -> None:
    """Do what the host can (install the helper, allow its overlays, enable its accessibility
    service and notification listener and ADBKeyboard, save the base snapshot), then check."""
    from ..android.transport import AdbError

    found, cases = _doctor(serial, adb_port, cases_spec)
    try:
        for step in found.setup(helper_apk):
            out.print(f"done {escape(step)}", highlight=False)
    except AdbError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise SystemExit(2) from None
    if not _report(found.examine(cases)):
        raise SystemExit(1)
