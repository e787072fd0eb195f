"""Nextcloud: browse the cloud by folder, upload phone files, share links, delete; make
folders and text files, star items, move or copy files.

A folder exists while some file lies under it, as in a path-keyed object store, and a folder
made in the app (``cloud.folders``) also while it is empty. Starred items are
``cloud.favorites``. Each row's overflow menu opens the item's actions sheet, as the real
client's does. Public links are derived from the file's path, so the same case always yields
the same URL.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import partial
from typing import Any

from ...world import CloudFile, FileEntry
from ..ui import (
    MUTED,
    SCRIM_BG,
    Color,
    Handler,
    Node,
    Style,
    bottom_sheet,
    button,
    card,
    choice_mark,
    column,
    icon_button,
    image,
    list_row,
    name_error,
    new_item_dialog,
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

BRAND: Color = (0, 130, 201)
WHITE: Color = (255, 255, 255)
PAGE: Color = (255, 255, 255)
DANGER: Color = (179, 38, 30)
STAR: Color = (255, 160, 0)
ROOT = "/"


def public_link(server: str, path: str) -> str:
    """The public share URL of a cloud path: a 15-character token, as Nextcloud issues."""
    token = hashlib.sha256(path.encode()).hexdigest()[:15]
    return f"{server.rstrip('/')}/s/{token}"


def folder_name(folder: str) -> str:
    """The last part of a folder path ("Nextcloud" for the root)."""
    return folder.rstrip("/").rsplit("/", 1)[-1] or "Nextcloud"


def join(folder: str, name: str) -> str:
    """A cloud path inside ``folder``."""
    return f"{folder.rstrip('/')}/{name}"


@register_app
class Nextcloud(App):
    """The Nextcloud Files client."""

    label = "Nextcloud"
    icon = AppIcon("N", BRAND)
    accepts_share = ("files",)

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.picked: list[str] = []  # phone files ticked in the upload picker
        self.incoming: tuple[str, ...] = ()  # files another app shared, awaiting upload
        self.destination = ROOT  # the folder chosen for shared files
        self.invitee = ""  # the "share with user" field
        self.new_name = ""  # the name field of a new folder or text file
        self.draft = ""  # the text editor's content
        self.target = ROOT  # the folder chosen on the Move or copy screen
        self.selected: list[str] = []  # files selected by their icons, in ``selected_in``
        self.selected_in = ROOT

    def back(self) -> bool:
        if self._selection():  # Back leaves selection mode first
            self.selected = []
            return True
        return super().back()

    def _selection(self) -> list[str]:
        """The files selected in the folder on screen (none elsewhere)."""
        here = self.screen == "main" and self.args.get("folder", ROOT) == self.selected_in
        return self.selected if here else []

    def receive_share(self, payload: SharePayload) -> None:
        # Like the real client: an upload screen asks where the shared files should go.
        self.incoming = payload.files
        self.destination = ROOT
        self.os.clear_focus()
        self.screens = [(self.home_screen, {}), ("receive", {})]

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        folder = str(self.args.get("folder", ROOT))
        subfolders, files = self._listing(folder)
        rows: list[Node] = [
            self._with_menu(
                list_row(
                    folder_name(sub),
                    _items(self._count(sub)) + (" · Shared" if self._link(sub) else ""),
                    leading=image("F", size=40, color=(0, 130, 201)),
                    rid="folder_row",
                    on_click=partial(self.push, "main", folder=sub),
                ),
                sub,
            )
            for sub in subfolders
        ]
        selection = self._selection()
        rows += [self._with_menu(self._file_row(f, folder, selection), f.path) for f in files]
        if not rows:
            rows.append(text("No files in here", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        root = folder == ROOT
        world = self.os.world
        header: list[Node] = []
        if root:
            host = world.cloud.server.split("://", 1)[-1]
            header.append(text(f"{world.cloud.user}@{host}", size=14, fg=MUTED, pad=(16, 8, 16, 4)))
        else:
            header.append(
                row(
                    text(folder, size=14, fg=MUTED, rid="breadcrumb", pad=(0, 12, 0, 0)),
                    button(
                        "Delete folder",
                        partial(self.push, "delete", path=folder, folder=True),
                        filled=False,
                        color=DANGER,
                        rid="delete_folder",
                        width=150,
                    ),
                    pad=(16, 4, 16, 4),
                    gap=8,
                )
            )
        if selection:  # selection mode: its bar and its actions replace the usual ones
            clear = icon_button("x", "Clear selection", self._clear_selection)
            clear.style = Style(icon="x", fg=WHITE, size=22, align="center", radius=24)
            count = f"{len(selection)} selected"
            return column(
                row(
                    clear,
                    text(count, size=22, fg=WHITE, rid="toolbar_title", pad=(4, 10, 0, 0)),
                    cls="android.view.ViewGroup",
                    rid="toolbar",
                    height=64,
                    pad=(4, 8, 8, 8),
                    gap=4,
                    style=Style(bg=BRAND),
                ),
                *header,
                scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="list_root"),
                row(
                    spacer(0),
                    button(
                        "Move or copy",
                        partial(self._move_selected, folder),
                        color=BRAND,
                        rid="action_move_copy",
                        width=170,
                    ),
                    pad=(16, 8, 16, 16),
                ),
                style=Style(bg=PAGE),
            )
        return column(
            _bar(folder_name(folder), on_back=None if root else self.pop),
            *header,
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="list_root"),
            row(
                spacer(0),
                button(
                    "New",
                    partial(self.push, "new", folder=folder),
                    filled=False,
                    color=BRAND,
                    rid="fab_new",
                    desc="New",
                    width=110,
                ),
                button(
                    "Upload",
                    partial(self._start_upload, folder),
                    color=BRAND,
                    rid="fab_upload",
                    desc="Upload",
                    width=130,
                ),
                pad=(16, 8, 16, 16),
            ),
            style=Style(bg=PAGE),
        )

    def screen_actions(self) -> Node:
        """An item's actions sheet, from its row's overflow menu."""
        path = str(self.args["path"])
        f = self._file(path)
        if f is None and path not in self._all_folders():
            return _missing(self.pop)
        starred = path in self.os.world.cloud.favorites
        items: list[tuple[str, Handler]] = [
            (
                "Remove from favorites" if starred else "Add to favorites",
                partial(self._toggle_favorite, path),
            )
        ]
        if f is not None:
            items += [
                ("Details", partial(self._details, path)),
                ("Move or copy", partial(self._start_move, path)),
                ("Share", partial(self._replace, "share", path=path)),
                ("Delete", partial(self._replace, "delete", path=path)),
            ]
            about = f"{_size(_bytes(f))} · {_date(f.modified)}"
        else:
            items += [
                ("Share", partial(self._replace, "share", path=path)),
                ("Delete", partial(self._replace, "delete", path=path, folder=True)),
            ]
            about = f"Folder · {_items(self._count(path))}"
        rows = [
            text(label, size=17, pad=(0, 12, 0, 12), rid="menu_item", on_click=handler)
            for label, handler in items
        ]
        sheet = bottom_sheet(f.name if f is not None else folder_name(path), about, rows)
        return column(spacer(), sheet, style=Style(bg=SCRIM_BG))

    def screen_new(self) -> Node:
        """The "New" sheet: a folder or a text file in the current folder."""
        folder = str(self.args["folder"])
        rows = [
            text(label, size=17, pad=(0, 12, 0, 12), rid="menu_item", on_click=handler)
            for label, handler in (
                ("New folder", partial(self._start_new, folder, "folder")),
                ("New text file", partial(self._start_new, folder, "text")),
            )
        ]
        sheet = bottom_sheet("Create new", f"In {folder_name(folder)}", rows)
        return column(spacer(), sheet, style=Style(bg=SCRIM_BG))

    def screen_new_item(self) -> Node:
        folder, kind = str(self.args["folder"]), str(self.args["kind"])
        name = self._new_item_name(kind)
        return new_item_dialog(
            kind,
            self.new_name,
            self._set_new_name,
            on_create=partial(self._create, folder, kind),
            on_cancel=self.pop,
            error=name_error(name, bool(name) and self._taken(join(folder, name))),
            color=BRAND,
        )

    def screen_edit(self) -> Node:
        f = self._file(str(self.args["path"]))
        if f is None:
            return _missing(self.pop)
        save = button("Save", partial(self._save_text, f), filled=False, color=WHITE, width=84)
        save.rid = "save"
        return column(
            top_bar(f.name, on_back=self.pop, actions=[save], bg=BRAND, fg=WHITE),
            text_editor(self.draft, self._set_draft, self.offset(), self.set_offset),
            style=Style(bg=PAGE),
        )

    def screen_move(self) -> Node:
        """Move or copy files: pick the target folder, then Move or Copy."""
        files = [f for f in map(self._file, self.args["paths"]) if f is not None]
        if not files:
            return _missing(self.pop)
        same = all(self.target == f.folder for f in files)
        what = files[0].name if len(files) == 1 else _items(len(files))
        return column(
            _bar(
                f"Move or copy {what}",
                on_back=self.pop,
                actions=[
                    icon_button("+", "New folder", self._new_target_folder, rid="folder_picker_new")
                ],
            ),
            scroll(
                text("Choose the target folder", size=14, fg=MUTED, pad=(16, 8, 16, 4)),
                *self._folder_choices(self.target, self._set_target),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="folder_picker",
            ),
            row(
                button(
                    "Copy",
                    partial(self._move, files, False),
                    filled=False,
                    color=BRAND,
                    rid="copy",
                    enabled=not same,
                ),
                button(
                    "Move",
                    partial(self._move, files, True),
                    color=BRAND,
                    rid="move",
                    enabled=not same,
                ),
                pad=(16, 8, 16, 16),
                gap=10,
            ),
            style=Style(bg=PAGE),
        )

    def screen_file(self) -> Node:
        f = self._file(str(self.args["path"]))
        if f is None:
            return _missing(self.pop)
        if f.share_link:
            sharing = f"Public link: {f.share_link}"
        elif f.shared_with:
            sharing = "Shared with " + ", ".join(f.shared_with)
        else:
            sharing = "Not shared"
        return column(
            _bar(f.name, on_back=self.pop),
            scroll(
                card(
                    _fact("Size", _size(_bytes(f))),
                    _fact("Modified", _date(f.modified)),
                    _fact("Folder", f.folder),
                    text(sharing, size=15, rid="share_status"),
                    rid="details",
                ),
                row(
                    button("Share", partial(self.push, "share", path=f.path), color=BRAND),
                    button(
                        "Delete",
                        partial(self.push, "delete", path=f.path),
                        filled=False,
                        color=DANGER,
                        rid="delete",
                    ),
                    pad=(16, 6, 16, 6),
                    gap=10,
                ),
                card(
                    text("Preview", size=14, weight=600, fg=MUTED),
                    text(f.content or "No preview available", size=16, rid="preview"),
                    rid="preview_card",
                ),
                spacer(16),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="file_details",
            ),
            style=Style(bg=PAGE),
        )

    def screen_share(self) -> Node:
        path = str(self.args["path"])
        f = self._file(path)
        if f is None and path not in self._all_folders():
            return _missing(self.pop)
        name = f.name if f is not None else folder_name(path)
        url = self._link(path)
        link: list[Node] = [text("Share link", size=16, weight=700)]
        if url:
            link += [
                text(url, size=15, fg=BRAND, rid="share_link"),
                row(
                    button("Send link", partial(self._send_link, url, name), color=BRAND),
                    button(
                        "Copy link",
                        partial(self.os.set_clipboard, url),
                        filled=False,
                        color=BRAND,
                    ),
                    gap=10,
                ),
            ]
        else:
            what = "the file" if f is not None else "the folder and every file in it"
            link += [
                text(f"Anyone with the link can view {what}.", size=14, fg=MUTED),
                button(
                    "Create public link",
                    partial(self._create_link, path),
                    color=BRAND,
                    rid="create_link",
                ),
            ]
        if f is None:  # a folder: its public link
            return column(
                _bar("Share", on_back=self.pop),
                scroll(
                    text(name, size=18, weight=600, rid="file_name", pad=(16, 12, 16, 4)),
                    card(*link, rid="link_card", bg=(240, 246, 251)),
                    offset=self.offset(),
                    on_scroll=self.set_offset,
                    rid="share_options",
                ),
                style=Style(bg=PAGE),
            )
        invite = text_field(
            self.invitee,
            self._set_invitee,
            hint="Name, email or federated cloud ID",
            field_name="share_with",
            rid="search_user",
            on_submit=partial(self._share_with, f),
        )
        people: list[Node] = [
            text("Share with users", size=16, weight=700),
            invite,
            button(
                "Share",
                partial(self._share_with, f),
                color=BRAND,
                rid="share_with_user",
                enabled=bool(self.invitee.strip()),
            ),
        ]
        people += [text(f"Shared with {who}", size=15, rid="sharee") for who in f.shared_with]
        return column(
            _bar("Share", on_back=self.pop),
            scroll(
                text(f.name, size=18, weight=600, rid="file_name", pad=(16, 12, 16, 4)),
                card(*link, rid="link_card", bg=(240, 246, 251)),
                card(*people, rid="users_card", bg=(240, 246, 251)),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="share_options",
            ),
            style=Style(bg=PAGE),
        )

    def screen_delete(self) -> Node:
        path = str(self.args["path"])
        is_folder = bool(self.args.get("folder"))
        count = self._count(path) if is_folder else 1
        if is_folder and path not in self._all_folders():
            return _missing(self.pop)
        what = (
            f"The folder {folder_name(path)} and the {_items(count)} in it"
            if is_folder
            else path.rsplit("/", 1)[-1]
        )
        return column(
            _bar("Delete", on_back=self.pop),
            text(
                f"Delete {folder_name(path) if is_folder else path.rsplit('/', 1)[-1]}?",
                size=24,
                weight=600,
                pad=(24, 24, 24, 8),
            ),
            text(
                f"{what} will be deleted for everyone it is shared with.",
                size=16,
                fg=MUTED,
                pad=(24, 0, 24, 24),
            ),
            column(
                button("Delete", partial(self._delete, path, is_folder), color=DANGER),
                button("Cancel", self.pop, filled=False, color=BRAND, rid="cancel"),
                pad=(24, 0, 24, 0),
                gap=12,
            ),
            style=Style(bg=PAGE),
        )

    def screen_picker(self) -> Node:
        folder = str(self.args["folder"])
        phone_files = sorted(self.os.world.files, key=lambda f: (f.folder, f.name.lower()))
        rows = [self._pick_row(f) for f in phone_files]
        if not rows:
            rows.append(text("No files on this phone", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        count = len(self.picked)
        return column(
            _bar(f"Upload to {folder_name(folder)}", on_back=self.pop),
            text("Choose files from this phone", size=14, fg=MUTED, pad=(16, 8, 16, 4)),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="local_files"),
            row(
                button("Cancel", self.pop, filled=False, color=BRAND),
                button(
                    f"Upload ({count})" if count else "Upload",
                    partial(self._upload_picked, folder),
                    color=BRAND,
                    rid="upload_files",
                    desc="Upload",
                    enabled=count > 0,
                ),
                pad=(16, 8, 16, 16),
                gap=10,
            ),
            style=Style(bg=PAGE),
        )

    def screen_receive(self) -> Node:
        names = [p.rsplit("/", 1)[-1] for p in self.incoming]
        choices = self._folder_choices(self.destination, self._set_destination)
        return column(
            _bar("Upload to Nextcloud", on_back=self._leave_receive),
            scroll(
                card(
                    text("Files", size=14, weight=600, fg=MUTED),
                    *(text(n, size=16, rid="shared_file") for n in names),
                    rid="incoming",
                ),
                text("Choose the destination folder", size=14, fg=MUTED, pad=(16, 8, 16, 4)),
                *choices,
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="upload_destination",
            ),
            row(
                button("Cancel", self._leave_receive, filled=False, color=BRAND),
                button(
                    "Upload",
                    self._upload_incoming,
                    color=BRAND,
                    rid="upload_shared",
                    enabled=bool(self.incoming),
                ),
                pad=(16, 8, 16, 16),
                gap=10,
            ),
            style=Style(bg=PAGE),
        )

    # ----- pieces -----------------------------------------------------------------------

    def _with_menu(self, item: Node, path: str) -> Node:
        """A list row with its star (when starred) and its overflow button."""
        name = path.rstrip("/").rsplit("/", 1)[-1]
        if path in self.os.world.cloud.favorites:
            star = Node(
                cls="android.widget.ImageView",
                desc="Favorite",
                rid="favorite_action",
                width=24,
                height=24,
                margin=(0, 12, 0, 12),
                style=Style(icon="star", fg=STAR, size=20, align="center"),
            )
            item.children.append(star)
        more = icon_button("more", f"More options for {name}", partial(self._actions, path))
        more.rid = "overflow_menu"
        item.children.append(more)
        return item

    def _file_row(self, f: CloudFile, folder: str, selection: list[str]) -> Node:
        select = partial(self._toggle_select, folder, f.path)
        item = list_row(
            f.name,
            f"{_size(_bytes(f))} · {_date(f.modified)}"
            + (" · Shared" if f.share_link or f.shared_with else ""),
            leading=self._file_icon(f, folder, f.path in selection),
            rid="file_row",
            # In selection mode a tap on a row selects it too; a long press always does.
            on_click=select if selection else partial(self._open_file, f.path),
        )
        item.long_clickable, item.on_long_click = True, select
        item.selected = f.path in selection
        return item

    def _file_icon(self, f: CloudFile, folder: str, selected: bool) -> Node:
        """A file's icon, which selects it (as the client's thumbnails do); a tick once it is."""
        icon = image(
            "check" if selected else _kind_glyph(f.name),
            f"Select {f.name}",
            size=40,
            color=BRAND if selected else (120, 144, 156),
        )
        icon.rid = "thumbnail"
        icon.clickable = icon.checkable = True
        icon.checked = selected
        icon.on_click = partial(self._toggle_select, folder, f.path)
        return icon

    def _folder_choices(self, chosen: str, on_pick: Callable[[str], None]) -> list[Node]:
        """Every folder as a choice, the chosen one ticked (upload destination, move target)."""
        return [
            row(
                _checkbox(folder == chosen, partial(on_pick, folder)),
                text(folder if folder != ROOT else "/ (Nextcloud)", size=16),
                clickable=True,
                on_click=partial(on_pick, folder),
                rid="destination",
                pad=(16, 10, 16, 10),
                gap=14,
            )
            for folder in [ROOT, *self._all_folders()]
        ]

    def _pick_row(self, f: FileEntry) -> Node:
        ticked = f.path in self.picked
        toggle = partial(self._toggle_pick, f.path)
        item = list_row(
            f.name,
            f"{f.folder.removeprefix('/sdcard')} · {_size(f.byte_size)}",
            leading=_checkbox(ticked, toggle),
            rid="local_file",
            on_click=toggle,
        )
        item.selected = ticked
        return item

    # ----- handlers ---------------------------------------------------------------------

    def _actions(self, path: str) -> None:
        self.push("actions", path=path)

    def _replace(self, screen: str, **args: Any) -> None:
        """Leave the actions sheet for the screen its item opens."""
        self.os.clear_focus()
        self.screens[-1] = (screen, args)

    def _details(self, path: str) -> None:
        self.pop()
        self._open_file(path)

    def _toggle_favorite(self, path: str) -> None:
        favorites = self.os.world.cloud.favorites
        starred = path not in favorites
        if starred:
            favorites.append(path)
        else:
            favorites.remove(path)
        name = path.rstrip("/").rsplit("/", 1)[-1]
        self.os.log("file_saved", path=path, name=name, favorite=starred, cloud=True)
        self.pop()

    def _start_new(self, folder: str, kind: str) -> None:
        self.new_name = ""
        self._replace("new_item", folder=folder, kind=kind)

    def _set_new_name(self, value: str) -> None:
        self.new_name = value

    def _new_item_name(self, kind: str) -> str:
        """The name the dialog would create: a text file without an extension gets ".md",
        as Nextcloud Text names its files."""
        name = self.new_name.strip()
        return with_extension(name, ".md") if kind == "text" else name

    def _taken(self, path: str) -> bool:
        return self._file(path) is not None or path in self._all_folders()

    def _create(self, folder: str, kind: str) -> None:
        name = self._new_item_name(kind)
        path = join(folder, name)
        if not name or name_error(name, self._taken(path)):
            return
        cloud = self.os.world.cloud
        if kind == "folder":
            cloud.folders.append(path)
            self.os.log("folder_created", path=path, name=name, cloud=True)
            self.pop()  # back to the listing, which shows the new folder
            if self.screen == "move":  # the folder picker's: the new folder is the target
                self.target = path
            return
        # Nextcloud Text makes the file on the server, then opens it in its editor.
        cloud.files.append(CloudFile(path=path, modified=self.os.now()))
        self.os.log("file_saved", path=path, name=name, content="", created=True, cloud=True)
        self.draft = ""
        self._replace("edit", path=path)

    def _set_draft(self, value: str) -> None:
        self.draft = value

    def _save_text(self, f: CloudFile) -> None:
        f.content = self.draft
        f.size = 0  # sized by its content again
        f.modified = self.os.now()
        self.os.log("file_saved", path=f.path, name=f.name, content=f.content, cloud=True)
        self._replace("file", path=f.path)  # the editor closes onto the file's details

    def _start_move(self, path: str) -> None:
        f = self._file(path)
        self.target = f.folder if f is not None else ROOT
        self._replace("move", paths=[path])

    def _move_selected(self, folder: str) -> None:
        paths, self.selected = list(self.selected), []
        self.target = folder
        self.push("move", paths=paths)

    def _new_target_folder(self) -> None:
        """The folder picker's New folder: made in the folder chosen so far."""
        self.new_name = ""
        self.push("new_item", folder=self.target, kind="folder")

    def _set_target(self, folder: str) -> None:
        self.target = folder

    def _move(self, files: list[CloudFile], moving: bool) -> None:
        cloud = self.os.world.cloud
        for f in files:
            if f.folder == self.target:
                continue
            old, path = f.path, join(self.target, f.name)
            cloud.files = [c for c in cloud.files if c.path != path]  # the client's "overwrite"
            if moving:
                f.path = path
                if old in cloud.favorites:
                    cloud.favorites[cloud.favorites.index(old)] = path
                self.os.log(
                    "file_saved", path=path, name=f.name, old_path=old, moved=True, cloud=True
                )
            else:
                update = {"path": path, "share_link": "", "shared_with": []}
                cloud.files.append(f.model_copy(deep=True, update=update))
                self.os.log("file_saved", path=path, name=f.name, old_path=old, cloud=True)
        self.pop()

    def _toggle_select(self, folder: str, path: str) -> None:
        if self.selected_in != folder:
            self.selected, self.selected_in = [], folder
        if path in self.selected:
            self.selected.remove(path)
        else:
            self.selected.append(path)

    def _clear_selection(self) -> None:
        self.selected = []

    def _open_file(self, path: str) -> None:
        f = self._file(path)
        if f is not None:
            self.os.log("file_opened", path=path, name=f.name, cloud=True)
            self.push("file", path=path)

    def _start_upload(self, folder: str) -> None:
        self.picked = []
        self.push("picker", folder=folder)

    def _toggle_pick(self, path: str) -> None:
        if path in self.picked:
            self.picked.remove(path)
        else:
            self.picked.append(path)

    def _upload_picked(self, folder: str) -> None:
        for path in self.picked:
            self._upload(path, folder, via="picker")
        self.picked = []
        self.pop()

    def _set_destination(self, folder: str) -> None:
        self.destination = folder

    def _upload_incoming(self) -> None:
        for path in self.incoming:
            self._upload(path, self.destination, via="share")
        self.incoming = ()
        self.os.clear_focus()
        target = self.destination
        self.screens = [(self.home_screen, {})]
        if target != ROOT:
            self.screens.append(("main", {"folder": target}))

    def _leave_receive(self) -> None:
        self.incoming = ()
        self.pop()

    def _upload(self, source: str, folder: str, *, via: str) -> None:
        local = self.os.world.file(source)
        if local is None:  # removed from the phone meanwhile
            return
        cloud = self.os.world.cloud
        path = join(folder, local.name)
        # Uploading a name that exists replaces it (the client's "overwrite" choice).
        cloud.files = [f for f in cloud.files if f.path != path]
        cloud.files.append(
            CloudFile(
                path=path, content=local.content, size=local.byte_size, modified=self.os.now()
            )
        )
        self.os.log("file_uploaded", source=local.path, path=path, folder=folder, via=via)

    def _link(self, path: str) -> str:
        """A file's or folder's public link ("" when it has none)."""
        f = self._file(path)
        return f.share_link if f is not None else self.os.world.cloud.folder_links.get(path, "")

    def _create_link(self, path: str) -> None:
        cloud = self.os.world.cloud
        url = public_link(cloud.server, path)
        f = self._file(path)
        if f is not None:
            f.share_link = url
        else:
            cloud.folder_links[path] = url
        self.os.log("share_link_created", path=path, url=url, public=True)

    def _send_link(self, url: str, name: str) -> None:
        self.os.share(SharePayload(text=url, subject=name))

    def _set_invitee(self, value: str) -> None:
        self.invitee = value

    def _share_with(self, f: CloudFile) -> None:
        who = self.invitee.strip()
        if not who:
            return
        if who not in f.shared_with:
            f.shared_with.append(who)
        self.invitee = ""
        self.os.clear_focus()
        self.os.log("share_link_created", path=f.path, url="", public=False, shared_with=who)

    def _delete(self, path: str, is_folder: bool) -> None:
        cloud = self.os.world.cloud
        inside = path.rstrip("/") + "/"
        if is_folder:
            gone = [f.path for f in cloud.files if f.path.startswith(inside)]
            cloud.folders = [d for d in cloud.folders if d != path and not d.startswith(inside)]
        else:
            gone = [path]
        cloud.files = [f for f in cloud.files if f.path not in gone]
        cloud.favorites = [
            p for p in cloud.favorites if p != path and p not in gone and not p.startswith(inside)
        ]
        if is_folder:
            cloud.folder_links = {
                k: v
                for k, v in cloud.folder_links.items()
                if k != path and not k.startswith(inside)
            }
        self.os.log("cloud_file_deleted", path=path, folder=is_folder, files=gone)
        # Leave the deleted item: its detail screen, or the folder's own listing.
        self.os.clear_focus()
        while len(self.screens) > 1 and self._gone(self.screens[-1], path, is_folder):
            self.screens.pop()

    # ----- helpers ----------------------------------------------------------------------

    def _file(self, path: str) -> CloudFile | None:
        return next((f for f in self.os.world.cloud.files if f.path == path), None)

    def _all_folders(self) -> list[str]:
        found: set[str] = set()
        cloud = self.os.world.cloud
        for path in [f.path for f in cloud.files] + [f"{d}/" for d in cloud.folders]:
            parts = [p for p in path.split("/")[:-1] if p]
            for i in range(1, len(parts) + 1):
                found.add("/" + "/".join(parts[:i]))
        return sorted(found, key=str.lower)

    def _listing(self, folder: str) -> tuple[list[str], list[CloudFile]]:
        subs = [f for f in self._all_folders() if _parent(f) == folder]
        files = sorted(
            (f for f in self.os.world.cloud.files if f.folder == folder),
            key=lambda f: f.name.lower(),
        )
        return subs, files

    def _count(self, folder: str) -> int:
        prefix = folder.rstrip("/") + "/"
        return sum(1 for f in self.os.world.cloud.files if f.path.startswith(prefix))

    def _gone(self, screen: tuple[str, dict[str, Any]], path: str, is_folder: bool) -> bool:
        name, args = screen
        if name in ("delete", "actions"):
            return True
        where = str(args.get("path") or args.get("folder") or "")
        if is_folder:
            return where == path or where.startswith(path.rstrip("/") + "/")
        return name in ("file", "share") and where == path


