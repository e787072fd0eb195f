"""``ghostei device serve``: simulated phones that the local adb server sees as emulators."""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType

import click
from rich.table import Table

from ..cases import CaseError, select_cases
from .console import navigation_option, out


def _screen(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in value.lower().split("x"))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not WIDTHxHEIGHT, e.g. 1080x2400") from None
    if width < 320 or height < 480:
        raise click.BadParameter(f"{value} is too small (at least 320x480)")
    return width, height


@click.group()
def device() -> None:
    """Serve simulated phones as Android emulators over the real adb protocol."""


@device.command()
@click.option("--count", type=click.IntRange(1, 32), default=1, show_default=True)
@click.option(
    "--base-port",
    type=click.IntRange(1024, 65000),
    default=5554,
    show_default=True,
    help="Console port of the first phone; its adbd listens on the next port.",
)
@click.option(
    "--adb-port",
    type=click.IntRange(1, 65535),
    default=None,
    help="Port of the adb server to register with (default: $ANDROID_ADB_SERVER_PORT or 5037).",
)
@click.option(
    "--screen", default="1080x2400", show_default=True, callback=_screen, help="Screen size WxH."
)
@click.option(
    "--cases",
    "cases_spec",
    default=None,
    help="Cases to make snapshots of (ids or a path; default: the built-in cases).",
)
@click.option(
    "--full-events",
    is_flag=True,
    help="Log every event of the phone under the GhostEI logcat tag, not only what a stock "
    "emulator with the helper app logs (for debugging).",
)
@navigation_option
def serve(
    count: int,
    base_port: int,
    adb_port: int | None,
    screen: tuple[int, int],
    cases_spec: str | None,
    full_events: bool,
    navigation: str,
) -> None:
    """Serve phones as emulator-5554, emulator-5556, … until Ctrl-C.

    Each reports what a stock emulator with the overlay helper app reports: the helper's
    overlay events in logcat, the phishing pages its browser loads over HTTP, the SMS it sent.
    """
    # Imported here: the rest of the CLI should not pay for loading the phone's shell.
    from ..served.serve import BASE_SNAPSHOT, ServedPhones, wait_for_devices

    width, height = screen
    try:
        cases = select_cases(cases_spec)
    except CaseError as exc:
        raise click.UsageError(str(exc)) from None
    try:
        phones = ServedPhones(
            count,
            base_port=base_port,
            adb_server_port=adb_port,
            width=width,
            height=height,
            cases=cases,
            full_events=full_events,
            navigation=navigation,
        )
    except OSError as exc:
        last = base_port + 2 * count - 1
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise click.UsageError(
            f"cannot listen on ports {base_port}-{last}: {reason}; choose another --base-port"
        ) from None
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, on_signal)
    try:
        table = Table(title=f"GhostEI phones ({width}x{height})")
        for column in ("serial", "adbd", "console"):
            table.add_column(column)
        for phone in phones.phones:
            table.add_row(phone.serial, str(phone.adb_port), str(phone.console_port))
        out.print(table)
        out.print(
            f"snapshots: {BASE_SNAPSHOT} and ghostei-case-<id> for {len(cases)} case(s)",
            highlight=False,
        )
        events = "every event" if full_events else "the helper app's events (stock)"
        out.print(f"logcat GhostEI: {events}", highlight=False)
        out.print(f"navigation: {navigation}", highlight=False)
        server = phones.server_port
        if all(phones.registered) and wait_for_devices(phones.serials, server, timeout=5):
            out.print(f"registered with the adb server on port {server}", highlight=False)
        else:
            out.print(
                f"[yellow]no adb server answered on port {server}[/]: start one, then "
                "`adb connect 127.0.0.1:<adbd port>` (a server started later finds phones "
                "on ports 5554-5585 by itself)",
                highlight=False,
            )
        out.print("ready; Ctrl-C stops", highlight=False)
        out.file.flush()
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        phones.close()
