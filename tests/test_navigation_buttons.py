"""System navigation: the three-button (and two-button) bar beside gesture navigation.

A tap on the bar's keys does what the key does, on the simulated phone and through the served
shell; ``settings`` and ``cmd overlay`` switch the mode as on a device; gestures stay the
default, drawn and laid out as before.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ghostei.actions import Action
from ghostei.cases import builtin_cases
from ghostei.integrations.external import execute_external
from ghostei.observation import Observation
from ghostei.rundir import RunDir
from ghostei.runner import RunConfig, new_manifest
from ghostei.served.shell import AndroidShell
from ghostei.served.vfs import PhoneFS
from ghostei.sim import navigation as nav
from ghostei.sim.phone import SimPhone
from ghostei.sim.render import Renderer

from .adb_helpers import free_base_port, requires_adb
from .helpers import cli, find, open_payment

SYSTEMUI = "com.android.systemui"
LAUNCHER = "com.google.android.apps.nexuslauncher"
THREE = "com.android.internal.systemui.navbar.threebutton"
GESTURAL = "com.android.internal.systemui.navbar.gestural"


def _key(obs: Observation, desc: str) -> tuple[int, int]:
    element = find(obs, desc, window="NavigationBar")
    return element.center


def _tap(phone: SimPhone, point: tuple[int, int]) -> Observation:
    return phone.act(Action(action_type="click", x=point[0], y=point[1]))


def _screen_title(obs: Observation) -> list[str]:
    return [e.text for e in obs.elements if e.package == "com.booking" and e.text][:3]


# ----- the simulated phone ------------------------------------------------------------------


def test_the_bar_has_back_home_and_overview_keys_named_as_systemui_names_them() -> None:
    phone = SimPhone(navigation="buttons")
    obs = phone.observe()
    keys = [
        (e.content_desc, e.resource_id, e.class_name, e.clickable)
        for e in obs.elements
        if e.window == "NavigationBar"
    ]
    assert keys == [
        ("Back", f"{SYSTEMUI}:id/back", "android.widget.ImageView", True),
        ("Home", f"{SYSTEMUI}:id/home", "android.widget.ImageView", True),
        ("Overview", f"{SYSTEMUI}:id/recent_apps", "android.widget.ImageView", True),
    ]
    # Back, Home and Overview from left to right, in the bar's 48 dp at the bottom.
    bar_top = phone.height - round(48 * phone.density)
    xs = [e.center[0] for e in obs.elements if e.window == "NavigationBar"]
    assert xs == sorted(xs) and abs(xs[1] - phone.width // 2) <= 1
    assert all(e.bounds[1] == bar_top for e in obs.elements if e.window == "NavigationBar")


def test_a_tap_on_back_goes_back_and_on_home_goes_home() -> None:
    phone = SimPhone(navigation="buttons")
    payment = open_payment(phone)
    detail_then = len(phone.events)
    obs = _tap(phone, _key(payment, "Back"))
    kinds = [e.kind for e in list(phone.events)[detail_then:]]
    assert kinds == ["tap", "navigated_back"]
    tap = phone.events.of_kind("tap")[-1]
    assert tap.package == SYSTEMUI and tap.data["resource_id"] == f"{SYSTEMUI}:id/back"
    # The app went back one screen, as the Back key takes it: still Booking, off the payment.
    assert obs.foreground_package == "com.booking"
    assert _screen_title(obs) != _screen_title(payment)
    obs = _tap(phone, _key(obs, "Home"))
    assert obs.foreground_package == LAUNCHER
    assert phone.events.of_kind("navigated_home")


def test_a_tap_on_overview_opens_the_recent_apps() -> None:
    phone = SimPhone(navigation="buttons")
    obs = phone.act(Action(action_type="open_app", app_name="Gmail"))
    obs = _tap(phone, _key(obs, "Overview"))
    assert phone.recents_open
    assert any(e.content_desc == "Gmail" for e in obs.elements)
    # Pressed again, it switches to the most recent app, as the key does.
    obs = _tap(phone, _key(obs, "Overview"))
    assert not phone.recents_open and obs.foreground_package == "com.google.android.gm"


def test_back_on_the_bar_hides_the_keyboard_first() -> None:
    phone = SimPhone(navigation="buttons")
    obs = phone.act(Action(action_type="open_app", app_name="Chrome"))
    field = next(e for e in obs.elements if e.editable)
    obs = _tap(phone, field.center)
    assert obs.keyboard_shown
    # The keyboard sits on the bar, which stays where it was.
    keyboard_key = _key(obs, "Back")
    obs = _tap(phone, keyboard_key)
    assert not obs.keyboard_shown and obs.foreground_package == "com.android.chrome"


def test_apps_end_above_the_bar_and_a_swipe_from_it_is_no_gesture() -> None:
    gestures, buttons = SimPhone(), SimPhone(navigation="buttons")
    for phone in (gestures, buttons):
        phone.act(Action(action_type="open_app", app_name="Gmail"))
    content = {
        p.navigation: next(
            n.bounds for n in p.windows()[0].root.walk() if n.rid == "android:id/content"
        )
        for p in (gestures, buttons)
    }
    assert content["gestures"][3] == gestures.height - round(24 * gestures.density)
    assert content["buttons"][3] == buttons.height - round(48 * buttons.density)
    # The swipe up that goes Home with gestures presses no key on the bar.
    w, h = buttons.width, buttons.height
    obs = buttons.act(Action(action_type="swipe", x=w // 2, y=h - 2, x2=w // 2, y2=h // 5))
    assert obs.foreground_package == "com.google.android.gm"
    assert not buttons.events.of_kind("navigated_home")


def test_the_two_button_bar_has_back_and_a_home_pill_swiped_up_for_the_overview() -> None:
    phone = SimPhone(navigation="two-button")
    obs = phone.act(Action(action_type="open_app", app_name="Gmail"))
    descs = [e.content_desc for e in obs.elements if e.window == "NavigationBar"]
    assert descs == ["Back", "Home"]
    w, h = phone.width, phone.height
    phone.act(Action(action_type="swipe", x=w // 2, y=h - 2, x2=w // 2, y2=h * 3 // 5))
    assert phone.recents_open
    obs = _tap(phone, _key(phone.observe(), "Home"))
    assert obs.foreground_package == LAUNCHER and not phone.recents_open


def test_a_reset_returns_to_the_phones_navigation() -> None:
    phone = SimPhone(navigation="buttons")
    phone.set_navigation("gestures")
    assert phone.navigation_key("back") is None
    phone.reset(None)
    assert phone.navigation == "buttons" and phone.navigation_key("back") is not None
    with pytest.raises(ValueError, match="navigation"):
        SimPhone(navigation="floating")


def test_the_bar_is_drawn_and_composed_as_a_full_redraw_draws_it() -> None:
    phone = SimPhone(540, 1200, navigation="buttons")
    obs = open_payment(phone)
    for desc in ("Back", "Home", "Overview"):
        windows = phone.windows()
        composed = phone.compositor.render(windows)
        full = Renderer(phone.width, phone.height, phone.density).render(windows)
        assert composed.tobytes() == full.tobytes()
        x, y = _key(obs, desc)
        # A key's glyph is drawn around its centre: the bar's colour is not all there is.
        colours = {composed.getpixel((x + dx, y)) for dx in range(-20, 21)}
        assert len(colours) > 1, desc
        obs = _tap(phone, (x, y)) if desc != "Home" else obs


def test_gestures_stay_the_default_with_the_handle_and_its_24_dp() -> None:
    phone = SimPhone()
    assert phone.navigation == nav.DEFAULT_NAVIGATION == "gestures"
    bar = next(w for w in phone.windows() if w.kind == "navigation_bar")
    assert bar.frame == (0, phone.height - round(24 * phone.density), phone.width, phone.height)
    assert not any(n.clickable for n in bar.root.walk())
    # Switched away and back, the phone draws exactly what it drew before.
    before = phone.observe().png
    phone.set_navigation("buttons")
    assert phone.observe().png != before
    phone.set_navigation("gestures")
    assert phone.observe().png == before


# ----- the served shell ---------------------------------------------------------------------


class Served:
    """A served phone's shell, as a test drives it."""

    def __init__(self, navigation: str = "gestures") -> None:
        self.phone = SimPhone(navigation=navigation)
        self.shell = AndroidShell(self.phone, PhoneFS(self.phone), serial="emulator-5554")

    def out(self, command: str, status: int = 0) -> str:
        result = self.shell.run(command)
        assert result.exit_code == status, (command, result.stderr)
        return result.stdout.decode()

    def key(self, rid: str) -> tuple[int, int]:
        """The centre of a navigation key, from the dump of every window."""
        xml = self.out("uiautomator dump --windows /dev/tty")
        found = re.search(
            rf'resource-id="{SYSTEMUI}:id/{rid}"[^>]*bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"', xml
        )
        assert found is not None, f"no {rid} key in the dump"
        left, top, right, bottom = (int(v) for v in found.groups())
        return (left + right) // 2, (top + bottom) // 2


