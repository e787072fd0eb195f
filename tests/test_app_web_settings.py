"""Chrome (address bar, search, downloads, menu, bookmarks, history) and Settings."""

from __future__ import annotations

from typing import Any

import pytest

from ghostei.actions import Action
from ghostei.observation import Observation
from ghostei.sim.apps.settings import CATEGORIES
from ghostei.sim.phone import SimPhone

from .helpers import click, click_label, find

WEB: dict[str, Any] = {
    "web": [
        {
            "url": "https://coastrail.example/timetable",
            "title": "Coast Line timetable",
            "paragraphs": ["Trains to the coast leave every hour from platform 4."],
            "downloads": [
                {"path": "/files/coast-summer.pdf", "content": "Summer timetable: 07:10, 08:10"}
            ],
        },
        {
            "url": "https://pdxlibrary.org",
            "title": "Multnomah County Library",
            "paragraphs": ["Central Library opens at 10:00 on Saturday."],
        },
    ],
    "bookmarks": ["https://pdxlibrary.org"],
}


def _kinds(phone: SimPhone) -> list[str]:
    return [e.kind for e in phone.events]


def _chrome(phone: SimPhone) -> Observation:
    phone.reset(WEB)
    return phone.act(Action(action_type="open_app", app_name="Chrome"))


def _go(phone: SimPhone, obs: Observation, typed: str) -> Observation:
    x, y = find(obs, "Search or type URL", editable=True).center
    phone.act(Action(action_type="input_text", x=x, y=y, text=typed))
    return phone.act(Action(action_type="keyboard_enter"))


def _texts(obs: Observation) -> list[str]:
    return [e.text for e in obs.elements]


# ----- Chrome ------------------------------------------------------------------------------


def test_the_address_bar_opens_known_pages_and_reports_unknown_ones(phone: SimPhone) -> None:
    obs = _go(phone, _chrome(phone), "coastrail.example/timetable")
    assert find(obs, "Coast Line timetable")
    loaded = phone.events.of_kind("page_loaded")[-1].data
    assert loaded["url"] == "https://coastrail.example/timetable" and loaded["found"]
    obs = _go(phone, obs, "nowhere.example")
    assert find(obs, "This site can't be reached")
    assert phone.events.of_kind("page_loaded")[-1].data["found"] is False
    assert phone.world.browser_history[-2:] == [
        "https://coastrail.example/timetable",
        "https://nowhere.example",
    ]


def test_words_typed_in_the_address_bar_search_the_web(phone: SimPhone) -> None:
    obs = _go(phone, _chrome(phone), "central library saturday")
    assert find(obs, "Results for “central library saturday”")
    assert "Coast Line timetable" not in _texts(obs)
    obs = click_label(phone, obs, "Multnomah County Library")
    assert find(obs, "Central Library opens at 10:00 on Saturday.")
    assert phone.events.of_kind("link_opened")[-1].data["source"] == "search"


def test_a_download_link_saves_the_file_and_open_hands_it_to_files(phone: SimPhone) -> None:
    obs = _go(phone, _chrome(phone), "coastrail.example/timetable")
    obs = click_label(phone, obs, "coast-summer.pdf")
    entry = phone.world.file("/sdcard/Download/coast-summer.pdf")
    assert entry is not None and entry.content.startswith("Summer timetable")
    done = phone.events.of_kind("download_completed")[-1].data
    assert done["url"] == "https://coastrail.example/files/coast-summer.pdf"
    assert phone.notifications[-1].title == "Download complete"
    assert find(obs, "Downloaded coast-summer.pdf")
    obs = click_label(phone, obs, "Open", package="com.android.chrome")
    assert obs.foreground_package != "com.android.chrome", "Files opens the download"
    assert phone.events.of_kind("file_opened")[-1].data["path"] == entry.path


def test_the_downloads_screen_lists_what_is_in_download(phone: SimPhone) -> None:
    obs = _go(phone, _chrome(phone), "coastrail.example/timetable")
    click_label(phone, obs, "coast-summer.pdf")
    phone.heads_up = None  # the download's heads-up would cover the menu button
    obs = click_label(phone, phone.observe(), "More options")
    obs = click_label(phone, obs, "Downloads")
    assert find(obs, "coast-summer.pdf", clickable=False)
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "Coast Line timetable")


