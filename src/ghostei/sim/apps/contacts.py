"""Contacts: a searchable address book with favorites, details, sharing, and one edit form.

Fix & manage (the list's menu button) holds Merge & fix (the duplicates Google Contacts
suggests merging: contacts with the same name, number or email) and the app's settings (Sort
by first or last name).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from ...world import Contact, same_number
from ..ui import (
    MUTED,
    SCRIM_BG,
    SURFACE,
    Color,
    Node,
    Style,
    button,
    card,
    column,
    divider,
    form_field,
    icon_button,
    image,
    input_dialog,
    list_row,
    radio_row,
    row,
    scroll,
    spacer,
    text,
    text_field,
    top_bar,
)
from .base import App, AppIcon, SharePayload, register_app

# Avatar tints; a contact keeps its colour because it is picked from the name.
AVATAR_COLORS: tuple[Color, ...] = (
    (26, 115, 232),
    (217, 48, 37),
    (24, 128, 56),
    (227, 116, 0),
    (161, 66, 244),
    (0, 137, 123),
    (194, 24, 91),
)
DANGER: Color = (179, 38, 30)
PRIMARY: Color = (103, 80, 164)
GOLD: Color = (227, 160, 8)

# The edit form: (field name, label, keeps personal data).
FORM: tuple[tuple[str, str, bool], ...] = (
    ("first_name", "First name", False),
    ("last_name", "Last name", False),
    ("phone", "Phone", True),
    ("email", "Email", True),
    ("note", "Notes", False),
)
SORT_BY: tuple[tuple[str, str], ...] = (("first_name", "First name"), ("last_name", "Last name"))


@register_app
class Contacts(App):
    """Google Contacts."""

    label = "Contacts"
    icon = AppIcon("person", (26, 115, 232))

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.query = ""  # the search box on the main screen
        self.form: dict[str, str] = {}  # the edit screen's fields, by field name
        self.dismissed: set[tuple[str, ...]] = set()  # duplicate suggestions dismissed

    def on_intent(self, intent: dict[str, Any]) -> None:
        if "contact" in intent:
            self.os.clear_focus()
            self.screens = [(self.home_screen, {}), ("detail", {"id": str(intent["contact"])})]

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        query = self.query.strip().lower()
        people = sorted(self.os.world.contacts, key=self._sort_key)
        found = [c for c in people if query in c.name.lower()]
        rows: list[Node] = []
        favorites = [c for c in found if c.favorite]
        if favorites and not query:  # favorites first, under their own header, as Android does
            rows.append(_header("Favorites"))
            rows += [self._row(c) for c in favorites]
            rows.append(_header("Contacts"))
            found = [c for c in found if not c.favorite]
        rows += [self._row(c) for c in found]
        if not rows:
            empty = f"No results for “{self.query.strip()}”" if query else "No contacts yet"
            rows.append(text(empty, fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        search = text_field(
            self.query,
            self._set_query,
            hint="Search contacts",
            field_name="search",
            rid="search_box",
            on_submit=self.os.clear_focus,  # results filter as you type; Enter hides the keyboard
        )
        search.margin = (16, 0, 16, 8)
        return column(
            top_bar(
                "Contacts",
                actions=[
                    icon_button(
                        "menu", "Fix & manage", partial(self.push, "manage"), rid="fix_and_manage"
                    )
                ],
            ),
            search,
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="contact_list"),
            row(
                spacer(0),
                button("Create contact", self._create, rid="create_contact", width=170),
                pad=(16, 8, 16, 16),
            ),
            style=Style(bg=SURFACE),
        )

    def screen_manage(self) -> Node:
        """Fix & manage: Merge & fix with its count of suggestions, and the app's settings."""
        groups = len(self._suggestions())
        return column(
            top_bar("Fix & manage", on_back=self.pop),
            scroll(
                list_row(
                    "Merge & fix",
                    f"{groups} suggestion{'s' if groups != 1 else ''}"
                    if groups
                    else "No suggestions",
                    rid="merge_and_fix",
                    on_click=partial(self.push, "merge"),
                ),
                divider(),
                list_row(
                    "Contacts app settings",
                    "Sort by, and more",
                    rid="settings",
                    on_click=partial(self.push, "settings"),
                ),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="manage_list",
            ),
            style=Style(bg=SURFACE),
        )

    def screen_merge(self) -> Node:
        """Merge duplicates: each suggestion with Merge and Dismiss, and Merge all."""
        groups = self._suggestions()
        kids: list[Node] = []
        if groups:
            kids.append(
                row(
                    text(
                        f"{len(groups)} duplicate{'s' if len(groups) > 1 else ''}",
                        size=16,
                        weight=600,
                        pad=(0, 12, 0, 0),
                    ),
                    button("Merge all", self._merge_all, rid="merge_all", width=120),
                    pad=(16, 8, 16, 8),
                )
            )
        for group in groups:
            people = [
                column(
                    text(c.name, size=16, rid="duplicate_name"),
                    text(c.phone or c.email or "No details", size=14, fg=MUTED),
                    gap=2,
                )
                for c in group
            ]
            kids.append(
                card(
                    *people,
                    row(
                        spacer(0),
                        button(
                            "Dismiss",
                            partial(self._dismiss, group),
                            filled=False,
                            rid="dismiss",
                            width=110,
                        ),
                        button("Merge", partial(self._merge, group), rid="merge", width=100),
                        gap=8,
                    ),
                    rid="duplicate_card",
                )
            )
        if not groups:
            kids.append(text("No duplicates found", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        return column(
            top_bar("Merge duplicates", on_back=self.pop),
            scroll(*kids, offset=self.offset(), on_scroll=self.set_offset, rid="suggestions"),
            style=Style(bg=SURFACE),
        )

    def screen_settings(self) -> Node:
        current = dict(SORT_BY)[self.os.world.contacts_sort_by]
        return column(
            top_bar("Contacts app settings", on_back=self.pop),
            scroll(
                text("Display options", size=14, weight=600, fg=PRIMARY, pad=(16, 12, 16, 4)),
                list_row("Sort by", current, rid="sort_by", on_click=partial(self.push, "sort")),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="settings_list",
            ),
            style=Style(bg=SURFACE),
        )

    def screen_sort(self) -> Node:
        """Sort by: a single-choice dialog over the settings; a choice closes it."""
        current = self.os.world.contacts_sort_by
        panel = input_dialog(
            "Sort by",
            column(
                *(
                    radio_row(label, key == current, partial(self._sort, key), inset=0)
                    for key, label in SORT_BY
                )
            ),
            [button("Cancel", self.pop, filled=False, rid="button2", width=110)],
        )
        return column(spacer(), panel, spacer(), style=Style(bg=SCRIM_BG))

    def screen_detail(self) -> Node:
        contact = self._contact(str(self.args["id"]))
        if contact is None:  # deleted meanwhile, or a stale deep link
            return column(
                top_bar("Contact", on_back=self.pop),
                text("This contact no longer exists", fg=MUTED, align="center", pad=(0, 40, 0, 0)),
                style=Style(bg=SURFACE),
            )
        rows = [("Phone", contact.phone), ("Email", contact.email), ("Notes", contact.note)]
        info = card(
            text("Contact info", size=14, weight=600, fg=MUTED),
            *(
                column(
                    text(label, size=13, fg=MUTED),
                    text(value, size=16, rid=f"contact_{label.lower()}"),
                    gap=2,
                )
                for label, value in rows
                if value
            ),
            rid="contact_info",
        )
        if not any(value for _, value in rows):
            info.children.append(text("No details saved", size=16, fg=MUTED))
        phone = contact.phone
        star = icon_button(
            "*",
            "Remove from favorites" if contact.favorite else "Add to favorites",
            lambda: self._toggle_favorite(contact),
            rid="favorite",
        )
        # Roboto has no star glyph: a large asterisk, gold when the contact is a favorite.
        star.style = replace(star.style, size=34, fg=GOLD if contact.favorite else MUTED)
        star.selected = contact.favorite
        share = button("Share", lambda: self._share(contact), filled=False, color=PRIMARY)
        share.rid, share.width = "share", 90
        return column(
            top_bar("", on_back=self.pop, actions=[star, share]),
            scroll(
                row(spacer(0), _avatar(contact, 96), spacer(0)),  # spacers centre it
                text(
                    contact.name, size=26, align="center", rid="contact_name", pad=(24, 12, 24, 16)
                ),
                row(
                    button(
                        "Message",
                        (lambda: self._message(phone)) if phone else None,
                        enabled=bool(phone),
                        color=PRIMARY,
                        rid="message",
                    ),
                    button("Edit", lambda: self._edit(contact), filled=False, rid="edit"),
                    button(
                        "Delete",
                        lambda: self._delete(contact),
                        filled=False,
                        color=DANGER,
                        rid="delete",
                    ),
                    pad=(16, 0, 16, 8),
                    gap=8,
                ),
                info,
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="contact_detail",
            ),
            style=Style(bg=SURFACE),
        )

    def screen_edit(self) -> Node:
        editing = self.args.get("id")
        fields: list[Node] = []
        for name, label, personal in FORM:
            fields.append(
                form_field(
                    label, self.form, name, sensitive=personal, rid=name, multiline=name == "note"
                )
            )
        can_save = any(self.form.get(n, "").strip() for n in ("first_name", "last_name", "phone"))
        return column(
            top_bar(
                "Edit contact" if editing else "Create contact",
                on_back=self.pop,
                actions=[
                    button(
                        "Save",
                        self._save if can_save else None,
                        enabled=can_save,
                        color=PRIMARY,
                        rid="save",
                        width=84,
                    )
                ],
            ),
            scroll(
                *fields, spacer(16), offset=self.offset(), on_scroll=self.set_offset, rid="editor"
            ),
            style=Style(bg=SURFACE),
        )

    # ----- handlers ---------------------------------------------------------------------

    def _set_query(self, value: str) -> None:
        self.query = value

    def _create(self) -> None:
        self.form = {}
        self.push("edit")

    def _edit(self, contact: Contact) -> None:
        first, _, last = contact.name.partition(" ")
        self.form = {
            "first_name": first,
            "last_name": last,
            "phone": contact.phone,
            "email": contact.email,
            "note": contact.note,
        }
        self.push("edit", id=contact.id)

    def _save(self) -> None:
        values = {name: self.form.get(name, "").strip() for name, _, _ in FORM}
        name = (
            " ".join(v for v in (values["first_name"], values["last_name"]) if v) or values["phone"]
        )
        contacts = self.os.world.contacts
        contact = self._contact(str(self.args.get("id", "")))
        created = contact is None
        if contact is None:
            contact = Contact(id=self.fresh_id("c", [c.id for c in contacts]), name=name)
            contacts.append(contact)
        contact.name, contact.phone = name, values["phone"]
        contact.email, contact.note = values["email"], values["note"]
        self.os.log(
            "contact_saved",
            id=contact.id,
            name=name,
            phone=contact.phone,
            email=contact.email,
            note=contact.note,
            created=created,
        )
        self.form = {}
        # Saving lands on the saved contact, whether the form came from the list or a detail.
        self.os.clear_focus()
        self.screens = [(self.home_screen, {}), ("detail", {"id": contact.id})]

    def _delete(self, contact: Contact) -> None:
        self.issued.add(contact.id)
        self.os.world.contacts.remove(contact)
        self.os.log(
            "contact_saved",
            id=contact.id,
            name=contact.name,
            phone=contact.phone,
            email=contact.email,
            note=contact.note,
            deleted=True,
        )
        self.pop()

    def _message(self, phone: str) -> None:
        self.os.open_app("Messages", {"thread": phone})

    def _toggle_favorite(self, contact: Contact) -> None:
        contact.favorite = not contact.favorite
        self.os.log(
            "contact_saved",
            id=contact.id,
            name=contact.name,
            phone=contact.phone,
            email=contact.email,
            note=contact.note,
            favorite=contact.favorite,
        )

    def _share(self, contact: Contact) -> None:
        # Android shares a contact as a vCard; its text is what the receiving app shows.
        card = vcard(contact)
        self.os.log("contact_shared", id=contact.id, name=contact.name, text=card)
        self.os.share(SharePayload(text=card, subject=contact.name))

    def _merge(self, group: list[Contact]) -> None:
        """Merge a suggestion into its first contact: its empty fields filled from the others,
        notes joined, a favorite if any was; the others removed."""
        kept, others = group[0], group[1:]
        for other in others:
            kept.phone = kept.phone or other.phone
            kept.email = kept.email or other.email
            if other.note and other.note not in kept.note:
                kept.note = "\n".join(n for n in (kept.note, other.note) if n)
            kept.favorite = kept.favorite or other.favorite
            self.issued.add(other.id)
            self.os.world.contacts.remove(other)
        self.os.log("contacts_merged", id=kept.id, name=kept.name, merged=[o.id for o in others])

    def _merge_all(self) -> None:
        for group in self._suggestions():
            self._merge(group)

    def _dismiss(self, group: list[Contact]) -> None:
        self.dismissed.add(tuple(c.id for c in group))

    def _sort(self, key: str) -> None:
        if self.os.world.contacts_sort_by != key:
            self.os.world.contacts_sort_by = "last_name" if key == "last_name" else "first_name"
            self.os.log("setting_changed", setting="contacts_sort_by", value=key)
        self.pop()

    # ----- helpers ----------------------------------------------------------------------

    def _sort_key(self, contact: Contact) -> tuple[str, str]:
        first, _, last = contact.name.lower().partition(" ")
        if self.os.world.contacts_sort_by == "last_name":
            return (last or first, first)
        return (contact.name.lower(), "")

    def _suggestions(self) -> list[list[Contact]]:
        """Duplicates to merge, not dismissed: see :func:`duplicates`."""
        return [
            g
            for g in duplicates(self.os.world.contacts)
            if tuple(c.id for c in g) not in self.dismissed
        ]

    def _row(self, contact: Contact) -> Node:
        return list_row(
            contact.name,
            contact.phone or contact.email,
            leading=_avatar(contact, 40),
            rid="contact_row",
            on_click=partial(self.push, "detail", id=contact.id),
        )

    def _contact(self, contact_id: str) -> Contact | None:
        return next((c for c in self.os.world.contacts if c.id == contact_id), None)


def duplicates(contacts: list[Contact]) -> list[list[Contact]]:
    """Groups of contacts that are one person: the same name, number or email, linked in
    chains, each in list order. A group is suggested only when merging loses nothing (a
    contact keeps one number and one email): no two of it hold different ones."""
    groups: list[list[Contact]] = []
    for contact in contacts:
        linked = [g for g in groups if any(_same_person(contact, c) for c in g)]
        merged = [c for g in linked for c in g] + [contact]
        groups = [g for g in groups if g not in linked] + [merged]
    order = {c.id: i for i, c in enumerate(contacts)}
    found = []
    for group in groups:
        group.sort(key=lambda c: order[c.id])
        numbers = {"".join(ch for ch in c.phone if ch.isdigit())[-10:] for c in group if c.phone}
        emails = {c.email.lower() for c in group if c.email}
        if len(group) > 1 and len(numbers) <= 1 and len(emails) <= 1:
            found.append(group)
    return sorted(found, key=lambda g: order[g[0].id])


def _same_person(a: Contact, b: Contact) -> bool:
    return (
        a.name.strip().lower() == b.name.strip().lower()
        or bool(a.phone and b.phone and same_number(a.phone, b.phone))
        or bool(a.email and b.email and a.email.lower() == b.email.lower())
    )


def vcard(contact: Contact) -> str:
    """A contact as the shared vCard's readable text: name, then the fields that are set."""
    lines = [contact.name]
    for label, value in (("Tel", contact.phone), ("Email", contact.email), ("Note", contact.note)):
        if value:
            lines.append(f"{label}: {value}")
    return "\n".join(lines)


def _header(label: str) -> Node:
    return text(label, size=14, weight=600, fg=PRIMARY, pad=(16, 12, 16, 4), rid="section_header")


def _avatar(contact: Contact, size: float) -> Node:
    name = contact.name
    letter = name[:1].upper() if name[:1].isalpha() else "#"
    # Keyed on the id, so renaming a contact keeps its colour.
    color = AVATAR_COLORS[sum(map(ord, contact.id)) % len(AVATAR_COLORS)]
    return image(letter, size=size, color=color)
