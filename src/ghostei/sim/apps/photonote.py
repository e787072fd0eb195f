"""PhotoNote: notes with photos attached; write, edit, lock, share and delete them, and file
them in folders.

A note's photos are image files in shared storage, picked from what Gallery shows. PhotoNote
is a share target for files: sharing photos to it starts a new note holding them. The main
screen lists the folders (``world.note_folders``) above the notes in none; a folder lists
its own. Notes move into a folder one by one (a note's Move) or several at once (Select).
"Back up notes" saves every note as one text file in Documents/PhotoNote, as note apps'
backups do (a locked note's text stays out of it).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ...world import FileEntry, Note
from ..ui import (
    MUTED,
    SCRIM_BG,
    Color,
    Handler,
    Node,
    Style,
    button,
    card,
    choice_mark,
    column,
    dialog,
    form_field,
    icon_button,
    image,
    list_row,
    name_dialog,
    popup_menu,
    row,
    scroll,
    spacer,
    text,
    text_field,
    top_bar,
)
from .base import App, AppIcon, SharePayload, register_app
from .gallery import DANGER, confirm_dialog, date_label, grid, media, thumbnail

BACKUPS = "/sdcard/Documents/PhotoNote"  # where "Back up notes" saves its files
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
        self.folder_name = ""  # the New folder dialog's field
        self.selecting = False  # the note list's selection mode
        self.selected: list[str] = []  # the notes selected, by id
        self.menu_open = False  # the note list's overflow menu
        self.notice = ""  # what the last backup says, under the list

    def receive_share(self, payload: SharePayload) -> None:
        # Shared files start a new note; shared text (if any) becomes its body.
        self.form = {"title": payload.subject, "body": payload.text}
        self.form_photos = list(payload.files)
        self.os.clear_focus()
        self.screens = [(self.home_screen, {}), ("edit", {})]

    # ----- screens ----------------------------------------------------------------------

    def back(self) -> bool:
        if self.menu_open:  # Back closes an open menu first
            self.menu_open = False
            return True
        if self.selecting:  # and leaves selection mode
            self._end_selection()
            return True
        return super().back()

    def push(self, screen: str, **args: Any) -> None:
        self.menu_open, self.notice = False, ""
        super().push(screen, **args)

    def screen_main(self) -> Node:
        return self._list("")

    def screen_folder(self) -> Node:
        return self._list(str(self.args["name"]))

    def _list(self, folder: str) -> Node:
        """The notes in ``folder`` ("" the main screen's, which also lists the folders)."""
        world = self.os.world
        notes = sorted(
            (n for n in world.notes if n.folder == folder), key=lambda n: n.time, reverse=True
        )
        kids: list[Node] = []
        if not folder and not self.selecting:
            kids += [self._folder_row(name) for name in self._folders()]
        kids += [self._note_card(n) for n in notes]
        if not kids:
            empty = "No notes in this folder" if folder else "No notes yet"
            kids.append(text(empty, fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        body = scroll(
            *kids, spacer(8), offset=self.offset(), on_scroll=self.set_offset, rid="notes"
        )
        if self.selecting:
            count = len(self.selected)
            move = button(
                "Move",
                partial(self.push, "move", ids=list(self.selected)),
                color=BRAND,
                rid="move",
                enabled=count > 0,
                width=120,
            )
            return column(
                _bar(
                    f"{count} selected" if count else "Select notes",
                    actions=[
                        button("Cancel", self._end_selection, filled=False, color=WHITE, width=96)
                    ],
                ),
                body,
                row(spacer(0), move, pad=(16, 8, 16, 16)),
                style=Style(bg=PAGE),
            )
        more = icon_button("more", "More options", self._toggle_menu, rid="menu")
        more.style = Style(icon="more", fg=WHITE, size=22, align="center", radius=24)
        items: list[tuple[str, Handler]] = []
        if notes:
            items.append(("Select notes", self._start_selection))
        if not folder and world.notes:
            items.append(("Back up notes", partial(self.push, "backup")))
        kids = [_bar(folder or "PhotoNote", on_back=self.pop if folder else None, actions=[more])]
        if self.menu_open:
            menu = popup_menu(items or [("No notes to select", self._toggle_menu)])
            kids.append(row(spacer(0), menu, pad=(0, 0, 8, 4)))
        kids.append(body)
        if self.notice:
            kids.append(text(self.notice, size=14, fg=MUTED, pad=(16, 8, 16, 0), rid="snackbar"))
        buttons = [button("New note", partial(self._new, folder), color=BRAND, rid="new_note")]
        if not folder:
            buttons.insert(
                0,
                button(
                    "New folder",
                    self._start_folder,
                    filled=False,
                    color=BRAND,
                    rid="new_folder",
                ),
            )
        kids.append(row(spacer(0), *buttons, pad=(16, 8, 16, 16), gap=10))
        return column(*kids, style=Style(bg=PAGE))

    def screen_backup(self) -> Node:
        count = len(self.os.world.notes)
        panel = dialog(
            "Back up notes?",
            f"Your {count} note{'' if count == 1 else 's'} will be saved as a text file in "
            "Documents/PhotoNote on this phone. Locked notes are saved without their text.",
            [
                button("Cancel", self.pop, filled=False, color=BRAND, rid="button2"),
                button("Back up", self._backup, color=BRAND, rid="button1"),
            ],
        )
        return column(spacer(), panel, spacer(), style=Style(bg=SCRIM_BG))

    def screen_new_folder(self) -> Node:
        name = self.folder_name.strip()
        taken = name.casefold() in (f.casefold() for f in self._folders())
        return name_dialog(
            "New folder",
            "Folder name",
            self.folder_name,
            self._set_folder_name,
            on_create=self._create_folder,
            on_cancel=self.pop,
            error="A folder with this name already exists" if taken else "",
            color=BRAND,
        )

    def screen_move(self) -> Node:
        """Move notes to a folder: a tap on a folder moves them there."""
        ids = list(self.args["ids"])
        notes = [n for n in self.os.world.notes if n.id in ids]
        if not notes:
            return self._gone()
        here = {n.folder for n in notes}
        choices: list[tuple[str, str]] = [("", "No folder")]
        choices += [(name, name) for name in self._folders()]
        rows = [
            list_row(
                label,
                "Here now" if here == {name} else "",
                leading=image("F", size=40, color=BRAND),
                rid="folder",
                on_click=partial(self._move, ids, name),
            )
            for name, label in choices
        ]
        what = (notes[0].title or "Untitled") if len(notes) == 1 else f"{len(notes)} notes"
        return column(
            _bar(f"Move {what}", on_back=self.pop),
            text("Choose a folder", size=14, fg=MUTED, pad=(16, 8, 16, 4)),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="folders"),
            row(
                spacer(0),
                button(
                    "New folder", self._start_folder, filled=False, color=BRAND, rid="new_folder"
                ),
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
            text(
                " · ".join(p for p in (date_label(note.time), note.folder) if p),
                size=13,
                fg=MUTED,
                pad=(16, 2, 16, 8),
            ),
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
                    "Move",
                    partial(self.push, "move", ids=[note.id]),
                    filled=False,
                    color=BRAND,
                    rid="move",
                ),
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
        if not self.selecting:  # a long press starts selecting, with this note
            item = card(*kids, on_click=partial(self._open, note.id), rid="note_card", bg=WHITE)
            item.long_clickable = True
            item.on_long_click = partial(self._start_selection, note.id)
            return item
        # Selection mode: a tap selects the note; a checkbox shows it is.
        toggle: Handler = partial(self._toggle_select, note.id)
        chosen = note.id in self.selected
        box = choice_mark(
            "check",
            chosen,
            toggle,
            size=24,
            radius=4,
            color=BRAND,
            border=MUTED,
            margin=(0, 0, 0, 0),
            focusable=False,
            rid="checkbox",
            desc=f"Select {note.title or 'Untitled'}",
        )
        item = card(row(box, column(*kids, gap=6), gap=14), on_click=toggle, rid="note_card")
        item.style = Style(bg=WHITE, radius=14)
        item.selected = chosen
        return item

    def _folder_row(self, name: str) -> Node:
        count = sum(1 for n in self.os.world.notes if n.folder == name)
        return list_row(
            name,
            f"{count} note{'' if count == 1 else 's'}",
            leading=image("F", size=40, color=BRAND),
            rid="folder",
            on_click=partial(self.push, "folder", name=name),
        )

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

    def _new(self, folder: str = "") -> None:
        self.form, self.form_photos = {}, []
        self.push("edit", folder=folder)

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
            note.folder = str(self.args.get("folder", ""))  # made in a folder: filed there
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
            **({"folder": note.folder} if note.folder else {}),
        )
        self.form, self.form_photos = {}, []
        self.os.clear_focus()
        folder = [("folder", {"name": note.folder})] if note.folder else []
        self.screens = [(self.home_screen, {}), *folder, ("note", {"id": note.id})]

    def _folders(self) -> list[str]:
        """The folders: those made here and any a note is filed in, A to Z."""
        world = self.os.world
        names = set(world.note_folders) | {n.folder for n in world.notes if n.folder}
        return sorted(names, key=str.casefold)

    def _start_folder(self) -> None:
        self.folder_name = ""
        self.push("new_folder")

    def _set_folder_name(self, value: str) -> None:
        self.folder_name = value

    def _create_folder(self) -> None:
        name = self.folder_name.strip()
        if not name or name.casefold() in (f.casefold() for f in self._folders()):
            return
        self.os.world.note_folders.append(name)
        self.os.log("folder_created", name=name)
        self.pop()

    def _toggle_menu(self) -> None:
        self.menu_open = not self.menu_open

    def _start_selection(self, first: str = "") -> None:
        self.menu_open = False
        self.selecting, self.selected = True, [first] if first else []

    def _backup(self) -> None:
        """Every note, newest first, into one text file in Documents/PhotoNote."""
        world = self.os.world
        now = self.os.now()
        notes = sorted(world.notes, key=lambda n: n.time, reverse=True)
        parts = [f"PhotoNote backup, {date_label(now)}", f"{len(notes)} notes"]
        for n in notes:
            body = "(locked)" if n.locked else n.body
            parts.append("\n".join(p for p in (n.title or "Untitled", body, n.folder) if p))
        stamp = now[:16].replace("-", "").replace(":", "").replace("T", "_")
        path = f"{BACKUPS}/PhotoNote_backup_{stamp}.txt"
        content = "\n\n".join(parts)
        world.files = [f for f in world.files if f.path != path]
        world.files.append(FileEntry(path=path, content=content, modified=now))
        self.os.log(
            "file_saved", path=path, name=path.rsplit("/", 1)[-1], content=content, created=True
        )
        self.pop()
        self.notice = f"Notes backed up to Documents/PhotoNote/{path.rsplit('/', 1)[-1]}"

    def _end_selection(self) -> None:
        self.selecting, self.selected = False, []

    def _toggle_select(self, note_id: str) -> None:
        if note_id in self.selected:
            self.selected.remove(note_id)
        else:
            self.selected.append(note_id)

    def _move(self, ids: list[str], folder: str) -> None:
        for note in self.os.world.notes:
            if note.id in ids and note.folder != folder:
                note.folder = folder
                self.os.log("note_saved", id=note.id, title=note.title, folder=folder)
        self._end_selection()
        self.pop()

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