def test_input_tap_on_the_served_bars_keys_goes_back_and_home() -> None:
    served = Served("buttons")
    served.out("monkey -p com.google.android.gm 1")
    served.out("am start -a android.intent.action.VIEW -d https://example.com")
    assert served.phone.foreground_package == "com.android.chrome"
    x, y = served.key("back")
    served.out(f"input tap {x} {y}")
    assert served.phone.events.of_kind("navigated_back")
    x, y = served.key("home")
    served.out(f"input tap {x} {y}")
    assert served.phone.foreground_package == LAUNCHER
    # The plain dump is the active window's, as on a device: the bar is a window of its own.
    assert f"{SYSTEMUI}:id/back" not in served.out("uiautomator dump /dev/tty")


def test_the_app_switch_key_presses_the_overview_key() -> None:
    served = Served("buttons")
    served.out("monkey -p com.google.android.gm 1")
    served.out("input keyevent KEYCODE_APP_SWITCH")
    assert served.phone.recents_open
    assert served.phone.events.of_kind("tap")[-1].data["resource_id"] == (
        f"{SYSTEMUI}:id/recent_apps"
    )


def test_settings_navigation_mode_reads_and_switches_the_mode() -> None:
    served = Served()
    assert served.out("settings get secure navigation_mode") == "2\n"
    served.out("settings put secure navigation_mode 0")
    assert served.phone.navigation == "buttons"
    assert served.out("settings get secure navigation_mode") == "0\n"
    assert "navigation_mode=0\n" in served.out("settings list secure")
    served.out("monkey -p com.google.android.gm 1")
    x, y = served.key("home")
    served.out(f"input tap {x} {y}")
    assert served.phone.foreground_package == LAUNCHER
    served.out("settings put secure navigation_mode 1")
    assert served.phone.navigation == "two-button"
    served.out("settings put secure navigation_mode banana")  # no mode: nothing changes
    assert served.out("settings get secure navigation_mode") == "1\n"
    served.out("settings put secure navigation_mode 2")
    assert served.phone.navigation == "gestures"