def _parent(folder: str) -> str:
    return folder.rsplit("/", 1)[0] or ROOT


def _bar(title: str, *, on_back: Handler | None, actions: list[Node] | None = None) -> Node:
    for action in actions or []:  # icons in the bar's white
        action.style = Style(icon=action.style.icon, fg=WHITE, size=22, align="center", radius=24)
    return top_bar(title, on_back=on_back, bg=BRAND, fg=WHITE, actions=actions)


def _fact(label: str, value: str) -> Node:
    return row(
        text(label, size=15, fg=MUTED, width=100),
        text(value or "—", size=15, weight=500),
        gap=12,
    )


def _checkbox(checked: bool, on_toggle: Handler) -> Node:
    return choice_mark(
        "check", checked, on_toggle, size=24, radius=4, color=BRAND, margin=(0, 8, 0, 8)
    )


def _items(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def _bytes(f: CloudFile) -> int:
    # Sized like a phone file (FileEntry.byte_size), so an upload keeps the size it had.
    return f.size or 1024 + 37 * len(f.content)


def _size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    return f"{max(1, round(size / 1024))} KB"


def _date(iso: str) -> str:
    return iso[:10] if iso else "—"


def _kind_glyph(name: str) -> str:
    lower = name.lower()
    if lower.endswith((".jpg", ".jpeg", ".png", ".heic", ".gif")):
        return "I"
    if lower.endswith((".mp4", ".mkv", ".mov", ".mp3", ".m4a")):
        return "M"
    return "D"


def _missing(on_back: Handler) -> Node:
    return column(
        _bar("Nextcloud", on_back=on_back),
        text("This item no longer exists", fg=MUTED, align="center", pad=(0, 40, 0, 0)),
        style=Style(bg=PAGE),
    )