def test_the_menu_shares_copies_and_bookmarks_the_page(phone: SimPhone) -> None:
    obs = _go(phone, _chrome(phone), "coastrail.example/timetable")
    url = "https://coastrail.example/timetable"
    obs = click_label(phone, click_label(phone, obs, "More options"), "Copy link")
    assert phone.world.clipboard == url and "clipboard_set" in _kinds(phone)
    obs = click_label(phone, click_label(phone, obs, "More options"), "Bookmark this page")
    assert url in phone.world.bookmarks
    obs = click_label(phone, obs, "More options")
    assert find(obs, "Remove bookmark")
    obs = click_label(phone, obs, "Share")
    opened = phone.events.of_kind("share_opened")[-1].data
    assert opened["text"] == url and opened["source"] == "Chrome"
    assert find(obs, "Messages", package="android")


def test_bookmarks_open_and_can_be_removed(phone: SimPhone) -> None:
    obs = click_label(phone, _chrome(phone), "More options")
    obs = click_label(phone, obs, "Bookmarks")
    obs = click_label(phone, obs, "Remove bookmark Multnomah County Library")
    assert phone.world.bookmarks == []
    assert find(obs, "No bookmarks yet")


def test_history_lists_pages_newest_first_and_clears(phone: SimPhone) -> None:
    obs = _go(phone, _chrome(phone), "pdxlibrary.org")
    obs = _go(phone, obs, "coastrail.example/timetable")
    obs = click_label(phone, click_label(phone, obs, "More options"), "History")
    titles = [
        e.text
        for e in obs.elements
        if e.text in ("Coast Line timetable", "Multnomah County Library")
    ]
    assert titles == ["Coast Line timetable", "Multnomah County Library"]
    obs = click_label(phone, obs, "Multnomah County Library")
    assert find(obs, "Central Library opens at 10:00 on Saturday.")
    obs = click_label(phone, click_label(phone, obs, "More options"), "History")
    obs = click_label(phone, obs, "Clear browsing data")
    assert phone.world.browser_history == [] and find(obs, "Pages you visit appear here")


def test_back_closes_the_menu_then_goes_back_a_page(phone: SimPhone) -> None:
    obs = _go(phone, _chrome(phone), "pdxlibrary.org")
    obs = _go(phone, obs, "coastrail.example/timetable")
    obs = click_label(phone, obs, "More options")
    obs = phone.act(Action(action_type="navigate_back"))
    assert "Copy link" not in _texts(obs) and find(obs, "Coast Line timetable")
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "Multnomah County Library")


def test_new_tab_shows_bookmarks_and_back_returns(phone: SimPhone) -> None:
    obs = _go(phone, _chrome(phone), "coastrail.example/timetable")
    obs = click_label(phone, click_label(phone, obs, "More options"), "New tab")
    assert find(obs, "Google") and find(obs, "Multnomah County Library")
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "Coast Line timetable")


# ----- Settings ----------------------------------------------------------------------------

TOGGLES = [(category, t.label, t.field) for category, ts in CATEGORIES.items() for t in ts]


@pytest.mark.parametrize(("category", "label", "field"), TOGGLES, ids=[t[2] for t in TOGGLES])
def test_every_setting_is_reachable_and_logged(category: str, label: str, field: str) -> None:
    phone = SimPhone(540, 1200)
    phone.reset(None)
    before = getattr(phone.world.settings, field)
    obs = phone.act(Action(action_type="open_app", app_name="Settings"))
    obs = click_label(phone, obs, category)
    obs = click_label(phone, obs, label)
    assert getattr(phone.world.settings, field) is (not before)
    changed = phone.events.of_kind("setting_changed")[-1]
    assert changed.data == {"setting": field, "value": not before}
    assert changed.package == "com.android.settings"
    # The category's switches are listed in the order of its toggles.
    switches = [e for e in obs.elements if e.checkable]
    position = [t.field for t in CATEGORIES[category]].index(field)
    assert switches[position].checked is (not before)


def test_special_app_access_lists_consents_and_revokes_them(phone: SimPhone) -> None:
    phone.reset({"consents": {"accessibility:com.boostcleaner.battery": True}})
    obs = phone.act(Action(action_type="open_app", app_name="Settings"))
    obs = click_label(phone, obs, "Apps")
    assert find(obs, "Accessibility service")
    obs = click_label(phone, obs, "com.boostcleaner.battery")
    assert phone.world.consents["accessibility:com.boostcleaner.battery"] is False
    assert phone.events.of_kind("setting_changed")[-1].data == {
        "setting": "consent:accessibility:com.boostcleaner.battery",
        "value": False,
    }


def test_special_app_access_says_when_nothing_is_granted(phone: SimPhone) -> None:
    phone.reset(None)
    phone.open_app("Settings", {"category": "Apps"})
    assert find(phone.observe(), "No app has special access")


