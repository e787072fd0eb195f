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