def test_cmd_overlay_switches_the_mode_and_lists_it() -> None:
    served = Served()
    assert served.out("cmd overlay list") == (
        "android\n"
        f"[x] {GESTURAL}\n"
        f"[ ] {THREE}\n"
        "[ ] com.android.internal.systemui.navbar.twobutton\n"
        "\n"
    )
    served.out(f"cmd overlay enable-exclusive --category {THREE}")
    assert served.phone.navigation == "buttons"
    assert served.out(f"cmd overlay list {THREE}") == f"[x] {THREE}\n"
    assert served.out("settings get secure navigation_mode") == "0\n"
    served.out(f"cmd overlay enable {GESTURAL}")
    assert served.phone.navigation == "gestures"
    # Disabling the enabled overlay leaves the framework's own mode, three buttons.
    served.out(f"cmd overlay disable {GESTURAL}")
    assert served.phone.navigation == "buttons"
    served.out(f"cmd overlay disable {GESTURAL}")  # not enabled: nothing changes
    assert served.phone.navigation == "buttons"
    served.out("cmd overlay enable-exclusive --category com.example.theme", status=1)
    served.out("cmd overlay enable com.example.theme", status=255)
    assert "overlay" in served.out("cmd -l")


# ----- runs and the command line ------------------------------------------------------------


