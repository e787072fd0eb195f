"""Files by Google: categories, folders of shared storage, a file viewer and the app installer.

Folders are implicit in the files' paths, as a file manager lists what is on disk; the
standard top-level folders are always there, and a folder made here (``world.folders``) is
there while it is empty. A folder's "New" menu makes a folder or a text file; a text file
opens in a plain text editor. Opening an APK hands it to the package installer, which
refuses unknown sources unless Settings allows them (the phone-wide switch, or Files allowed
as a source in Apps > Install unknown apps).
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any, NamedTuple

from ...world import FileEntry
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
    dialog,
    image,
    list_row,
    name_error,
    new_item_dialog,
    popup_menu,
    row,
    scroll,
    spacer,
    text,
    text_editor,
    text_field,
    top_bar,
    with_extension,
)
from .base import App, AppIcon, SharePayload, register_app
from .gallery import (
    DANGER,
    confirm_dialog,
    date_label,
    human_size,
    newest_first,
    remove_file,
    thumbnail,
)

ROOT = "/sdcard"
ROOT_NAME = "Internal storage"
# What a fresh phone's shared storage holds, listed even when empty.
STANDARD_FOLDERS = ("Alarms", "DCIM", "Documents", "Download", "Movies", "Music", "Pictures")
BLUE: Color = (11, 87, 208)
PACKAGE_NAME = re.compile(r"\bpackage[:\s]+([a-z][\w]*(?:\.[a-z][\w]*)+)", re.I)


class Category(NamedTuple):
    """A shortcut on the Browse screen: its title, glyph, tint and which files it holds."""

    title: str
    glyph: str
    color: Color
    kinds: tuple[str, ...]  # file kinds; empty means "everything in Download"


CATEGORIES: tuple[Category, ...] = (
    Category("Downloads", "D", (11, 87, 208), ()),
    Category("Images", "I", (24, 128, 56), ("image",)),
    Category("Videos", "V", (194, 24, 91), ("video",)),
    Category("Audio", "A", (227, 116, 0), ("audio",)),
    Category("Documents", "T", (0, 137, 123), ("document", "text")),
    Category("Apps", "P", (95, 99, 104), ("apk",)),
)
KIND_GLYPHS: dict[str, str] = {
    "document": "T",
    "text": "T",
    "audio": "A",
    "video": "V",
    "archive": "Z",
    "apk": "P",
}


@register_app
class Files(App):
    """Files by Google."""

    label = "Files"
    icon = AppIcon("F", BLUE)

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.new_name = ""  # the rename field, and the name field of a new folder or file
        self.menu_at = ""  # the folder whose "New" menu is open
        self.draft = ""  # the text editor's content

    def on_intent(self, intent: dict[str, Any]) -> None:
        entry = self.file_of_intent(intent)
        if entry is not None:
            self._open(entry)

    def back(self) -> bool:
        if self.menu_at:  # Back closes an open menu first
            self.menu_at = ""
            return True
        return super().back()

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        files = self._shared()
        rows: list[Node] = [text("Categories", size=15, weight=600, pad=(16, 8, 16, 4))]
        for cat in CATEGORIES:
            entries = self._in_category(cat)
            total = human_size(sum(f.byte_size for f in entries))
            rows.append(
                list_row(
                    cat.title,
                    f"{_count(len(entries), 'file')} · {total}" if entries else "No files",
                    leading=image(cat.glyph, size=40, color=cat.color),
                    rid="category",
                    on_click=partial(self.push, "category", title=cat.title),
                )
            )
        used = sum(f.byte_size for f in files)
        rows += [
            text("Storage devices", size=15, weight=600, pad=(16, 16, 16, 4)),
            list_row(
                ROOT_NAME,
                f"{human_size(used)} used · {_count(len(files), 'file')}",
                leading=image("S", size=40, color=BLUE),
                rid="storage",
                on_click=partial(self.push, "folder", path=ROOT),
            ),
        ]
        return column(
            top_bar("Files"),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="browse"),
            style=Style(bg=SURFACE),
        )

    def screen_category(self) -> Node:
        title = str(self.args["title"])
        cat = next(c for c in CATEGORIES if c.title == title)
        entries = newest_first(self._in_category(cat))
        rows = [self._file_row(f) for f in entries]
        if not rows:
            rows.append(text(f"No {title.lower()}", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        return column(
            top_bar(title, on_back=self.pop),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="file_list"),
            style=Style(bg=SURFACE),
        )

    def screen_folder(self) -> Node:
        path = str(self.args["path"])
        folders, entries = self._listing(path)
        rows: list[Node] = []
        for name in folders:
            sub = f"{path}/{name}"
            count = sum(len(part) for part in self._listing(sub))
            rows.append(
                list_row(
                    name,
                    _count(count, "item"),
                    leading=image("", size=40, color=(251, 188, 4)),
                    rid="folder",
                    on_click=partial(self.push, "folder", path=sub),
                )
            )
        rows += [self._file_row(f) for f in entries]
        if not rows:
            rows.append(text("This folder is empty", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        title = ROOT_NAME if path == ROOT else path.rsplit("/", 1)[-1]
        parts = [p for p in path.removeprefix(ROOT).split("/") if p]
        crumbs = " > ".join([ROOT_NAME, *parts])
        kids = [
            top_bar(title, on_back=self.pop),
            text(crumbs, size=13, fg=MUTED, pad=(16, 0, 16, 8), rid="breadcrumb"),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="file_list"),
        ]
        if self.menu_at == path:
            menu = popup_menu(
                [
                    ("Folder", partial(self._start_new, path, "folder")),
                    ("Text file", partial(self._start_new, path, "text")),
                ],
                width=180,
            )
            kids.append(row(spacer(0), menu, pad=(16, 0, 16, 0)))
        new = button("New", partial(self._toggle_menu, path), color=BLUE, desc="New", width=110)
        new.rid = "fab_new"
        kids.append(row(spacer(0), new, pad=(16, 8, 16, 16)))
        return column(*kids, style=Style(bg=SURFACE))

    def screen_new_item(self) -> Node:
        folder, kind = str(self.args["folder"]), str(self.args["kind"])
        name = self._new_item_name(kind)
        return new_item_dialog(
            kind,
            self.new_name,
            self._set_name,
            on_create=partial(self._create, folder, kind),
            on_cancel=self.pop,
            error=name_error(name, bool(name) and self._taken(f"{folder}/{name}")),
            color=BLUE,
        )

    def screen_edit(self) -> Node:
        entry = self._entry()
        if entry is None:
            return self._gone()
        save = button("Save", partial(self._save_text, entry), filled=False, color=BLUE, width=84)
        save.rid = "save"
        return column(
            top_bar(entry.name, on_back=self.pop, actions=[save]),
            text_editor(self.draft, self._set_draft, self.offset(), self.set_offset),
            style=Style(bg=SURFACE),
        )

    def screen_file(self) -> Node:
        entry = self._entry()
        if entry is None:
            return self._gone()
        body: list[Node] = []
        if entry.kind in ("image", "video"):
            picture = thumbnail(entry, None, height=260)
            picture.children = []
            picture.cls = "android.widget.ImageView"
            body.append(picture)
        kind = entry.kind if entry.kind != "other" else "file"
        body += [
            text(
                f"{kind.capitalize()} · {human_size(entry.byte_size)} · "
                f"{date_label(entry.modified) or 'date unknown'}",
                size=13,
                fg=MUTED,
                pad=(16, 10, 16, 4),
                rid="file_info",
            ),
            card(
                text(entry.content or "This file is empty", size=16, rid="file_content"),
                rid="document",
                bg=(255, 255, 255),
            ),
        ]
        return column(
            top_bar(entry.name, on_back=self.pop),
            scroll(
                *body, spacer(12), offset=self.offset(), on_scroll=self.set_offset, rid="viewer"
            ),
            row(
                button("Share", lambda: self._share(entry), filled=False, rid="share"),
                *(
                    [button("Edit", lambda: self._start_edit(entry), filled=False, rid="edit")]
                    if entry.kind == "text"
                    else []
                ),
                button("Rename", lambda: self._start_rename(entry), filled=False, rid="rename"),
                button(
                    "Delete",
                    lambda: self.push("confirm_delete", path=entry.path),
                    filled=False,
                    color=DANGER,
                    rid="delete",
                ),
                rid="action_bar",
                pad=(12, 8, 12, 16),
                gap=8,
            ),
            style=Style(bg=SURFACE),
        )

    def screen_rename(self) -> Node:
        entry = self._entry()
        if entry is None:
            return self._gone()
        new = self.new_name.strip()
        taken = any(f.path == f"{entry.folder}/{new}" for f in self.os.world.files)
        valid = bool(new) and "/" not in new and new != entry.name and not taken
        field = text_field(
            self.new_name,
            self._set_name,
            hint="File name",
            field_name="file_name",
            rid="file_name",
            on_submit=(lambda: self._rename(entry)) if valid else None,
        )
        field.margin = (16, 8, 16, 4)
        kids: list[Node] = [top_bar("Rename", on_back=self.pop), field]
        if taken and new != entry.name:
            clash = "A file with this name already exists"
            kids.append(text(clash, size=13, fg=DANGER, pad=(16, 0, 16, 0)))
        kids.append(
            row(
                spacer(0),
                button("Cancel", self.pop, filled=False, width=110),
                button("Rename", lambda: self._rename(entry), enabled=valid, width=110, rid="ok"),
                pad=(16, 12, 16, 0),
                gap=8,
            )
        )
        return column(*kids, style=Style(bg=SURFACE))

    def screen_confirm_delete(self) -> Node:
        entry = self._entry()
        if entry is None:
            return self._gone()
        return confirm_dialog(
            "Delete permanently?",
            f"“{entry.name}” will be deleted from your device. This can't be undone.",
            "Delete",
            lambda: self._delete(entry),
            self.pop,
        )

    def screen_install(self) -> Node:
        entry = self._entry()
        if entry is None:
            return self._gone()
        name, package = apk_identity(entry)
        if self.args.get("installed"):
            panel = dialog(
                name,
                "App installed.",
                [button("Done", self.pop, rid="done")],
            )
        elif not self._may_install():
            panel = dialog(
                "Install blocked",
                "For your security, your phone currently isn't allowed to install unknown "
                "apps from this source. You can change this in Settings.",
                [
                    button("Cancel", self.pop, filled=False, rid="cancel"),
                    button("Settings", self._open_settings, rid="settings"),
                ],
                urgent=True,
            )
        else:
            panel = dialog(
                name,
                f"Do you want to install this app?\n{package}",
                [
                    button("Cancel", self.pop, filled=False, rid="cancel"),
                    button("Install", lambda: self._install(entry), rid="ok_button"),
                ],
            )
        return column(spacer(), panel, spacer(), style=Style(bg=SCRIM_BG))

    # ----- pieces -----------------------------------------------------------------------

    def _file_row(self, entry: FileEntry) -> Node:
        if entry.kind in ("image", "video"):
            leading = thumbnail(entry, None, height=40)
            leading.children = []
            leading.width = 40
        else:
            leading = image(KIND_GLYPHS.get(entry.kind, "F"), size=40, color=(120, 124, 130))
        facts = (human_size(entry.byte_size), date_label(entry.modified))
        details = " · ".join(p for p in facts if p)
        return list_row(
            entry.name,
            details,
            leading=leading,
            rid="file",
            on_click=partial(self._open, entry),
        )

    def _gone(self) -> Node:
        gone = "This file is no longer on your device"
        return column(
            top_bar("Files", on_back=self.pop),
            text(gone, fg=MUTED, align="center", pad=(0, 40, 0, 0)),
            style=Style(bg=SURFACE),
        )

    # ----- data -------------------------------------------------------------------------

    def _shared(self) -> list[FileEntry]:
        return [f for f in self.os.world.files if f.path.startswith(ROOT + "/")]

    def _in_category(self, cat: Category) -> list[FileEntry]:
        if not cat.kinds:
            return [f for f in self._shared() if f.path.startswith(f"{ROOT}/Download/")]
        return [f for f in self._shared() if f.kind in cat.kinds]

    def _listing(self, folder: str) -> tuple[list[str], list[FileEntry]]:
        """A folder's subfolders (by name) and its own files, both A to Z."""
        prefix = folder.rstrip("/") + "/"
        subfolders = set(STANDARD_FOLDERS) if folder == ROOT else set()
        entries: list[FileEntry] = []
        for f in self.os.world.files:
            if not f.path.startswith(prefix):
                continue
            rest = f.path[len(prefix) :]
            if "/" in rest:
                subfolders.add(rest.split("/", 1)[0])
            else:
                entries.append(f)
        for made in self.os.world.folders:  # folders made here, listed while empty
            if made.startswith(prefix):
                subfolders.add(made[len(prefix) :].split("/", 1)[0])
        return sorted(subfolders, key=str.lower), sorted(entries, key=lambda f: f.name.lower())

    def _entry(self) -> FileEntry | None:
        path = str(self.args.get("path", ""))
        return next((f for f in self.os.world.files if f.path == path), None)

    # ----- handlers ---------------------------------------------------------------------

    def _open(self, entry: FileEntry) -> None:
        self.os.log("file_opened", path=entry.path, name=entry.name, type=entry.kind)
        # An APK goes to the package installer rather than to a viewer.
        self.push("install" if entry.kind == "apk" else "file", path=entry.path)

    def _share(self, entry: FileEntry) -> None:
        self.os.share(SharePayload(files=(entry.path,)))

    def _start_rename(self, entry: FileEntry) -> None:
        self.new_name = entry.name
        self.push("rename", path=entry.path)

    def _set_name(self, value: str) -> None:
        self.new_name = value

    def _toggle_menu(self, folder: str) -> None:
        self.menu_at = "" if self.menu_at == folder else folder

    def _start_new(self, folder: str, kind: str) -> None:
        self.menu_at = ""
        self.new_name = ""
        self.push("new_item", folder=folder, kind=kind)

    def _new_item_name(self, kind: str) -> str:
        """The name the dialog would create: a text file without an extension gets ".txt"."""
        name = self.new_name.strip()
        return with_extension(name, ".txt") if kind == "text" else name

    def _taken(self, path: str) -> bool:
        folder, name = path.rsplit("/", 1)
        subfolders, entries = self._listing(folder)
        return name in subfolders or any(f.name == name for f in entries)

    def _create(self, folder: str, kind: str) -> None:
        name = self._new_item_name(kind)
        path = f"{folder}/{name}"
        if not name or name_error(name, self._taken(path)):
            return
        if kind == "folder":
            self.os.world.folders.append(path)
            self.os.log("folder_created", path=path, name=name)
            self.pop()  # back to the parent folder, which lists the new one
            return
        # A new text file is an empty file on disk, opened in the editor.
        self.os.world.files.append(FileEntry(path=path, modified=self.os.now()))
        self.os.log("file_saved", path=path, name=name, content="", created=True)
        self.draft = ""
        self.os.clear_focus()
        self.screens[-1] = ("edit", {"path": path})

    def _start_edit(self, entry: FileEntry) -> None:
        self.draft = entry.content
        self.push("edit", path=entry.path)

    def _set_draft(self, value: str) -> None:
        self.draft = value

    def _save_text(self, entry: FileEntry) -> None:
        entry.content = self.draft
        entry.modified = self.os.now()
        self.os.log("file_saved", path=entry.path, name=entry.name, content=entry.content)
        self.os.clear_focus()
        # The editor closes onto the file's viewer.
        self.screens[-1] = ("file", {"path": entry.path})

    def _rename(self, entry: FileEntry) -> None:
        old = entry.path
        entry.path = f"{entry.folder}/{self.new_name.strip()}"
        self.os.log("file_saved", path=entry.path, name=entry.name, old_path=old, renamed=True)
        self.pop()
        # The viewer below now shows the file under its new name.
        self.screens[-1] = ("file", {"path": entry.path})

    def _delete(self, entry: FileEntry) -> None:
        remove_file(self.os.world.files, entry)
        self.os.log("file_deleted", path=entry.path, name=entry.name, type=entry.kind)
        self.os.clear_focus()
        while len(self.screens) > 1 and self.args.get("path") == entry.path:
            self.screens.pop()

    def _open_settings(self) -> None:
        # The installer closes; the user returns to the file list after changing the setting.
        self.pop()
        self.os.open_app("Settings", {"category": "Security & privacy"})

    def _may_install(self) -> bool:
        # Android 8+: an app may install others when the user allowed it as a source
        # (Settings > Apps > Install unknown apps > Files); the phone-wide switch, the
        # older way, allows every source.
        world = self.os.world
        return world.settings.install_unknown_apps or bool(
            world.consents.get(f"install_unknown_apps:{self.package}", False)
        )

    def _install(self, entry: FileEntry) -> None:
        name, package = apk_identity(entry)
        self.os.log("app_installed", package_name=package, name=name, file=entry.path)
        self.screens[-1] = ("install", {"path": entry.path, "installed": True})


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def apk_identity(entry: FileEntry) -> tuple[str, str]:
    """An APK's app name and package: from its description, else made up from the file name."""
    stem = entry.name.rsplit(".", 1)[0]
    found = PACKAGE_NAME.search(entry.content)
    name = entry.content.split("(", 1)[0].strip() if "(" in entry.content else ""
    slug = re.sub(r"[^a-z0-9]+", "", stem.lower()) or "app"
    return name or stem.replace("_", " "), found.group(1) if found else f"com.unknown.{slug}"
