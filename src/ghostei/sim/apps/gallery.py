"""Gallery (Google Photos): a photo grid, albums by folder, a viewer that shares and deletes.

The photos are the image and video files of ``world.files``; an album is the folder they sit
in, as MediaStore buckets them. A new album is a folder made in Pictures, which the photos
moved or copied into it fill. A photo's description (its caption) is edited on its Details
screen. Backup sends the photos to a Google Account, one the phone has or one signed in
with on Google's sign-in screens. The pieces Files and PhotoNote draw photos with live here too.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from ...world import FileEntry, World
from ..ui import (
    MUTED,
    SCRIM_BG,
    SURFACE,
    Color,
    Handler,
    Node,
    Style,
    button,
    card,
    column,
    dialog,
    icon_button,
    list_row,
    name_dialog,
    name_error,
    popup_menu,
    radio_row,
    row,
    scroll,
    spacer,
    text,
    text_field,
    top_bar,
)
from .base import App, AppIcon, SharePayload, register_app

MEDIA_KINDS = ("image", "video")
FAVORITES = "Favorites"
DANGER: Color = (179, 38, 30)
PRIMARY: Color = (26, 115, 232)
# Thumbnail tints; a photo keeps its tint because it is picked from its name.
TINTS: tuple[Color, ...] = (
    (84, 110, 122),
    (121, 85, 72),
    (46, 125, 50),
    (21, 101, 192),
    (173, 20, 87),
    (230, 81, 0),
    (69, 90, 100),
    (0, 121, 107),
)
ALBUMS_ROOT = "/sdcard/Pictures"  # where Gallery makes a new album's folder
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


# ----- pieces shared with Files and PhotoNote ---------------------------------------------


def tint(name: str) -> Color:
    """A stable colour for a thumbnail."""
    return TINTS[sum(map(ord, name)) % len(TINTS)]


def thumbnail(entry: FileEntry, on_click: Handler | None, *, height: float = 116) -> Node:
    """A photo's tile: its tint with the first words of what it shows, named in content-desc.

    The simulator has no pixels for a photo, so the tile carries a caption where a real
    thumbnail would carry the picture.
    """
    caption = ("Video: " if entry.kind == "video" else "") + (entry.content or entry.name)
    return column(
        text(caption, size=11, fg=(255, 255, 255), max_lines=4),
        cls="android.widget.FrameLayout",
        rid="thumbnail",
        desc=entry.name,
        clickable=on_click is not None,
        focusable=on_click is not None,
        on_click=on_click,
        height=height,
        pad=(8, 8, 8, 8),
        style=Style(bg=tint(entry.name), radius=4),
    )


def grid(tiles: list[Node], columns: int = 3) -> list[Node]:
    """Tiles in rows of ``columns``; a short last row keeps the tiles' width."""
    rows: list[Node] = []
    for i in range(0, len(tiles), columns):
        cells = tiles[i : i + columns]
        cells += [Node() for _ in range(columns - len(cells))]
        rows.append(row(*cells, gap=3, pad=(3, 0, 3, 3)))
    return rows


def confirm_dialog(
    title: str, body: str, confirm: str, on_confirm: Handler, on_cancel: Handler
) -> Node:
    """A modal confirmation: the screen dims and an alert dialog asks before acting."""
    panel = dialog(
        title,
        body,
        [
            button("Cancel", on_cancel, filled=False, rid="button2"),
            button(confirm, on_confirm, color=DANGER, rid="button1"),
        ],
        urgent=True,
    )
    return column(spacer(), panel, spacer(), style=Style(bg=SCRIM_BG))


def human_size(size: int) -> str:
    """Bytes as Android's Formatter shows them (kB, MB, GB in powers of 1000)."""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1000
    return f"{value:.2f} GB"


def day_label(iso: str) -> str:
    """``2026-05-10T13:30:20`` as ``May 10, 2026``; empty when the date is unknown."""
    if len(iso) < 10:
        return ""
    year, month, day = iso[:4], int(iso[5:7]), int(iso[8:10])
    return f"{MONTHS[month - 1]} {day}, {year}"


def date_label(iso: str) -> str:
    """A file's modification time as the apps show it: day, then hour and minute."""
    day = day_label(iso)
    return f"{day} · {iso[11:16]}" if day and len(iso) >= 16 else day


