"""Contacts (favorites, sharing a contact) and Booking (search and book, chat with the property)."""

from __future__ import annotations

from typing import Any

from ghostei.actions import Action
from ghostei.observation import Observation
from ghostei.sim.apps.booking import CATALOGUE
from ghostei.sim.apps.contacts import vcard
from ghostei.sim.phone import SimPhone
from ghostei.world import Contact

from .helpers import click_label, find

CONTACTS: dict[str, Any] = {
    "contacts": [
        {"id": "c1", "name": "Maya Chen", "phone": "+1 415 555 0199", "email": "maya@example.com"},
        {"id": "c2", "name": "Sam Okafor", "phone": "+1 415 555 0123", "note": "brother"},
        {"id": "c3", "name": "Dana Whitfield", "phone": "+1 415 555 0165"},
    ]
}
TRIP: dict[str, Any] = {
    "reservations": [
        {
            "id": "r1",
            "property": "Hotel Lumen",
            "city": "Lisbon",
            "check_in": "2026-06-02",
            "check_out": "2026-06-05",
            "host_message": "Welcome! Our check-in guide: lumen-lisboa.com/guide",
        }
    ]
}


def _type(phone: SimPhone, obs: Observation, hint: str, value: str) -> Observation:
    """Type into the field with this hint, scrolling down to it if the keyboard hides it."""
    for _ in range(4):
        fields = [e for e in obs.elements if e.editable and e.hint == hint]
        if fields:
            x, y = fields[-1].center
            return phone.act(Action(action_type="input_text", x=x, y=y, text=value))
        obs = phone.act(Action(action_type="scroll", direction="down"))
    raise AssertionError(f"no field {hint!r}")


def _tap(phone: SimPhone, obs: Observation, label: str) -> Observation:
    """Tap a label, hiding the keyboard and scrolling down to it first if needed."""
    phone.focus_field = None
    obs = phone.observe()
    for _ in range(4):
        if any(label in (e.text, e.content_desc) for e in obs.elements):
            return click_label(phone, obs, label)
        obs = phone.act(Action(action_type="scroll", direction="down"))
    raise AssertionError(f"no element {label!r}")


# ----- Contacts ----------------------------------------------------------------------------


def test_a_favorite_is_listed_first_under_its_header(phone: SimPhone) -> None:
    phone.reset(CONTACTS)
    obs = phone.act(Action(action_type="open_app", app_name="Contacts"))
    assert "Favorites" not in [e.text for e in obs.elements]
    obs = click_label(phone, obs, "Sam Okafor")
    obs = click_label(phone, obs, "Add to favorites")
    assert phone.world.contacts[1].favorite is True
    assert find(obs, "Remove from favorites")
    saved = phone.events.of_kind("contact_saved")[-1].data
    assert saved["id"] == "c2" and saved["favorite"] is True
    obs = phone.act(Action(action_type="navigate_back"))
    names = [e.text for e in obs.elements if e.text in ("Favorites", "Contacts", "Sam Okafor")]
    assert names == ["Contacts", "Favorites", "Sam Okafor", "Contacts"]  # title first
    obs = click_label(phone, click_label(phone, obs, "Sam Okafor"), "Remove from favorites")
    assert phone.world.contacts[1].favorite is False


def test_sharing_a_contact_sends_its_card_through_the_share_sheet(phone: SimPhone) -> None:
    phone.reset(CONTACTS)
    obs = phone.act(Action(action_type="open_app", app_name="Contacts"))
    obs = click_label(phone, click_label(phone, obs, "Maya Chen"), "Share")
    shared = phone.events.of_kind("contact_shared")[-1].data
    assert shared["text"] == "Maya Chen\nTel: +1 415 555 0199\nEmail: maya@example.com"
    obs = click_label(phone, obs, "Messages", package="android")
    obs = click_label(phone, obs, "Dana Whitfield")
    assert find(obs, shared["text"], editable=True)
    obs = click_label(phone, obs, "Send SMS")
    sent = phone.events.of_kind("sms_sent")[-1].data
    assert sent["contact"] == "Dana Whitfield" and "0199" in sent["body"]


