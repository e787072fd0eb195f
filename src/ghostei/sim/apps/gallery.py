"""Gallery (Google Photos): a photo grid, albums by folder, a viewer that shares and deletes.

The photos are the image and video files of ``world.files``; an album is the folder they sit
in, as MediaStore buckets them. The pieces Files and PhotoNote draw photos with live here too.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from ...world import FileEntry
from ..ui import (
    MUTED,
    SURFACE,
    Color,
    Handler,
    Node,
    Style,
    button,
    card,
    column,
    dialog,
    list_row,
    row,
    scroll,
    spacer,
    text,
    top_bar,
)
from .base import App, AppIcon, SharePayload, register_app

MEDIA_KINDS = ("image", "video")
FAVORITES = "Favorites"
DANGER: Color = (179, 38, 30)
PRIMARY: Color = (26, 115, 232)
SCRIM_BG: Color = (96, 93, 102)  # what a modal dialog's scrim leaves of a light screen
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

    def on_intent(self, intent: dict[str, Any]) -> None:
        entry = self.file_of_intent(intent)
        if entry is not None:
            self._view(entry)

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        if self.tab == "albums":
            body = self._album_rows()
        else:
            body = self._by_day(media(self.os.world.files))
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
        return self._grid_screen(album_name(folder), photos, "This album is empty")

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
        return column(
            top_bar(entry.name, on_back=self.pop),
            scroll(
                picture,
                text(date_label(entry.modified), size=14, fg=MUTED, pad=(16, 4, 16, 4)),
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
        return column(
            top_bar("Details", on_back=self.pop),
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
        rows: list[Node] = []
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
        if not rows:
            rows.append(text("No albums yet", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        return rows

    def _album_row(
        self, title: str, entries: list[FileEntry], on_click: Handler, rid: str = "album"
    ) -> Node:
        cover = thumbnail(entries[0], None, height=56)
        cover.width = 56
        cover.children = []
        count = len(entries)
        return list_row(
            title,
            f"{count} item{'s' if count != 1 else ''}",
            leading=cover,
            on_click=on_click,
            rid=rid,
        )

    def _grid_screen(self, title: str, photos: list[FileEntry], empty: str) -> Node:
        tiles = grid([thumbnail(f, partial(self._open, f.path)) for f in photos])
        if not tiles:
            tiles = [text(empty, fg=MUTED, align="center", pad=(24, 40, 24, 0))]
        count = len(photos)
        return column(
            top_bar(title, on_back=self.pop),
            text(f"{count} item{'s' if count != 1 else ''}", size=14, fg=MUTED, pad=(16, 0, 16, 8)),
            scroll(*tiles, spacer(16), offset=self.offset(), on_scroll=self.set_offset, rid="grid"),
            style=Style(bg=SURFACE),
        )

    def _gone(self) -> Node:
        gone = "This item is no longer on your device"
        return column(
            top_bar("Gallery", on_back=self.pop),
            text(gone, fg=MUTED, align="center", pad=(0, 40, 0, 0)),
            style=Style(bg=SURFACE),
        )

    # ----- handlers ---------------------------------------------------------------------

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
        self.push("viewer", path=entry.path)
        self.os.log("photo_viewed", path=entry.path, name=entry.name, type=entry.kind)

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