def test_a_category_intent_opens_it_and_up_returns_to_the_list(phone: SimPhone) -> None:
    phone.reset(None)
    phone.open_app("Settings", {"category": "Security & privacy"})
    obs = phone.observe()
    assert find(obs, "Install unknown apps")
    obs = click(phone, find(obs, "Navigate up"))
    assert find(obs, "Apps")


def _settings(phone: SimPhone, *labels: str) -> Observation:
    obs = phone.act(Action(action_type="open_app", app_name="Settings"))
    for label in labels:
        obs = click_label(phone, obs, label)
    return obs


def _changed(phone: SimPhone) -> list[dict[str, Any]]:
    return [e.data for e in phone.events.of_kind("setting_changed")]


def test_screen_timeout_is_picked_from_androids_choices(phone: SimPhone) -> None:
    phone.reset(None)
    obs = _settings(phone, "Display")
    assert find(obs, "After 1 minute of inactivity")
    obs = click_label(phone, obs, "Screen timeout")
    radios = [e for e in obs.elements if e.class_name == "android.widget.RadioButton"]
    labels = ["15 seconds", "30 seconds", "1 minute", "2 minutes", "5 minutes", "10 minutes"]
    for label in [*labels, "30 minutes"]:
        assert find(obs, label)
    assert [e.checked for e in radios] == [False, False, True, False, False, False, False]
    obs = click_label(phone, obs, "5 minutes")
    assert phone.world.settings.screen_timeout == 300
    assert _changed(phone) == [{"setting": "screen_timeout", "value": 300}]
    assert [e.checked for e in obs.elements if e.class_name == "android.widget.RadioButton"][4]
    click_label(phone, obs, "5 minutes")  # the same choice again changes nothing
    assert len(_changed(phone)) == 1
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "After 5 minutes of inactivity")


def test_system_update_installs_the_offered_security_update(phone: SimPhone) -> None:
    from ghostei.sim.apps.settings import SECURITY_UPDATE

    phone.reset(None)
    obs = _settings(phone, "System")
    assert find(obs, "Update available")
    obs = click_label(phone, obs, "System update")
    assert find(obs, "Security update available")
    assert find(obs, "Android security update: May 5, 2026")
    obs = click_label(phone, obs, "Download and install")
    assert phone.world.settings.security_patch == SECURITY_UPDATE
    assert _changed(phone) == [{"setting": "security_patch", "value": SECURITY_UPDATE}]
    assert find(obs, "Your system is up to date")
    click_label(phone, obs, "Check for update")  # nothing newer: nothing changes
    assert len(_changed(phone)) == 1
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "Your system is up to date")
    # A phone already on the offered patch level has nothing to install.
    phone.reset({"settings": {"security_patch": SECURITY_UPDATE}})
    obs = _settings(phone, "System", "System update")
    assert find(obs, "Your system is up to date")


def test_screen_timeout_is_androids_screen_off_timeout_in_ms(phone: SimPhone) -> None:
    from ghostei.android.seed import settings_get_command, settings_put, settings_values
    from ghostei.served.network import PhoneNetwork
    from ghostei.served.shell import AndroidShell
    from ghostei.served.vfs import PhoneFS
    from ghostei.world import Settings

    phone.reset(None)
    fs = PhoneFS(phone)
    shell = AndroidShell(phone, fs, serial="emulator-5554", network=PhoneNetwork(phone, fs=fs))

    def run(command: str) -> str:
        result = shell.run(command)
        assert result.exit_code == 0
        return result.stdout.decode().strip()

    assert run("settings get system screen_off_timeout") == "60000"
    phone.world.settings.screen_timeout = 300
    assert run("settings get system screen_off_timeout") == "300000"
    run("settings put system screen_off_timeout 30000")
    assert phone.world.settings.screen_timeout == 30
    # Seeding writes it, and reading back maps it to the world's seconds.
    assert settings_put(Settings(screen_timeout=600)) == [
        "settings put system screen_off_timeout 600000"
    ]
    printed = run(settings_get_command())
    assert settings_values(printed)["screen_timeout"] == 30