def test_a_shared_card_carries_the_notes() -> None:
    card = vcard(Contact(id="c", name="Sam Okafor", phone="+1 415 555 0123", note="brother"))
    assert card == "Sam Okafor\nTel: +1 415 555 0123\nNote: brother"


# ----- Booking -----------------------------------------------------------------------------


def _search(phone: SimPhone, place: str, check_in: str, check_out: str) -> Observation:
    obs = phone.act(Action(action_type="open_app", app_name="Booking"))
    obs = click_label(phone, obs, "Search")
    obs = _type(phone, obs, "Destination", place)
    obs = _type(phone, obs, "Check-in date (YYYY-MM-DD)", check_in)
    return _type(phone, obs, "Check-out date (YYYY-MM-DD)", check_out)


def test_search_and_book_a_stay_creates_a_confirmed_reservation(phone: SimPhone) -> None:
    phone.reset(TRIP)
    obs = _search(phone, "Porto", "2026-06-12", "2026-06-14")
    obs = _tap(phone, obs, "Search")
    assert find(obs, "3 properties found · 2 nights")
    assert find(obs, "€176 total")
    obs = click_label(phone, obs, "Ribeira Loft")
    obs = _tap(phone, obs, "Reserve")
    assert find(obs, "Jordan Reyes", editable=True), "the profile's name is filled in"
    for hint, value in (
        ("Cardholder name", "Jordan Reyes"),
        ("Card number", "4929 1873 5501 2246"),
        ("Expiry date (MM/YY)", "08/29"),
        ("CVV", "317"),
    ):
        obs = _type(phone, obs, hint, value)
    obs = _tap(phone, obs, "Book now")
    booked = phone.world.reservations[-1]
    assert (booked.property, booked.city, booked.status) == ("Ribeira Loft", "Porto", "Confirmed")
    assert (booked.check_in, booked.check_out, booked.price) == ("2026-06-12", "2026-06-14", "€176")
    assert find(obs, "Booking details") and find(obs, booked.confirmation)
    event = phone.events.of_kind("reservation_booked")[-1].data
    assert event["id"] == booked.id and event["card_last4"] == "2246"
    form = phone.events.of_kind("form_submitted")[-1].data
    assert form["fields"]["card_number"] == "4929 1873 5501 2246" and form["phishing"] is False
    # Back from the confirmation goes to the trips, where the new stay is listed.
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "Ribeira Loft")


def test_search_waits_for_a_destination_and_valid_dates(phone: SimPhone) -> None:
    phone.reset(TRIP)
    obs = _search(phone, "Porto", "2026-06-14", "2026-06-12")
    phone.focus_field = None
    obs = phone.observe()
    assert not find(obs, "Search", clickable=False).enabled
    assert find(obs, "Check-out must be after check-in")
    obs = _type(phone, obs, "Check-in date (YYYY-MM-DD)", "\b" * 10 + "June 1")
    phone.focus_field = None
    assert find(phone.observe(), "Enter the dates as YYYY-MM-DD")


def test_no_results_says_so(phone: SimPhone) -> None:
    phone.reset(TRIP)
    obs = _tap(phone, _search(phone, "Atlantis", "2026-06-12", "2026-06-14"), "Search")
    assert find(obs, "No properties found in Atlantis")


def test_messaging_the_property_logs_the_message_and_keeps_the_thread(phone: SimPhone) -> None:
    phone.reset(TRIP)
    obs = phone.act(Action(action_type="open_app", app_name="Booking"))
    obs = click_label(phone, obs, "Hotel Lumen")
    obs = _tap(phone, obs, "Message property")
    assert find(obs, "Welcome! Our check-in guide: lumen-lisboa.com/guide")
    obs = _type(phone, obs, "Write a message", "We'll arrive around 23:00.")
    obs = click_label(phone, obs, "Send message")
    sent = phone.events.of_kind("host_message_sent")[-1].data
    assert sent == {
        "reservation": "r1",
        "property": "Hotel Lumen",
        "text": "We'll arrive around 23:00.",
    }
    assert find(obs, "We'll arrive around 23:00.")
    obs = click_label(phone, obs, "lumen-lisboa.com/guide")
    assert obs.foreground_package == "com.android.chrome"


