"""PhotoNote: notes with photos attached; write, edit, lock, share and delete them.

A note's photos are image files in shared storage, picked from what Gallery shows. PhotoNote
is a share target for files: sharing photos to it starts a new note holding them.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ...world import Note
from ..ui import (
    MUTED,
    Color,
    Node,
    Style,
    button,
    card,
    column,
    form_field,
    icon_button,
    row,
    scroll,
    spacer,
    text,
    text_field,
    top_bar,
)
from .base import App, AppIcon, SharePayload, register_app
from .gallery import DANGER, confirm_dialog, date_label, grid, media, thumbnail

BRAND: Color = (245, 124, 0)
PAGE: Color = (255, 248, 240)
WHITE: Color = (255, 255, 255)


@register_app
class PhotoNote(App):
    """PhotoNote, a notebook app with photo attachments."""

    label = "PhotoNote"
    icon = AppIcon("N", BRAND)
    accepts_share = ("files",)

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.form: dict[str, str] = {}  # the editor's title and body
        self.form_photos: list[str] = []  # the editor's attached photos, by path
        self.pin = ""  # the unlock screen's PIN field
        self.wrong_pin = False
        self.unlocked: set[str] = set()  # locked notes opened with the PIN this session

    def receive_share(self, payload: SharePayload) -> None:
        # Shared files start a new note; shared text (if any) becomes its body.
        self.form = {"title": payload.subject, "body": payload.text}
        self.form_photos = list(payload.files)
        self.os.clear_focus()
        self.screens = [(self.home_screen, {}), ("edit", {})]

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        notes = sorted(self.os.world.notes, key=lambda n: n.time, reverse=True)
        cards = [self._note_card(n) for n in notes]
        if not cards:
            cards.append(text("No notes yet", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        return column(
            _bar("PhotoNote"),
            scroll(*cards, spacer(8), offset=self.offset(), on_scroll=self.set_offset, rid="notes"),
            row(
                spacer(0),
                button("New note", self._new, color=BRAND, rid="new_note", width=140),
                pad=(16, 8, 16, 16),
            ),
            style=Style(bg=PAGE),
        )

    def screen_note(self) -> Node:
        note = self._note()
        if note is None:
            return self._gone()
        kids: list[Node] = [
            _heading(note.title or "Untitled"),
            text(date_label(note.time), size=13, fg=MUTED, pad=(16, 2, 16, 8)),
            text(note.body, size=17, rid="note_body", pad=(16, 0, 16, 12)),
        ]
        photos = [f for f in (self.os.world.file(p) for p in note.photos) if f is not None]
        if photos:
            kids.append(text("Photos", size=15, weight=600, pad=(16, 4, 16, 8)))
            kids += grid([thumbnail(f, partial(self._show_photo, f.path)) for f in photos], 2)
        return column(
            _bar("Note", on_back=self.pop),
            scroll(*kids, spacer(12), offset=self.offset(), on_scroll=self.set_offset, rid="note"),
            row(
                button("Edit", lambda: self._edit(note), filled=False, color=BRAND, rid="edit"),
                button("Share", lambda: self._share(note), filled=False, color=BRAND, rid="share"),
                button(
                    "Delete",
                    lambda: self.push("confirm_delete", id=note.id),
                    filled=False,
                    color=DANGER,
                    rid="delete",
                ),
                pad=(12, 8, 12, 16),
                gap=8,
            ),
            style=Style(bg=PAGE),
        )

    def screen_unlock(self) -> Node:
        note = self._note()
        if note is None:
            return self._gone()
        field = text_field(
            self.pin,
            self._set_pin,
            hint="PIN",
            field_name="pin",
            password=True,
            rid="pin",
            on_submit=lambda: self._unlock(note),
        )
        field.margin = (24, 8, 24, 4)
        kids: list[Node] = [
            _bar("Locked note", on_back=self.pop),
            text(note.title or "Untitled", size=22, weight=600, pad=(24, 24, 24, 4)),
            text("Enter your PIN to open this note.", size=15, fg=MUTED, pad=(24, 0, 24, 8)),
            field,
        ]
        if self.wrong_pin:
            kids.append(text("Wrong PIN. Try again.", size=14, fg=DANGER, pad=(24, 0, 24, 0)))
        kids.append(
            row(
                spacer(0),
                button("Unlock", lambda: self._unlock(note), color=BRAND, width=120, rid="unlock"),
                pad=(24, 12, 24, 0),
            )
        )
        return column(*kids, style=Style(bg=PAGE))

    def screen_edit(self) -> Node:
        editing = self.args.get("id")
        attached: list[Node] = []
        for path in self.form_photos:
            name = path.rsplit("/", 1)[-1]
            attached.append(
                row(
                    text(name, size=15, rid="photo_name", pad=(0, 14, 0, 0)),
                    icon_button("x", f"Remove {name}", partial(self._detach, path)),
                    pad=(16, 0, 8, 0),
                    gap=8,
                )
            )
        can_save = any(v.strip() for v in self.form.values()) or bool(self.form_photos)
        add = button("Add photo", lambda: self.push("picker"), filled=False, color=BRAND)
        add.margin = (16, 8, 16, 8)
        return column(
            _bar(
                "Edit note" if editing else "New note",
                on_back=self.pop,
                actions=[
                    button(
                        "Save",
                        self._save if can_save else None,
                        enabled=can_save,
                        color=WHITE,
                        filled=False,
                        width=84,
                        rid="save",
                    )
                ],
            ),
            scroll(
                form_field("Title", self.form, "title", sensitive=False, rid="title"),
                form_field("Note", self.form, "body", sensitive=False, rid="body", multiline=True),
                text("Photos", size=15, weight=600, pad=(16, 8, 16, 0)),
                *attached,
                add,
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="editor",
            ),
            style=Style(bg=PAGE),
        )

    def screen_picker(self) -> Node:
        photos = [f for f in media(self.os.world.files) if f.kind == "image"]
        tiles = grid([thumbnail(f, partial(self._attach, f.path)) for f in photos])
        if not tiles:
            tiles = [text("No photos on this phone", fg=MUTED, align="center", pad=(0, 40, 0, 0))]
        return column(
            _bar("Choose a photo", on_back=self.pop),
            scroll(*tiles, offset=self.offset(), on_scroll=self.set_offset, rid="picker"),
            style=Style(bg=PAGE),
        )

    def screen_confirm_delete(self) -> Node:
        note = self._note()
        if note is None:
            return self._gone()
        return confirm_dialog(
            "Delete note?",
            f"“{note.title or 'Untitled'}” and its photo links will be deleted.",
            "Delete",
            lambda: self._delete(note),
            self.pop,
        )

    # ----- pieces -----------------------------------------------------------------------

    def _note_card(self, note: Note) -> Node:
        count = len(note.photos)
        preview = "Locked" if note.locked else note.body
        kids = [
            text(note.title or "Untitled", size=18, weight=600, max_lines=1, rid="title"),
            text(preview, size=15, fg=MUTED, max_lines=2, rid="preview"),
        ]
        if count:
            kids.append(text(f"{count} photo{'s' if count != 1 else ''}", size=13, fg=BRAND))
        return card(*kids, on_click=partial(self._open, note.id), rid="note_card", bg=WHITE)

    def _gone(self) -> Node:
        return column(
            _bar("PhotoNote", on_back=self.pop),
            text("This note no longer exists", fg=MUTED, align="center", pad=(0, 40, 0, 0)),
            style=Style(bg=PAGE),
        )

    # ----- handlers ---------------------------------------------------------------------

    def _note(self) -> Note | None:
        want = str(self.args.get("id", ""))
        return next((n for n in self.os.world.notes if n.id == want), None)

    def _open(self, note_id: str) -> None:
        note = next((n for n in self.os.world.notes if n.id == note_id), None)
        if note is None:
            return
        if note.locked and note.id not in self.unlocked:
            self.pin, self.wrong_pin = "", False
            self.push("unlock", id=note.id)
        else:
            self.push("note", id=note.id)

    def _set_pin(self, value: str) -> None:
        self.pin = value
        self.wrong_pin = False

    def _unlock(self, note: Note) -> None:
        if self.pin.strip() != self.os.world.owner.pin:
            self.pin, self.wrong_pin = "", True  # a lock screen clears a wrong PIN
            return
        self.unlocked.add(note.id)
        self.pin = ""
        self.os.clear_focus()
        self.screens[-1] = ("note", {"id": note.id})

    def _new(self) -> None:
        self.form, self.form_photos = {}, []
        self.push("edit")

    def _edit(self, note: Note) -> None:
        self.form = {"title": note.title, "body": note.body}
        self.form_photos = list(note.photos)
        self.push("edit", id=note.id)

    def _attach(self, path: str) -> None:
        if path not in self.form_photos:
            self.form_photos.append(path)
        self.pop()

    def _detach(self, path: str) -> None:
        self.form_photos = [p for p in self.form_photos if p != path]

    def _save(self) -> None:
        title = self.form.get("title", "").strip()
        body = self.form.get("body", "").strip()
        note = self._note()
        created = note is None
        if note is None:
            note = Note(id=self.fresh_id("n", [n.id for n in self.os.world.notes]), title=title)
            self.os.world.notes.append(note)
        note.title, note.body, note.photos = title, body, list(self.form_photos)
        note.time = self.os.now()
        self.os.log(
            "note_saved",
            id=note.id,
            title=note.title,
            body=note.body,
            photos=list(note.photos),
            created=created,
        )
        self.form, self.form_photos = {}, []
        self.os.clear_focus()
        self.screens = [(self.home_screen, {}), ("note", {"id": note.id})]

    def _delete(self, note: Note) -> None:
        self.issued.add(note.id)
        self.os.world.notes.remove(note)
        self.os.log("note_deleted", id=note.id, title=note.title)
        self.os.clear_focus()
        self.screens = [(self.home_screen, {})]

    def _share(self, note: Note) -> None:
        body = f"{note.title}\n{note.body}".strip()
        self.os.share(SharePayload(text=body, files=tuple(note.photos), subject=note.title))

    def _show_photo(self, path: str) -> None:
        self.os.open_app("Gallery", {"file": path})


def _heading(value: str) -> Node:
    return text(value, size=24, weight=600, rid="note_title", pad=(16, 8, 16, 0))


def _bar(title: str, **kw: Any) -> Node:
    """A top app bar in PhotoNote's orange."""
    return top_bar(title, bg=BRAND, fg=WHITE, **kw)