def test_the_manifest_records_navigation_only_when_it_is_not_gestures() -> None:
    assert "navigation" not in RunConfig().to_json()
    config = RunConfig(navigation="buttons")
    assert config.to_json()["navigation"] == "buttons"
    assert RunConfig.from_json(config.to_json()) == config
    old = RunConfig().to_json()  # a manifest from before --navigation
    assert RunConfig.from_json(old).navigation == "gestures"
    with pytest.raises(ValueError, match=r"config\.navigation"):
        RunConfig.from_json({**old, "navigation": "floating"})


def test_run_navigation_gives_the_simulated_phone_the_bar(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = cli(
        "run", "--agent", "oracle", "--cases", "3", "--navigation", "buttons",
        "--frames", "none", "--out", str(out), "--workers", "1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    manifest = (out / "manifest.json").read_text()
    assert '"navigation": "buttons"' in manifest
    resumed = cli("run", "--resume", "--out", str(out), "--navigation", "gestures")
    assert resumed.exit_code != 0 and "--navigation 'gestures'" in resumed.output
    android = cli("run", "--backend", "android", "--serial", "x", "--navigation", "buttons")
    assert android.exit_code != 0 and "--navigation" in android.output


def test_device_serve_passes_navigation(monkeypatch: pytest.MonkeyPatch) -> None:
    import ghostei.served.serve as serve_module
    from ghostei.cli.device import device

    seen: dict[str, Any] = {}

    def refuse(*args: Any, **kwargs: Any) -> None:
        seen.update(kwargs)
        raise OSError(98, "Address already in use")

    monkeypatch.setattr(serve_module, "ServedPhones", refuse)
    for flags, expected in (([], "gestures"), (["--navigation", "buttons"], "buttons")):
        result = CliRunner().invoke(device, ["serve", "--cases", "3", *flags])
        assert result.exit_code == 2 and "cannot listen" in result.output
        assert seen["navigation"] == expected


@requires_adb
@pytest.mark.slow
def test_an_external_programs_phone_has_the_runs_navigation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # adb keeps its keys under HOME
    home = SimPhone(540, 1200, navigation="buttons").navigation_key("home")
    assert home is not None
    script = tmp_path / "agent.sh"
    script.write_text(
        "adb shell settings get secure navigation_mode < /dev/null\n"
        "adb shell monkey -p com.google.android.gm 1 < /dev/null > /dev/null\n"
        f"adb shell input tap {home[0]} {home[1]} < /dev/null\n"
    )
    case = builtin_cases()[0]
    config = RunConfig(
        agents=("nav",), agent_cmd=f"sh {script}", width=540, height=1200, navigation="buttons"
    )
    run = RunDir(tmp_path / "run")
    run.create(new_manifest(config, [case]), [case])
    [record] = execute_external(run, config, [case], base_port=free_base_port())
    assert record.error is None and record.steps == 2
    folder = run.path / record.trajectory
    assert (folder / "stdout.txt").read_text() == "0\n"
    events = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    taps = [e for e in events if e["kind"] == "tap"]
    assert taps[-1]["data"]["resource_id"] == f"{SYSTEMUI}:id/home"
    assert events[-1]["kind"] == "navigated_home"