def test_guest_details_are_saved_on_the_trip_for_the_property(phone: SimPhone) -> None:
    phone.reset(TRIP)
    obs = phone.act(Action(action_type="open_app", app_name="Booking"))
    obs = click_label(phone, obs, "Hotel Lumen")
    obs = _tap(phone, obs, "Add guest details")
    assert find(obs, "Enter the lead guest's full name")  # Save waits for a name
    for hint, value in (
        ("Full name", "Jordan Reyes"),
        ("Passport or ID number", "X48213377"),
        ("Email", "jordan.reyes@example.com"),
    ):
        obs = _type(phone, obs, hint, value)
    obs = _tap(phone, obs, "Save details")
    sent = phone.events.of_kind("form_submitted")[-1].data
    assert sent["url"] == "booking://guests/r1" and sent["phishing"] is False
    assert sent["filled"] == ["document", "email", "full_name"]
    trip = phone.world.reservations[0]
    assert trip.guest_details == {
        "full_name": "Jordan Reyes",
        "document": "X48213377",
        "email": "jordan.reyes@example.com",
    }
    assert find(obs, "Edit guest details")  # back on the trip, which shows the lead guest
    obs = _tap(phone, obs, "Edit guest details")
    assert any(e.text == "X48213377" for e in obs.elements if e.editable)


def test_the_catalogue_holds_the_default_stays_at_their_rates() -> None:
    by_name = {item.name: item for item in CATALOGUE}
    assert by_name["Hotel Lumen"].nightly * 3 == 486
    assert by_name["Casa Verde"].nightly * 3 == 312
    assert len({item.id for item in CATALOGUE}) == len(CATALOGUE)


def test_a_trip_s_property_page_opens_its_photo_gallery(phone: SimPhone) -> None:
    phone.reset(TRIP)
    obs = phone.act(Action(action_type="open_app", app_name="Booking"))
    obs = click_label(phone, obs, "Hotel Lumen")
    obs = click_label(phone, obs, "View property")
    find(obs, "Rua das Flores 28, Lisbon")
    assert not [e for e in obs.elements if e.text == "Reserve"], "no dates chosen yet"
    find(obs, "Select dates")
    obs = click_label(phone, obs, "See all 6 photos")
    opened = phone.events.of_kind("gallery_opened")[-1].data
    assert opened == {"listing": "lx1", "property": "Hotel Lumen", "photos": 6}
    find(obs, "Photos of Hotel Lumen")
    obs = click_label(phone, obs, "Bathroom")
    find(obs, "4 / 6")
    find(obs, "Bathroom, photo 4 of 6, Hotel Lumen")
    obs = click_label(phone, obs, "Next photo")
    find(obs, "Breakfast area")
    obs = phone.act(Action(action_type="navigate_back"))
    find(obs, "6 photos")  # paging keeps one viewer on the stack: Back is the grid


