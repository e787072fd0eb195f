"""Is a device ready for GhostEI? ``ghostei android doctor`` asks, ``setup`` makes it so.

The doctor checks, one line each, what a run needs of a device and says the command that
fixes what is missing: the device online, the helper app installed and allowed to draw over
other apps, its accessibility service and notification listener enabled, password fields
readable by it (``speak_password``), Chrome reading GhostEI's flags and reaching the host's
web server with them (:mod:`.web`), ADBKeyboard
installed and enabled, every app of the chosen cases installed, the base snapshot saved, and
``adb reverse`` working (the device reaches the host's phishing server through it). Setup does
what the host can do (install the helper from an APK, grant, enable, save the snapshot) and
then asks the doctor. Everything goes through adb and the emulator console, so the served
phone (``ghostei device serve``) answers as a real emulator does.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from ..cases.schema import Case
from . import web
from .apps import PackageMap
from .console import ConsoleError, EmulatorConsole, console_port
from .device import BASE_SNAPSHOT
from .helper import (
    ACCESSIBILITY_SERVICE,
    ADB_KEYBOARD_IME,
    ADB_KEYBOARD_PACKAGE,
    HELPER_PACKAGE,
    NOTIFICATION_LISTENER,
    OVERLAY_OP,
    SPEAK_PASSWORD,
    listed,
    with_component,
)
from .phish import CHROME_PACKAGE, EMULATOR_HOST_ALIAS, PROBE_HOST, PhishServer
from .transport import AdbError, AdbutilsTransport, check_device


@dataclass(frozen=True)
class Finding:
    """One check: passed or not, what was seen, and the command that fixes it."""

    name: str
    ok: bool
    detail: str = ""
    fix: str = ""


class Doctor:
    """The checks of one device (``serial`` on the adb server at ``adb_port``)."""

    def __init__(self, serial: str, adb_port: int | None = None) -> None:
        self.serial = serial
        self.adb_port = adb_port
        self.adb = AdbutilsTransport(serial, adb_port=adb_port)
        port = f"-P {adb_port} " if adb_port else ""
        self.prefix = f"adb {port}-s {serial}"

    def shell(self, command: str) -> str:
        return self.adb.shell(command).strip()

    def installed(self, package: str) -> bool:
        return self.shell(f"pm path {package}").startswith("package:")

    def secure(self, key: str) -> str:
        return self.shell(f"settings get secure {key}")

    def examine(self, cases: Sequence[Case] = ()) -> list[Finding]:
        """Every check, in order; after a device that is not online, nothing more."""
        try:
            check_device(self.serial, adb_port=self.adb_port)
        except AdbError as exc:
            return [
                Finding("device online", False, str(exc), "start the emulator, then adb devices")
            ]
        findings = [Finding("device online", True, self.serial)]
        checks: list[tuple[str, Callable[[], Finding]]] = [
            ("helper app installed", self._helper),
            ("helper may draw overlays", self._overlay),
            ("accessibility service enabled", self._accessibility),
            ("notification listener enabled", self._listener),
            ("password fields readable", self._passwords),
            ("ADBKeyboard", self._keyboard),
            ("the cases' apps installed", partial(self._apps, cases)),
            ("base snapshot", self._snapshot),
            ("phishing server reachable", self._reverse),
            ("Chrome follows GhostEI's flags", self._chrome_flags),
            ("Chrome reaches the web server", self._chrome_road),
        ]
        for name, check in checks:
            try:
                findings.append(check())
            except (AdbError, ConsoleError, OSError) as exc:
                findings.append(Finding(name, False, f"could not check: {exc}"))
        return findings

    def _helper(self) -> Finding:
        if self.installed(HELPER_PACKAGE):
            return Finding("helper app installed", True, HELPER_PACKAGE)
        return Finding(
            "helper app installed",
            False,
            f"{HELPER_PACKAGE} is not installed",
            f"ghostei android setup --serial {self.serial} --helper-apk "
            "android/helper/app/build/outputs/apk/debug/app-debug.apk",
        )

    def _overlay(self) -> Finding:
        mode = self.shell(f"appops get {HELPER_PACKAGE} {OVERLAY_OP}")
        ok = "allow" in mode
        fix = f"{self.prefix} shell appops set {HELPER_PACKAGE} {OVERLAY_OP} allow"
        return Finding("helper may draw overlays", ok, mode or "no mode set", "" if ok else fix)

    def _accessibility(self) -> Finding:
        services = self.secure("enabled_accessibility_services")
        ok = listed(services, ACCESSIBILITY_SERVICE) and self.secure("accessibility_enabled") == "1"
        fix = (
            f"{self.prefix} shell settings put secure enabled_accessibility_services "
            f"{with_component(services, ACCESSIBILITY_SERVICE)} && {self.prefix} shell settings "
            "put secure accessibility_enabled 1"
        )
        detail = f"enabled: {services}" if services and services != "null" else "none enabled"
        return Finding("accessibility service enabled", ok, detail, "" if ok else fix)

    def _listener(self) -> Finding:
        listeners = self.secure("enabled_notification_listeners")
        ok = listed(listeners, NOTIFICATION_LISTENER)
        fix = f"{self.prefix} shell cmd notification allow_listener {NOTIFICATION_LISTENER}"
        detail = f"enabled: {listeners}" if listeners and listeners != "null" else "none enabled"
        return Finding("notification listener enabled", ok, detail, "" if ok else fix)

    def _passwords(self) -> Finding:
        name = "password fields readable"
        ok = self.secure(SPEAK_PASSWORD) == "1"
        fix = f"{self.prefix} shell settings put secure {SPEAK_PASSWORD} 1"
        if ok:
            return Finding(name, True, f"{SPEAK_PASSWORD} 1")
        detail = "the accessibility service reads passwords as dots: typing them is undetermined"
        return Finding(name, False, detail, fix)

    def _keyboard(self) -> Finding:
        if not self.installed(ADB_KEYBOARD_PACKAGE):
            return Finding(
                "ADBKeyboard",
                False,
                f"{ADB_KEYBOARD_PACKAGE} is not installed (it types text adb input cannot)",
                f"{self.prefix} install ADBKeyboard.apk "
                "(https://github.com/senzhk/ADBKeyBoard/releases)",
            )
        enabled = listed(self.secure("enabled_input_methods"), ADB_KEYBOARD_IME)
        fix = f"{self.prefix} shell ime enable {ADB_KEYBOARD_IME}"
        return Finding("ADBKeyboard", enabled, "installed", "" if enabled else fix)

    def _apps(self, cases: Sequence[Case]) -> Finding:
        names = sorted({a for c in cases for a in c.app if a != "System UI"})
        packages = PackageMap()
        missing = []
        for name in names:
            app = packages.resolve(name)
            if app is not None and not self.installed(app.package):
                missing.append(f"{name} ({app.package})")
        if not missing:
            return Finding("the cases' apps installed", True, f"{len(names)} app(s)")
        return Finding(
            "the cases' apps installed",
            False,
            f"missing: {', '.join(missing)}",
            f"install them on the image (Play Store, or {self.prefix} install APK), or map "
            "other packages with a package map",
        )

    def _snapshot(self) -> Finding:
        port = console_port(self.serial)
        if port is None:
            return Finding("base snapshot", True, "not an emulator: the device is used as it is")
        console = EmulatorConsole(port)
        try:
            names = console.snapshots()
        finally:
            console.close()
        ok = BASE_SNAPSHOT in names
        fix = f"{self.prefix} emu avd snapshot save {BASE_SNAPSHOT} (or ghostei android setup)"
        return Finding("base snapshot", ok, ", ".join(names) or "none", "" if ok else fix)

    def _reverse(self) -> Finding:
        name = "phishing server reachable"
        if console_port(self.serial) is not None:
            # As the run does: an emulator reaches the host's loopback at its alias.
            return Finding(name, True, f"an emulator reaches the host at {EMULATOR_HOST_ALIAS}")
        with socket.socket() as probe:  # a USB device reaches it through adb reverse
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        try:
            self.adb.reverse(f"tcp:{port}", f"tcp:{port}")
        except AdbError as exc:
            fix = f"{self.prefix} reverse tcp:{port} tcp:{port} (update adb; check USB debugging)"
            return Finding(name, False, f"adb reverse failed: {exc}", fix)
        return Finding(name, True, f"adb reverse tcp:{port} reaches the host")

    def _chrome_flags(self) -> Finding:
        name = "Chrome follows GhostEI's flags"
        if not self.installed(CHROME_PACKAGE):
            return Finding(
                name, False, f"{CHROME_PACKAGE} is not installed", "use a Google APIs image"
            )
        debuggable = self.shell("getprop ro.debuggable") == "1"
        debug_app = self.shell("settings get global debug_app")
        if debuggable or debug_app == CHROME_PACKAGE:
            why = "a debuggable image" if debuggable else "Chrome is the debug app"
            return Finding(name, True, f"reads {web.FLAGS_FILE}: {why}")
        fix = f"{self.prefix} shell am set-debug-app --persistent {CHROME_PACKAGE}"
        return Finding(name, False, f"Chrome ignores {web.FLAGS_FILE} on this image", fix)

    def _chrome_road(self) -> Finding:
        """What the run proves first: Chrome, given the flags, reaches a web server here."""
        name = "Chrome reaches the web server"
        with PhishServer() as server:
            channel = server.channel("doctor")
            host = web.server_host(self.adb, self.serial, server.routed_port(channel))
            road = web.ChromeRoad(self.adb, server, channel, host, lambda: "")
            if road.prove():
                return Finding(name, True, f"https://{PROBE_HOST}/ was answered by the host")
        detail = (
            f"Chrome never asked the host for https://{PROBE_HOST}/ within "
            f"{web.PROBE_TIMEOUT:.0f} s: links to the attackers' pages would be unseen"
        )
        fix = (
            f"{self.prefix} shell am set-debug-app --persistent {CHROME_PACKAGE}, then open "
            "Chrome once to finish its first run"
        )
        return Finding(name, False, detail, fix)

    # ----- setup ------------------------------------------------------------------------------

    def setup(self, helper_apk: Path | None = None) -> list[str]:
        """Install, grant and enable what the host can; the steps done."""
        done = []
        if not self.installed(HELPER_PACKAGE):
            if helper_apk is None:
                raise AdbError(
                    f"{HELPER_PACKAGE} is not installed: build android/helper and give "
                    "--helper-apk PATH"
                )
            self.adb.install(helper_apk)
            done.append(f"installed {helper_apk.name}")
        self.shell(f"appops set {HELPER_PACKAGE} {OVERLAY_OP} allow")
        done.append(f"allowed {HELPER_PACKAGE} to draw overlays")
        services = self.secure("enabled_accessibility_services")
        value = with_component(services, ACCESSIBILITY_SERVICE)
        self.shell(f"settings put secure enabled_accessibility_services {value}")
        self.shell("settings put secure accessibility_enabled 1")
        done.append(f"enabled {ACCESSIBILITY_SERVICE}")
        self.shell(f"cmd notification allow_listener {NOTIFICATION_LISTENER}")
        done.append(f"allowed {NOTIFICATION_LISTENER}")
        self.shell(f"settings put secure {SPEAK_PASSWORD} 1")
        done.append("let accessibility services read password fields")
        self.shell(f"am set-debug-app --persistent {CHROME_PACKAGE}")
        done.append(f"made {CHROME_PACKAGE} the debug app (it reads {web.FLAGS_FILE})")
        if self.installed(ADB_KEYBOARD_PACKAGE):
            methods = self.secure("enabled_input_methods")
            value = with_component(methods, ADB_KEYBOARD_IME)
            self.shell(f"settings put secure enabled_input_methods {value}")
            done.append(f"enabled {ADB_KEYBOARD_IME}")
        port = console_port(self.serial)
        if port is not None:
            console = EmulatorConsole(port)
            try:
                if BASE_SNAPSHOT not in console.snapshots():
                    console.command(f"avd snapshot save {BASE_SNAPSHOT}")
                    done.append(f"saved the snapshot {BASE_SNAPSHOT}")
            finally:
                console.close()
        return done
