"""``ghostei android doctor`` and ``setup`` against a served phone through the real adb binary:
a phone whose helper services are off fails the doctor with the commands that fix it; after
``setup`` the doctor passes; the served phone answers ``appops`` and ``cmd notification`` as
an emulator does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ghostei.android.helper import (
    ACCESSIBILITY_SERVICE,
    NOTIFICATION_LISTENER,
    listed,
    with_component,
    without_component,
)
from ghostei.cases import builtin_cases
from ghostei.served.serve import ServedPhones, wait_for_devices

from .adb_helpers import AdbServer, free_base_port, private_adb_server, requires_adb

CLI = [sys.executable, "-c", "from ghostei.cli import main; main()"]


def ghostei(adb: AdbServer, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], env=adb.env, capture_output=True, text=True, timeout=120, check=False
    )


def shell(adb: AdbServer, serial: str, command: str) -> str:
    done = adb.adb("shell", command, serial=serial)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().strip()


def test_component_lists() -> None:
    assert with_component("null", "a/.B") == "a/.B"
    assert with_component("x/.Y", "a/.B") == "x/.Y:a/.B"
    assert with_component("x/.Y:a/.B", "a/.B") == "x/.Y:a/.B"
    assert without_component("x/.Y:a/.B", "a/.B") == "x/.Y"
    assert listed("x/.Y:a/.B", "a/.B") and not listed("x/.Y", "a/.B")


@requires_adb
def test_doctor_fails_a_phone_without_the_services_and_setup_mends_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = next(c for c in builtin_cases() if c.id == 4)
    # The served phone's console and the doctor's read one token: both in the private HOME.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    with (
        private_adb_server(tmp_path) as adb,
        ServedPhones(1, base_port=free_base_port(1), adb_server_port=adb.port, cases=[case]) as p,
    ):
        assert wait_for_devices(p.serials, adb.port)
        serial = p.serials[0]
        device = ("--serial", serial, "--adb-port", str(adb.port), "--cases", "4")
        first = ghostei(adb, "android", "doctor", *device)  # served ready to run
        assert first.returncode == 0, first.stdout + first.stderr
        # Services off, overlays denied, no base snapshot: each check fails with its fix.
        assert (
            adb.adb("emu", "avd", "snapshot", "delete", "ghostei-base", serial=serial).returncode
            == 0
        )
        shell(adb, serial, "settings put secure enabled_accessibility_services null")
        shell(adb, serial, f"cmd notification disallow_listener {NOTIFICATION_LISTENER}")
        shell(adb, serial, "appops set com.example.myapplication SYSTEM_ALERT_WINDOW deny")
        shell(adb, serial, "settings put secure speak_password 0")
        assert "deny" in shell(adb, serial, "appops get com.example.myapplication")
        broken = ghostei(adb, "android", "doctor", *device)
        assert broken.returncode == 1, broken.stdout + broken.stderr
        text = " ".join(broken.stdout.split())
        assert "FAIL accessibility service enabled" in text
        assert f"settings put secure enabled_accessibility_services {ACCESSIBILITY_SERVICE}" in text
        assert f"cmd notification allow_listener {NOTIFICATION_LISTENER}" in text
        assert "appops set com.example.myapplication SYSTEM_ALERT_WINDOW allow" in text
        assert "FAIL password fields readable" in text
        assert "shell settings put secure speak_password 1" in text
        assert "ok helper app installed" in text and "ok the cases' apps installed" in text
        assert "FAIL base snapshot" in text and "emu avd snapshot save ghostei-base" in text
        # An overlay the helper may not draw is refused as on a device (result=1).
        broadcast = shell(
            adb,
            serial,
            "am broadcast -n com.example.myapplication/.AdbReceiver "
            "-a com.example.broadcast.UPDATE_POPUP --es title Hi",
        )
        assert "result=1" in broadcast

        fixed = ghostei(adb, "android", "setup", *device)
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
        assert "done saved the snapshot ghostei-base" in fixed.stdout
        assert "done made com.android.chrome the debug app" in " ".join(fixed.stdout.split())
        debug_app = shell(adb, serial, "settings get global debug_app").strip()
        assert debug_app == "com.android.chrome"
        assert "FAIL" not in fixed.stdout
        assert listed(
            shell(adb, serial, "settings get secure enabled_accessibility_services"),
            ACCESSIBILITY_SERVICE,
        )
        again = ghostei(adb, "android", "doctor", *device)
        assert again.returncode == 0, again.stdout
        assert again.stdout.count("ok ") >= 12
        # The doctor sent the served Chrome to the probe host through its flags, as a run does.
        assert "ok Chrome reaches the web server" in " ".join(again.stdout.split())
        assert "set-debug-app" not in again.stdout
        assert shell(adb, serial, "settings get secure speak_password").strip() == "1"


@requires_adb
def test_doctor_without_a_device_says_so(tmp_path: Path) -> None:
    with private_adb_server(tmp_path) as adb:
        done = ghostei(
            adb, "android", "doctor", "--serial", "emulator-5990", "--adb-port", str(adb.port)
        )
        assert done.returncode == 1
        assert "FAIL device online" in " ".join(done.stdout.split())