def test_saving_a_property_lists_it_under_saved_with_a_note(phone: SimPhone) -> None:
    phone.reset(TRIP)
    obs = phone.act(Action(action_type="open_app", app_name="Booking"))
    obs = click_label(phone, obs, "Hotel Lumen")
    obs = click_label(phone, obs, "View property")
    assert not find(obs, "Save property").checked
    obs = click_label(phone, obs, "Save property")
    assert find(obs, "Remove from saved").checked
    find(obs, "Saved to My next trip")
    saved = phone.events.of_kind("property_saved")[-1].data
    assert saved == {
        "listing": "lx1",
        "property": "Hotel Lumen",
        "city": "Lisbon",
        "list": "My next trip",
        "saved": True,
    }
    phone.act(Action(action_type="navigate_back"))
    obs = phone.act(Action(action_type="navigate_back"))
    obs = click_label(phone, obs, "Saved")
    find(obs, "1 saved property")
    obs = click_label(phone, obs, "Add note")
    obs = _type(phone, obs, "Add a note for this property", "Ask for a room on a high floor")
    obs = _tap(phone, obs, "Save")
    entry = phone.world.saved_properties[0]
    assert (entry.property, entry.note) == ("Hotel Lumen", "Ask for a room on a high floor")
    note = phone.events.of_kind("note_saved")[-1].data
    assert note == {
        "list": "My next trip",
        "property": "Hotel Lumen",
        "text": "Ask for a room on a high floor",
    }
    assert phone.world.reservations[0].notes == "", "the trip's own note is another note"
    find(obs, "Ask for a room on a high floor")
    obs = click_label(phone, obs, "Remove from saved")
    assert phone.world.saved_properties == []
    assert phone.events.of_kind("property_saved")[-1].data["saved"] is False
    find(obs, "Tap the heart on a property to save it here")


def test_tonight_near_here_is_booked_with_the_account_s_saved_card(phone: SimPhone) -> None:
    phone.reset({**TRIP, "current_city": "Berlin", "booking_saved_card": True})
    obs = phone.act(Action(action_type="open_app", app_name="Booking"))
    obs = click_label(phone, obs, "Search")
    obs = click_label(phone, obs, "Around current location · Berlin")
    assert find(obs, "Berlin", editable=True)
    obs = _type(phone, obs, "Check-in date (YYYY-MM-DD)", "2026-05-12")
    obs = _type(phone, obs, "Check-out date (YYYY-MM-DD)", "2026-05-13")
    obs = _tap(phone, obs, "Search")
    obs = click_label(phone, obs, "Spree Loft Kreuzberg")
    obs = _tap(phone, obs, "Reserve")
    assert find(obs, "Visa •••• 2246").text and find(obs, "Saved card · expires 08/29")
    assert not [e for e in obs.elements if e.hint == "Card number"], "the saved card pays"
    obs = click_label(phone, obs, "Use a new card")
    for _ in range(3):
        obs = phone.act(Action(action_type="scroll", direction="down"))
    assert not find(obs, "Book now").enabled
    assert find(obs, "Fill in your details and card to book")
    for _ in range(3):
        obs = phone.act(Action(action_type="scroll", direction="up"))
    obs = click_label(phone, obs, "Visa •••• 2246")
    obs = _tap(phone, obs, "Book now")
    booked = phone.events.of_kind("reservation_booked")[-1].data
    assert (booked["property"], booked["check_in"], booked["card_last4"]) == (
        "Spree Loft Kreuzberg",
        "2026-05-12",
        "2246",
    )
    form = phone.events.of_kind("form_submitted")[-1].data
    assert set(form["fields"]) == {"guest_name", "guest_email"}, "no card details are sent"


def test_no_location_fix_or_location_off_offers_no_current_location(phone: SimPhone) -> None:
    phone.reset(TRIP)
    obs = click_label(
        phone, phone.act(Action(action_type="open_app", app_name="Booking")), "Search"
    )
    assert not [e for e in obs.elements if e.text.startswith("Around current location")]
    phone.reset({**TRIP, "current_city": "Berlin", "settings": {"location": False}})
    obs = click_label(
        phone, phone.act(Action(action_type="open_app", app_name="Booking")), "Search"
    )
    assert not [e for e in obs.elements if e.text.startswith("Around current location")]


# ----- Contacts: Merge duplicates and Sort by ---------------------------------------------

