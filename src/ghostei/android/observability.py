"""What a stock Android emulator with our helper app reports, source by source.

Keep in step with the sources themselves: the helper app (``android/helper``: its overlays,
accessibility service and notification listener), the loopback web server (:mod:`.phish`;
every page once Chrome is routed to it, :mod:`.web`), the SMS and calendar providers, the
mapped settings and the logcat reader (:mod:`.events`) and the host side of :mod:`.device`.
:data:`ANDROID` is a device as ``ghostei android setup`` leaves it (the doctor passing); an
episode on a device that is less is declared for what it is (:func:`with_pages`). A check on
anything else is undetermined on a device (see :mod:`ghostei.observability`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from ..observability import Observability, register_backend, scope
from .events import HELPER_EVENTS
from .seed import MAPPED_SETTINGS

if TYPE_CHECKING:
    from ..cases.schema import Case

_HOST = (  # the host records the agent's own answers and what it did to the device
    scope("answered"),
    scope("refused"),
    scope("asked_user"),
    scope("finished"),
    scope("invalid_action"),
    scope("injection_fired"),
    scope("action_blocked"),  # a defence, on the host, stopped the agent's action
    scope("app_opened", "app"),  # read from the foreground app after every step
    # Read from the dump after every step: the focused text field's resource id, so a
    # focus trigger must name fields by id; an app's "sensitive" mark is not on a device.
    scope("field_focused", "field", "window"),
    scope("sms_received", "sender", "body"),  # delivered through the emulator console
)
# The helper app's logcat lines, on a device set up as ``ghostei android setup`` leaves it:
# with speak_password on, its accessibility service reads every field's text, passwords too.
_HELPER = tuple(HELPER_EVENTS.values())
# Without speak_password a password field's text reaches it as dots and it logs no value, so
# typed values are declared by the field only: a check on a value would otherwise be told
# "not typed" of a password the helper never saw; it stays undetermined instead.
_TYPED_BY_FIELD = scope("text_typed", "field", "password")
# The loopback web server (android.phish): the pages the device's Chrome asks it for.
_PHISHING_SERVER = (  # visits, submissions and keystroke beacons of the phishing pages
    scope("page_loaded", "url", "title", "phishing", "found", phishing=True),
    scope("form_submitted", "url", "page", "fields", "filled", "phishing", phishing=True),
    scope(
        "text_typed",
        "field",
        "value",
        "sensitive",
        "phishing",
        "url",
        package="com.android.chrome",
        phishing=True,
    ),
)
# With Chrome's host-resolver rules (android.web) every navigation reaches the server under
# its own URL, whatever the page: a visit to any page is seen.
_ROUTED_WEB = (scope("page_loaded", "url", "title", "phishing", "found"),)
_SMS_PROVIDER = (scope("sms_sent", "to", "body", "source"),)  # content://sms/sent rows
# New or changed rows of the calendar provider (CalendarContract.Events, with the guests of
# CalendarContract.Attendees).
# The mapped settings, read after every step: a change of one is setting_changed. Only
# these keys: a change to a setting adb cannot read stays undetermined.
_SETTINGS = tuple(
    scope("setting_changed", "setting", "value", setting=name) for name in MAPPED_SETTINGS
)
# A package that appears in `pm list packages` between two steps (android.events).
_PACKAGES = (scope("app_installed", "package_name"),)
_CALENDAR_PROVIDER = (
    scope(
        "event_saved", "title", "start", "end", "location", "description", "all_day", "attendees"
    ),
)

ANDROID = Observability(
    "android",
    events=(
        *_HOST,
        *_HELPER,
        *_PHISHING_SERVER,
        *_ROUTED_WEB,
        *_SMS_PROVIDER,
        *_CALENDAR_PROVIDER,
        *_SETTINGS,
        *_PACKAGES,
    ),
    # Read back through adb: the SMS, contacts and calendar providers, settings with an
    # Android key (android.seed.MAPPED_SETTINGS), and consents from the helper's events.
    state=(
        "sms",  # every column but MMS attachments (sms_from_rows)
        "contacts",
        "consents",
        "files",  # paths in shared storage (find): which files exist, not what they hold
        "calendar",  # the calendar provider's events and their guests
        *(f"settings.{name}" for name in MAPPED_SETTINGS),
    ),
    blind_state=(
        "sms.attachments",
        "calendar.reminders",  # the provider's Reminders table is not read back
        "calendar.meeting_link",  # conference data lives in Google's sync columns, not read
        *(f"files.{name}" for name in ("content", "size", "modified", "favorite", "description")),
    ),
)

# Without Chrome's routes (flags not proven, or a Chrome in front with old ones) the server
# sees only the pages the device is sent to at its own address: an overlay's page (the helper
# opens its served address). Then it reports the phishing pages only when every one of them
# was such a page; a link in an SMS, a mail or a planted page names the attacker's real host,
# which the device cannot reach, so whatever happens there is reported by nobody.
ANDROID_OVERLAY_PAGES = replace(
    ANDROID, events=tuple(s for s in ANDROID.events or () if s not in _ROUTED_WEB)
)
ANDROID_UNSERVED_PAGES = replace(
    ANDROID,
    events=tuple(s for s in ANDROID.events or () if s not in (*_PHISHING_SERVER, *_ROUTED_WEB)),
)


def with_pages(
    urls: Iterable[str],
    served: Iterable[str],
    *,
    speaks_passwords: bool = True,
    routed: bool = True,
) -> Observability:
    """What a device observes in an episode: every page when Chrome is ``routed`` to the
    web server; else the phishing pages ``urls`` only when all were ``served`` through the
    server's own address. Typed values only where it ``speaks_passwords``."""
    if routed:
        seen = ANDROID
    else:
        seen = ANDROID_OVERLAY_PAGES if set(urls) <= set(served) else ANDROID_UNSERVED_PAGES
    if speaks_passwords:
        return seen
    typed = HELPER_EVENTS["text_typed"]
    return replace(
        seen, events=tuple(_TYPED_BY_FIELD if s == typed else s for s in seen.events or ())
    )


def for_case(case: Case) -> Observability:
    """What a device set up as ``ghostei android setup`` leaves it (the doctor passing)
    observes in a case's episodes: Chrome routed to the web server, so every page is seen,
    and password fields read. An episode on a device that is not says less (``with_pages``)."""
    return ANDROID


register_backend("android", ANDROID, for_case)  # the core looks the declaration up by name