def newest_first(entries: Iterable[FileEntry]) -> list[FileEntry]:
    """Files by modification time, newest first (then by name, for a stable order)."""
    by_name = sorted(entries, key=lambda f: f.name.lower())
    return sorted(by_name, key=lambda f: f.modified, reverse=True)


def media(files: Iterable[FileEntry]) -> list[FileEntry]:
    """The photos and videos among files, newest first."""
    return newest_first(f for f in files if f.kind in MEDIA_KINDS)


def album_name(folder: str) -> str:
    """An album's title: its folder's own name."""
    return folder.rstrip("/").rsplit("/", 1)[-1] or folder


# ----- the app ------------------------------------------------------------------------------


@register_app
class Gallery(App):
    """Google Photos, showing the phone's own pictures."""

    label = "Gallery"
    icon = AppIcon("P", (234, 67, 53))

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.tab = "photos"  # the main screen's tab: "photos" or "albums"
        self.captions: dict[str, str] = {}  # a photo's description being edited, by path
        self.album_title = ""  # the New album screen's name field
        self.new_albums: list[str] = []  # folders of albums made here that may still be empty
        self.picked: list[str] = []  # the paths selected on the Add items screen
        self.menu_open = False  # the viewer's overflow menu
        self.backup_choice = ""  # the account picked on the Backup screen ("": the first)
        self.sign_in: dict[str, str] = {}  # Google sign-in's "identifier" and "password"
        self.sign_in_error = ""

    def on_intent(self, intent: dict[str, Any]) -> None:
        entry = self.file_of_intent(intent)
        if entry is not None:
            self._view(entry)

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        if self.tab == "albums":
            body = self._album_rows()
        else:
            body = [self._backup_banner(), *self._by_day(media(self.os.world.files))]
        return column(
            top_bar("Gallery"),
            row(
                self._tab("Photos", "photos"),
                self._tab("Albums", "albums"),
                rid="tabs",
                pad=(16, 0, 16, 8),
                gap=8,
            ),
            scroll(*body, spacer(16), offset=self.offset(), on_scroll=self.set_offset, rid="grid"),
            style=Style(bg=SURFACE),
        )

    def screen_album(self) -> Node:
        folder = str(self.args["folder"])
        photos = media(f for f in self.os.world.files if f.folder == folder)
        add = icon_button("+", "Add items", partial(self._start_picking, folder), rid="add_items")
        return self._grid_screen(album_name(folder), photos, "This album is empty", [add])

    def screen_choose_album(self) -> Node:
        path, move = str(self.args["path"]), bool(self.args["move"])
        entry = self._entry()
        if entry is None:
            return self._gone()
        albums: dict[str, list[FileEntry]] = {}
        for f in media(self.os.world.files):
            albums.setdefault(f.folder, []).append(f)
        for folder in reversed(self.new_albums):
            albums.setdefault(folder, [])
        rows = [
            list_row(
                "New album",
                on_click=partial(self._start_album, path, move),
                leading=Node(
                    cls="android.widget.ImageView",
                    width=56,
                    height=56,
                    style=Style(icon="+", fg=PRIMARY, radius=4, border=(121, 116, 126)),
                ),
                rid="new_album",
            )
        ]
        rows += [
            self._album_row(album_name(folder), entries, partial(self._put_one, path, folder, move))
            for folder, entries in albums.items()
            if folder != entry.folder
        ]
        return column(
            top_bar("Move to album" if move else "Copy to album", on_back=self.pop),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="albums"),
            style=Style(bg=SURFACE),
        )

    def screen_backup(self) -> Node:
        world = self.os.world
        backup = world.photos_backup
        count = len(media(world.files))
        if backup.on:
            done = len(backup.backed_up)
            body: list[Node] = [
                text("Backup complete", size=20, weight=600, rid="backup_status"),
                text(
                    f"{done} item{'s' if done != 1 else ''} backed up to {backup.account}",
                    size=15,
                    fg=MUTED,
                    rid="backup_account",
                ),
            ]
            return column(
                top_bar("Backup", on_back=self.pop),
                card(*body, rid="backup"),
                style=Style(bg=SURFACE),
            )
        accounts = device_accounts(world)
        chosen = self.backup_choice if self.backup_choice in accounts else accounts[0]
        rows = [
            radio_row(
                email,
                email == chosen,
                partial(self._choose_account, email),
                summary="Photos will back up to this account" if email == chosen else "",
            )
            for email in accounts
        ]
        return column(
            top_bar("Backup", on_back=self.pop),
            scroll(
                text(
                    "Back up photos and videos from this device to your Google Account",
                    size=15,
                    fg=MUTED,
                    pad=(16, 8, 16, 8),
                ),
                text("Back up to", size=14, weight=600, pad=(16, 8, 16, 0)),
                *rows,
                list_row(
                    "Use another account",
                    on_click=self._start_sign_in,
                    leading=Node(
                        cls="android.widget.ImageView",
                        width=40,
                        height=40,
                        style=Style(icon="+", fg=PRIMARY, radius=20, border=(121, 116, 126)),
                    ),
                    rid="add_account",
                ),
                text("Backup quality", size=14, weight=600, pad=(16, 12, 16, 0)),
                text("Storage saver · slightly reduced quality", size=15, pad=(16, 4, 16, 4)),
                text(
                    f"{count} item{'s' if count != 1 else ''} on this device",
                    size=14,
                    fg=MUTED,
                    pad=(16, 4, 16, 4),
                ),
                offset=self.offset(),
                on_scroll=self.set_offset,
            ),
            row(
                button(
                    "Turn on backup",
                    partial(self._turn_on_backup, chosen),
                    color=PRIMARY,
                    rid="turn_on_backup",
                ),
                pad=(16, 8, 16, 16),
            ),
            style=Style(bg=SURFACE),
        )

    def screen_sign_in(self) -> Node:
        field = text_field(
            self.sign_in.get("identifier", ""),
            partial(self._set_sign_in, "identifier"),
            hint="Email or phone",
            field_name="email",
            rid="identifierId",
            sensitive=True,
            on_submit=self._sign_in_next,
        )
        return self._google_page(
            "Sign in",
            "with your Google Account. This account will be available to other Google apps "
            "on the phone.",
            field,
            self._sign_in_next,
            "identifierNext",
        )

    def screen_password(self) -> Node:
        field = text_field(
            self.sign_in.get("password", ""),
            partial(self._set_sign_in, "password"),
            hint="Enter your password",
            field_name="password",
            rid="password",
            password=True,
            on_submit=self._password_next,
        )
        return self._google_page(
            "Welcome", str(self.args["email"]), field, self._password_next, "passwordNext"
        )

    def screen_new_album(self) -> Node:
        # Files owns the New folder dialog that Nextcloud and PhotoNote use too; it imports
        # this module for its thumbnails, so the import waits until both are loaded.
        name = self.album_title.strip()
        return name_dialog(
            "New album",
            "Album name",
            self.album_title,
            self._set_album_title,
            on_create=self._create_album,
            on_cancel=self.pop,
            error=name_error(name, self._album_taken(name)),
            color=PRIMARY,
        )

    def screen_pick(self) -> Node:
        folder = str(self.args["folder"])
        photos = media(f for f in self.os.world.files if f.folder != folder)
        tiles = []
        for f in photos:
            tile = thumbnail(f, partial(self._toggle_pick, f.path))
            tile.checkable = True
            tile.checked = tile.selected = f.path in self.picked
            if tile.checked:  # a selected tile is outlined and ticked, as the picker draws it
                tile.style = Style(bg=tint(f.name), radius=4, border=PRIMARY)
                tick = Node(
                    cls="android.widget.ImageView",
                    width=24,
                    height=24,
                    style=Style(bg=PRIMARY, fg=(255, 255, 255), icon="check", radius=12),
                )
                tile.children.insert(0, tick)
            tiles.append(tile)
        count = len(self.picked)
        chosen = f"{count} selected" if count else "Select items"
        return column(
            top_bar(f"Add to “{album_name(folder)}”", on_back=self.pop),
            text(chosen, size=14, fg=MUTED, pad=(16, 0, 16, 8), rid="selection_count"),
            scroll(
                *(grid(tiles) or [text("No photos yet", fg=MUTED, pad=(24, 40, 24, 0))]),
                spacer(16),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="grid",
            ),
            row(
                button(
                    "Copy",
                    partial(self._add_picked, folder, False),
                    filled=False,
                    enabled=bool(count),
                    rid="copy",
                ),
                button(
                    "Move",
                    partial(self._add_picked, folder, True),
                    color=PRIMARY,
                    enabled=bool(count),
                    rid="move",
                ),
                rid="action_bar",
                pad=(8, 8, 8, 16),
                gap=8,
            ),
            style=Style(bg=SURFACE),
        )

    def screen_favorites(self) -> Node:
        photos = media(f for f in self.os.world.files if f.favorite)
        return self._grid_screen(FAVORITES, photos, "Tap Favorite on a photo to add it here")

    def screen_viewer(self) -> Node:
        entry = self._entry()
        if entry is None:
            return self._gone()
        favorite = entry.favorite
        actions = row(
            button("Share", lambda: self._share(entry), filled=False, rid="share"),
            button(
                "Favorited" if favorite else "Favorite",
                lambda: self._toggle_favorite(entry),
                filled=favorite,
                color=PRIMARY,
                rid="favorite",
                desc="Remove from favorites" if favorite else "Favorite",
            ),
            button("Details", lambda: self.push("details", path=entry.path), filled=False),
            button(
                "Delete",
                lambda: self.push("confirm_delete", path=entry.path),
                filled=False,
                color=DANGER,
                rid="trash",
            ),
            rid="action_bar",
            pad=(8, 8, 8, 16),
            gap=6,
        )
        picture = thumbnail(entry, None, height=300)
        picture.cls = "android.widget.ImageView"
        picture.children = []  # the description below says what the picture shows
        picture.rid = "photo"
        picture.margin = (0, 0, 0, 8)
        more = icon_button("more", "More options", self._toggle_menu, rid="menu")
        kids = [top_bar(entry.name, on_back=self.pop, actions=[more])]
        if self.menu_open:
            menu = popup_menu(
                [
                    ("Move to album", partial(self._choose_album, entry.path, True)),
                    ("Copy to album", partial(self._choose_album, entry.path, False)),
                ]
            )
            kids.append(row(spacer(0), menu, pad=(0, 0, 8, 4)))
        return column(
            *kids,
            scroll(
                picture,
                text(date_label(entry.modified), size=14, fg=MUTED, pad=(16, 4, 16, 4)),
                *(
                    [text(entry.description, size=15, rid="caption", pad=(16, 4, 16, 4))]
                    if entry.description
                    else []
                ),
                text(
                    entry.content or "No description",
                    size=17,
                    rid="photo_description",
                    pad=(16, 4, 16, 16),
                ),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="viewer",
            ),
            actions,
            style=Style(bg=SURFACE),
        )

    def screen_details(self) -> Node:
        entry = self._entry()
        if entry is None:
            return self._gone()
        facts = (
            ("Name", entry.name),
            ("Path", entry.path),
            ("Size", human_size(entry.byte_size)),
            ("Date", date_label(entry.modified) or "Unknown"),
            ("Album", album_name(entry.folder)),
        )
        caption = text_field(
            self.captions.get(entry.path, entry.description),
            partial(self.captions.__setitem__, entry.path),
            hint="Add a description",
            field_name="description",
            rid="description",
            on_submit=partial(self._save_caption, entry),
            multiline=True,
        )
        caption.margin = (16, 8, 16, 8)
        return column(
            top_bar("Details", on_back=self._close_details),
            caption,
            card(
                *(
                    column(
                        text(label, size=13, fg=MUTED),
                        text(value, size=16, rid=f"detail_{label.lower()}"),
                        gap=2,
                    )
                    for label, value in facts
                ),
                rid="details",
            ),
            style=Style(bg=SURFACE),
        )

    def screen_confirm_delete(self) -> Node:
        entry = self._entry()
        if entry is None:
            return self._gone()
        return confirm_dialog(
            "Delete this item?",
            f"“{entry.name}” will be permanently deleted from your device.",
            "Delete",
            lambda: self._delete(entry),
            self.pop,
        )

    # ----- pieces -----------------------------------------------------------------------

    def _tab(self, label: str, key: str) -> Node:
        selected = self.tab == key
        return Node(
            cls="android.widget.TextView",
            text=label,
            rid=f"tab_{key}",
            clickable=True,
            focusable=True,
            selected=selected,
            on_click=partial(self._switch_tab, key),
            pad=(0, 8, 0, 8),
            style=Style(
                bg=PRIMARY if selected else None,
                fg=(255, 255, 255) if selected else MUTED,
                size=15,
                weight=600 if selected else 400,
                align="center",
                radius=18,
                border=None if selected else (121, 116, 126),
            ),
        )

    def _by_day(self, photos: list[FileEntry]) -> list[Node]:
        if not photos:
            return [text("No photos yet", fg=MUTED, align="center", pad=(0, 40, 0, 0))]
        out: list[Node] = []
        days: dict[str, list[FileEntry]] = {}
        for f in photos:
            days.setdefault(day_label(f.modified) or "Earlier", []).append(f)
        for day, entries in days.items():
            out.append(text(day, size=15, weight=600, pad=(16, 12, 16, 8), rid="date_header"))
            out.extend(grid([thumbnail(f, partial(self._open, f.path)) for f in entries]))
        return out

    def _album_rows(self) -> list[Node]:
        albums: dict[str, list[FileEntry]] = {}
        for f in media(self.os.world.files):
            albums.setdefault(f.folder, []).append(f)
        for folder in reversed(self.new_albums):  # an empty new album stays until the app ends
            albums.setdefault(folder, [])
        new = button("New album", self._start_album, filled=False, color=PRIMARY, rid="new_album")
        new.margin = (16, 4, 16, 8)
        rows: list[Node] = [new]
        favorites = [f for f in media(self.os.world.files) if f.favorite]
        if favorites:
            rows.append(
                self._album_row(FAVORITES, favorites, partial(self.push, "favorites"), "favorites")
            )
        # Newest album first, as Photos sorts "Photos on device" (dict order is newest first).
        for folder, entries in albums.items():
            rows.append(
                self._album_row(
                    album_name(folder), entries, partial(self.push, "album", folder=folder)
                )
            )
        if len(rows) == 1:
            rows.append(text("No albums yet", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        return rows

    def _album_row(
        self, title: str, entries: list[FileEntry], on_click: Handler, rid: str = "album"
    ) -> Node:
        if entries:
            cover = thumbnail(entries[0], None, height=56)
            cover.children = []
        else:  # an empty album's placeholder
            cover = Node(cls="android.widget.ImageView", height=56, style=Style(bg=(230, 224, 233)))
        cover.width = 56
        count = len(entries)
        return list_row(
            title,
            f"{count} item{'s' if count != 1 else ''}",
            leading=cover,
            on_click=on_click,
            rid=rid,
        )

    def _grid_screen(
        self, title: str, photos: list[FileEntry], empty: str, actions: list[Node] | None = None
    ) -> Node:
        tiles = grid([thumbnail(f, partial(self._open, f.path)) for f in photos])
        if not tiles:
            tiles = [text(empty, fg=MUTED, align="center", pad=(24, 40, 24, 0))]
        count = len(photos)
        return column(
            top_bar(title, on_back=self.pop, actions=actions),
            text(f"{count} item{'s' if count != 1 else ''}", size=14, fg=MUTED, pad=(16, 0, 16, 8)),
            scroll(*tiles, spacer(16), offset=self.offset(), on_scroll=self.set_offset, rid="grid"),
            style=Style(bg=SURFACE),
        )

    def _backup_banner(self) -> Node:
        backup = self.os.world.photos_backup
        if backup.on:
            return text(
                f"Backup complete · {backup.account}",
                size=14,
                fg=MUTED,
                rid="backup_status",
                pad=(16, 4, 16, 8),
                on_click=partial(self.push, "backup"),
            )
        return card(
            text("Backup is off", size=17, weight=600, rid="backup_status"),
            text(
                "Back up your photos and videos to your Google Account to keep them safe",
                size=14,
                fg=MUTED,
            ),
            row(
                spacer(0),
                button("Turn on backup", partial(self.push, "backup"), filled=False, width=170),
            ),
            rid="backup_banner",
        )

    def _google_page(
        self, title: str, lead: str, field: Node, on_next: Handler, next_id: str
    ) -> Node:
        field.margin = (24, 16, 24, 4)
        kids: list[Node] = [
            top_bar("", on_back=self.pop),
            text("Google", size=24, weight=500, fg=PRIMARY, align="center", rid="logo"),
            text(title, size=26, align="center", rid="headingText", pad=(24, 12, 24, 0)),
            text(lead, size=15, fg=MUTED, align="center", rid="headingSubtext", pad=(24, 8, 24, 0)),
            field,
        ]
        if self.sign_in_error:
            kids.append(
                text(self.sign_in_error, size=13, fg=DANGER, rid="error", pad=(24, 0, 24, 0))
            )
        kids += [
            spacer(),
            row(
                spacer(0),
                button("Next", on_next, color=PRIMARY, width=110, rid=next_id),
                pad=(24, 8, 24, 24),
            ),
        ]
        return column(*kids, style=Style(bg=(255, 255, 255)))

    def _gone(self) -> Node:
        gone = "This item is no longer on your device"
        return column(
            top_bar("Gallery", on_back=self.pop),
            text(gone, fg=MUTED, align="center", pad=(0, 40, 0, 0)),
            style=Style(bg=SURFACE),
        )

    # ----- handlers ---------------------------------------------------------------------

    def back(self) -> bool:
        if self.menu_open:  # Back closes an open menu first
            self.menu_open = False
            return True
        # Leaving a photo's Details keeps the description typed there, as Photos saves it.
        if self.screen == "details":
            entry = self._entry()
            if entry is not None:
                self._save_caption(entry)
        return super().back()

    def _entry(self) -> FileEntry | None:
        path = str(self.args.get("path", ""))
        return next((f for f in self.os.world.files if f.path == path), None)

    def _switch_tab(self, key: str) -> None:
        self.tab = key

    def _open(self, path: str) -> None:
        entry = self.os.world.file(path)
        if entry is not None:
            self._view(entry)

    def _view(self, entry: FileEntry) -> None:
        self.menu_open = False
        self.push("viewer", path=entry.path)
        self.os.log("photo_viewed", path=entry.path, name=entry.name, type=entry.kind)

    def _close_details(self) -> None:
        self.back()

    def _save_caption(self, entry: FileEntry) -> None:
        self.os.clear_focus()
        caption = self.captions.pop(entry.path, entry.description).strip()
        if caption != entry.description:
            entry.description = caption
            self.os.log("file_saved", path=entry.path, name=entry.name, description=caption)

    def _choose_account(self, email: str) -> None:
        self.backup_choice = email

    def _start_sign_in(self) -> None:
        self.sign_in = {}
        self.sign_in_error = ""
        self.push("sign_in")

    def _set_sign_in(self, key: str, value: str) -> None:
        self.sign_in[key] = value

    def _sign_in_next(self) -> None:
        email = google_email(self.sign_in.get("identifier", ""))
        if not email:
            self.sign_in_error = "Enter an email or phone number"
        elif account_password(self.os.world, email) is None:
            self.sign_in_error = "Couldn't find your Google Account"
        else:
            self.sign_in_error = ""
            self.sign_in["password"] = ""
            self.push("password", email=email)

    def _password_next(self) -> None:
        email = str(self.args["email"])
        if self.sign_in.get("password", "") != account_password(self.os.world, email):
            self.sign_in_error = (
                "Wrong password. Try again or click Forgot password to reset it."
                if self.sign_in.get("password")
                else "Enter a password"
            )
            return
        backup = self.os.world.photos_backup
        if email not in device_accounts(self.os.world):
            backup.device_accounts.append(email)
        self.backup_choice = email
        self.sign_in = {}
        self.sign_in_error = ""
        while self.screen in ("password", "sign_in"):
            self.pop()  # back on Backup, the new account chosen

    def _turn_on_backup(self, account: str) -> None:
        backup = self.os.world.photos_backup
        photos = media(self.os.world.files)
        backup.on = True
        backup.account = account
        backup.backed_up = [f.path for f in photos]
        self.os.log("backup_started", account=account, items=len(photos))

    def _start_album(self, path: str = "", move: bool = True) -> None:
        """The New album screen; from a photo's menu (``path``) the photo then goes in."""
        self.album_title = ""
        self.push("new_album", **({"path": path, "move": move} if path else {}))

    def _set_album_title(self, value: str) -> None:
        self.album_title = value

    def _album_taken(self, name: str) -> bool:
        """Whether Pictures already holds a folder or file of this name (any letter case)."""
        if not name:
            return False
        want = f"{ALBUMS_ROOT}/{name}".lower()
        world = self.os.world
        taken = {f.folder.lower() for f in world.files} | {f.path.lower() for f in world.files}
        taken |= {d.lower() for d in (*world.folders, *self.new_albums)}
        return want in taken

    def _create_album(self) -> None:
        name = self.album_title.strip()
        if not name or "/" in name or name in (".", "..") or self._album_taken(name):
            return
        folder = f"{ALBUMS_ROOT}/{name}"
        self.new_albums.append(folder)
        # The album is a folder in shared storage from now on (Files lists it, even empty).
        self.os.world.folders.append(folder)
        self.os.log("folder_created", path=folder, name=name)
        path, move = self.args.get("path"), bool(self.args.get("move"))
        self.pop()
        if path:  # from a photo's Move to / Copy to album: it goes into the new album
            self._put_one(str(path), folder, move)
            return
        self.push("album", folder=folder)
        self._start_picking(folder)  # a new album asks at once for what goes in it

    def _start_picking(self, folder: str) -> None:
        self.picked = []
        self.push("pick", folder=folder)

    def _toggle_pick(self, path: str) -> None:
        if path in self.picked:
            self.picked.remove(path)
        else:
            self.picked.append(path)

    def _add_picked(self, folder: str, move: bool) -> None:
        for path in self.picked:
            self._put(path, folder, move)
        self.picked = []
        self.pop()  # back to the album, which now holds them

    def _put_one(self, path: str, folder: str, move: bool) -> None:
        """A photo's Move to / Copy to album: back on its viewer, which follows a moved photo."""
        target = self._put(path, folder, move)
        while self.screen != "viewer" and len(self.screens) > 1:
            self.pop()
        if move and target and self.screen == "viewer":
            self.screens[-1] = ("viewer", {"path": target})

    def _put(self, path: str, folder: str, move: bool) -> str:
        """Move or copy a photo into an album's folder; its new path ("" if it is gone)."""
        files = self.os.world.files
        entry = self.os.world.file(path)
        if entry is None:
            return ""
        target = free_path(files, folder, entry.name)
        if move:
            entry.path = target
            self.os.log("file_saved", path=target, name=entry.name, old_path=path, moved=True)
        else:
            copy = entry.model_copy(update={"path": target, "favorite": False})
            files.append(copy)
            self.os.log("file_saved", path=target, name=copy.name, old_path=path, created=True)
        return target

    def _toggle_menu(self) -> None:
        self.menu_open = not self.menu_open

    def _choose_album(self, path: str, move: bool) -> None:
        self.menu_open = False
        self.push("choose_album", path=path, move=move)

    def _share(self, entry: FileEntry) -> None:
        self.os.share(SharePayload(files=(entry.path,)))

    def _toggle_favorite(self, entry: FileEntry) -> None:
        entry.favorite = not entry.favorite
        self.os.log("file_saved", path=entry.path, name=entry.name, favorite=entry.favorite)

    def _delete(self, entry: FileEntry) -> None:
        remove_file(self.os.world.files, entry)
        self.os.log("file_deleted", path=entry.path, name=entry.name, type=entry.kind)
        # Leave the confirmation and the viewer of the photo that is gone.
        self.os.clear_focus()
        while len(self.screens) > 1 and self.args.get("path") == entry.path:
            self.screens.pop()


def remove_file(files: list[FileEntry], entry: FileEntry) -> None:
    """Take a file out of shared storage."""
    files[:] = [f for f in files if f.path != entry.path]


def free_path(files: list[FileEntry], folder: str, name: str) -> str:
    """``folder/name``, or ``folder/stem (n).ext`` when a file already has that path."""
    taken = {f.path for f in files}
    path, n = f"{folder}/{name}", 1
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    while path in taken:
        path = f"{folder}/{stem} ({n}){dot}{ext}"
        n += 1
    return path


def device_accounts(world: World) -> list[str]:
    """The Google Accounts on the phone: the owner's, then those signed in since."""
    extra = [a for a in world.photos_backup.device_accounts if a != world.owner.email]
    return [world.owner.email, *extra]


def google_email(identifier: str) -> str:
    """What Google's sign-in makes of what was typed: a bare username is a Gmail address."""
    value = identifier.strip().lower()
    if value and "@" not in value and not value.lstrip("+").replace(" ", "").isdigit():
        value += "@gmail.com"
    return value


def account_password(world: World, email: str) -> str | None:
    """The password of a Google Account that exists, or None."""
    if email == world.owner.email.lower():
        return world.owner.email_password
    known = world.photos_backup.known_accounts
    return next((a.password for a in known if a.email.lower() == email), None)