DUPLICATES: dict[str, Any] = {
    "contacts": [
        *CONTACTS["contacts"],
        {"id": "c4", "name": "sam okafor", "email": "sam.okafor@example.com", "note": "gym"},
        {"id": "c5", "name": "Dana W.", "phone": "(415) 555-0165", "favorite": True},
        {"id": "c6", "name": "Maya Chen", "phone": "+1 415 555 0111"},  # another number
        {"id": "c7", "name": "Leo Adams", "phone": "+1 415 555 0188"},
    ]
}


def _contacts(phone: SimPhone) -> Observation:
    phone.reset(DUPLICATES)
    return phone.act(Action(action_type="open_app", app_name="Contacts"))


def test_merge_and_fix_suggests_the_duplicates_that_merge_losslessly(phone: SimPhone) -> None:
    from ghostei.sim.apps.contacts import duplicates

    world = phone.reset(DUPLICATES) and phone.world
    groups = [[c.id for c in g] for g in duplicates(world.contacts)]
    assert groups == [["c2", "c4"], ["c3", "c5"]]  # by name; by number; Maya's differ
    obs = _contacts(phone)
    obs = click_label(phone, obs, "Fix & manage")
    assert find(obs, "2 suggestions")
    obs = click_label(phone, obs, "Merge & fix")
    assert find(obs, "2 duplicates") and find(obs, "sam.okafor@example.com")
    assert len([e for e in obs.elements if e.text == "Dismiss"]) == 2
    obs = click_label(phone, obs, "Dismiss")  # the topmost: the last card's, Dana's
    assert not any(e.text == "Dana W." for e in obs.elements)
    obs = click_label(phone, obs, "Merge")
    assert find(obs, "No duplicates found")
    sam = next(c for c in phone.world.contacts if c.id == "c2")
    assert (sam.phone, sam.email, sam.note) == (
        "+1 415 555 0123",
        "sam.okafor@example.com",
        "brother\ngym",
    )
    assert [c.id for c in phone.world.contacts] == ["c1", "c2", "c3", "c5", "c6", "c7"]
    assert [e.data for e in phone.events.of_kind("contacts_merged")] == [
        {"id": "c2", "name": "Sam Okafor", "merged": ["c4"]}
    ]


def test_merge_all_merges_every_suggestion(phone: SimPhone) -> None:
    obs = _contacts(phone)
    obs = click_label(phone, obs, "Fix & manage")
    obs = click_label(phone, obs, "Merge & fix")
    obs = click_label(phone, obs, "Merge all")
    assert find(obs, "No duplicates found")
    dana = next(c for c in phone.world.contacts if c.id == "c3")
    assert dana.favorite and dana.name == "Dana Whitfield"
    merged = [e.data["merged"] for e in phone.events.of_kind("contacts_merged")]
    assert merged == [["c4"], ["c5"]]
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "No suggestions")
    obs = phone.act(Action(action_type="navigate_back"))
    assert find(obs, "Search contacts")


def test_sort_by_last_name_reorders_the_list(phone: SimPhone) -> None:
    obs = _contacts(phone)
    names = [e.text for e in obs.elements if e.resource_id.endswith(":id/title")]
    assert names[:2] == ["Dana W.", "Dana Whitfield"]  # by first name (favorites apart)
    obs = click_label(phone, obs, "Fix & manage")
    obs = click_label(phone, obs, "Contacts app settings")
    assert find(obs, "First name")
    obs = click_label(phone, obs, "Sort by")
    obs = click_label(phone, obs, "Last name")
    assert phone.world.contacts_sort_by == "last_name"
    assert find(obs, "Last name")
    assert phone.events.of_kind("setting_changed")[-1].data == {
        "setting": "contacts_sort_by",
        "value": "last_name",
    }
    obs = phone.act(Action(action_type="navigate_back"))
    obs = phone.act(Action(action_type="navigate_back"))
    names = [e.text for e in obs.elements if e.resource_id.endswith(":id/title")]
    listed = [n for n in names if n in ("Leo Adams", "Maya Chen", "sam okafor", "Dana Whitfield")]
    assert listed == ["Leo Adams", "Maya Chen", "Maya Chen", "sam okafor", "Dana Whitfield"]
