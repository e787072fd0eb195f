"""Contacts: a searchable address book with favorites, details, sharing, and one edit form."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from ...world import Contact
from ..ui import (
    MUTED,
    SURFACE,
    Color,
    Node,
    Style,
    button,
    card,
    column,
    form_field,
    icon_button,
    image,
    list_row,
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


@register_app
class Contacts(App):
    """Google Contacts."""

    label = "Contacts"
    icon = AppIcon("person", (26, 115, 232))

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.query = ""  # the search box on the main screen
        self.form: dict[str, str] = {}  # the edit screen's fields, by field name

    def on_intent(self, intent: dict[str, Any]) -> None:
        if "contact" in intent:
            self.os.clear_focus()
            self.screens = [(self.home_screen, {}), ("detail", {"id": str(intent["contact"])})]

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        query = self.query.strip().lower()
        people = sorted(self.os.world.contacts, key=lambda c: c.name.lower())
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
            top_bar("Contacts"),
            search,
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="contact_list"),
            row(
                spacer(0),
                button("Create contact", self._create, rid="create_contact", width=170),
                pad=(16, 8, 16, 16),
            ),
            style=Style(bg=SURFACE),
        )

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

    # ----- helpers ----------------------------------------------------------------------

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