def test_app_info_permissions_take_androids_choices(phone: SimPhone) -> None:
    phone.reset(None)
    obs = _settings(phone, "Apps", "See all 13 apps", "Go Forex")
    assert find(obs, "No permissions allowed")
    obs = click_label(phone, obs, "Permissions")
    for label in ("Not allowed", "Camera", "Contacts", "Location", "Phone", "SMS"):
        assert find(obs, label)
    obs = click_label(phone, obs, "Contacts")
    assert find(obs, "Contacts permission") and find(obs, "Don't allow")
    obs = click_label(phone, obs, "Allow")
    obs = phone.act(Action(action_type="navigate_back"))
    obs = click_label(phone, obs, "Location")
    obs = click_label(phone, obs, "Ask every time")
    obs = phone.act(Action(action_type="navigate_back"))
    for label in ("Allowed", "Ask every time", "Not allowed"):
        assert find(obs, label)
    [entry] = phone.world.app_permissions
    assert entry.package == "com.tiim.goforexx24"
    assert entry.granted == ["contacts"] and entry.ask == ["location"]
    assert _changed(phone) == [
        {"setting": "permission:com.tiim.goforexx24:contacts", "value": True},
        {"setting": "permission:com.tiim.goforexx24:location", "value": False},
    ]
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "Contacts")  # App info sums up what is allowed


def test_an_apps_defaults_hold_until_changed(phone: SimPhone) -> None:
    phone.reset(None)
    obs = _settings(phone, "Apps", "See all 13 apps", "Messages")
    assert find(obs, "Contacts, Phone, and SMS")
    obs = click_label(phone, obs, "Permissions")
    obs = click_label(phone, obs, "SMS")
    obs = click_label(phone, obs, "Don't allow")
    [entry] = phone.world.app_permissions
    assert entry.granted == ["contacts", "phone"]


def test_install_unknown_apps_is_allowed_per_source(phone: SimPhone) -> None:
    phone.reset(None)
    obs = _settings(phone, "Apps", "Install unknown apps")
    assert find(obs, "Chrome") and find(obs, "Files") and find(obs, "Not allowed")
    obs = click_label(phone, obs, "Chrome")
    assert find(obs, "Allow from this source")
    obs = click_label(phone, obs, "Allow from this source")
    assert phone.world.consents == {"install_unknown_apps:com.android.chrome": True}
    assert _changed(phone) == [
        {"setting": "consent:install_unknown_apps:com.android.chrome", "value": True}
    ]
    assert not phone.world.settings.install_unknown_apps  # the device-wide switch is apart
    obs = phone.act(Action(action_type="navigate_back"))
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "com.android.chrome")  # listed among the special access apps hold
    obs = click_label(phone, obs, "See all 13 apps")
    obs = click_label(phone, obs, "Chrome")
    assert find(obs, "Allowed")


def test_a_source_allowed_is_the_served_phones_install_app_op(phone: SimPhone) -> None:
    from ghostei.served.network import PhoneNetwork
    from ghostei.served.shell import AndroidShell
    from ghostei.served.vfs import PhoneFS

    phone.reset(None)
    fs = PhoneFS(phone)
    shell = AndroidShell(phone, fs, serial="emulator-5554", network=PhoneNetwork(phone, fs=fs))

    def run(command: str) -> str:
        result = shell.run(command)
        assert result.exit_code == 0
        return result.stdout.decode().strip()

    get = "appops get com.android.chrome REQUEST_INSTALL_PACKAGES"
    assert run(get) == "No operations."
    _settings(phone, "Apps", "Install unknown apps", "Chrome", "Allow from this source")
    assert run(get) == "REQUEST_INSTALL_PACKAGES: allow"
    run("appops set com.android.chrome REQUEST_INSTALL_PACKAGES deny")
    assert phone.world.consents == {"install_unknown_apps:com.android.chrome": False}


@pytest.mark.parametrize("focused", [False, True])
def test_a_one_line_field_shows_what_fits_of_a_long_value(focused: bool) -> None:
    # Chrome's omnibox with a long address: Android's EditText scrolls it, showing the start
    # (the host) until it is focused and then the end (where the cursor is); the text never
    # runs over the menu button beside the field.
    from ghostei.sim.render import Renderer, make_layout, text_length
    from ghostei.sim.ui import text_field

    value = "cascadegoods.example/account/orders/CG-20260509-4471/details?tab=items"
    field = text_field(value, lambda _: None, hint="Search or type URL", focused=focused)
    density = 2.625
    make_layout(density).place(field, 0, 0, 600, None)
    renderer = Renderer(600, 200, density)
    box = (field.bounds[0], field.bounds[1], field.bounds[2], field.bounds[3])
    size_px = round(field.style.size * density)
    shown = renderer._fitted(field, value, box, size_px)
    assert shown and shown != value
    assert value.endswith(shown) if focused else value.startswith(shown)
    room = (box[2] - box[0]) - round((field.pad[0] + field.pad[2]) * density)
    assert text_length(shown, size_px, field.style.weight) <= room
    assert renderer._fitted(field, "short.example", box, size_px) == "short.example"
