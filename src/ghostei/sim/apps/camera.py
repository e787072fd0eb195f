"""Camera: a viewfinder over the world's scene, a shutter that saves photos to DCIM/Camera.

What the lens sees is ``world.camera_scene`` (the rear camera) or the owner (the front one);
a shot becomes an image file whose content describes it, so Gallery, Files and the share
sheet treat it like any other photo. The top bar's HDR toggle is the app's preference
(``settings.camera_hdr``, kept across launches); a shot records whether HDR was on.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...world import FileEntry
from ..ui import FILL, Color, Node, Style, column, row, spacer, text
from .base import App, AppIcon, register_app
from .gallery import newest_first, thumbnail

FOLDER = "/sdcard/DCIM/Camera"
BLACK: Color = (0, 0, 0)
WHITE: Color = (255, 255, 255)
VIEWFINDER: Color = (38, 50, 56)
GREY: Color = (189, 189, 189)
AMBER: Color = (255, 202, 40)  # an active mode's tint in the top bar


@register_app
class Camera(App):
    """The AOSP Camera."""

    label = "Camera"
    icon = AppIcon("O", (60, 64, 67))

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.front = False  # which lens is live
        self.saved = ""  # the last shot's path, announced under the viewfinder

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        finder = column(
            spacer(),
            text(
                self._scene(),
                size=18,
                fg=WHITE,
                align="center",
                rid="viewfinder_text",
                pad=(24, 0, 24, 0),
            ),
            spacer(),
            cls="android.view.TextureView",
            rid="preview_overlay",
            desc="Viewfinder",
            height=FILL,
            style=Style(bg=VIEWFINDER),
        )
        status = f"Saved {self.saved.rsplit('/', 1)[-1]}" if self.saved else "Photo"
        return column(
            row(
                self._hdr_toggle(),
                text(
                    "Front camera" if self.front else "Rear camera",
                    size=14,
                    fg=GREY,
                    align="center",
                    pad=(0, 12, 0, 12),
                    rid="lens",
                ),
                Node(width=48),  # balances the toggle, so the lens stays centred
                pad=(12, 4, 12, 4),
                rid="top_bar",
            ),
            finder,
            text(status, size=14, weight=500, fg=WHITE, align="center", pad=(0, 12, 0, 4)),
            row(
                self._thumbnail(),
                spacer(0),
                Node(
                    cls="android.widget.ImageView",
                    rid="shutter_button",
                    desc="Shutter",
                    clickable=True,
                    focusable=True,
                    on_click=self._shoot,
                    width=76,
                    height=76,
                    style=Style(bg=WHITE, border=GREY, radius=38),
                ),
                spacer(0),
                Node(
                    cls="android.widget.ImageButton",
                    rid="camera_switch",
                    desc="Switch camera",
                    clickable=True,
                    focusable=True,
                    on_click=self._switch,
                    width=56,
                    height=56,
                    style=Style(bg=(66, 66, 66), fg=WHITE, icon="<>", size=18, radius=28),
                ),
                pad=(28, 12, 28, 28),
            ),
            style=Style(bg=BLACK),
        )

    # ----- pieces -----------------------------------------------------------------------

    def _hdr_toggle(self) -> Node:
        on = self.os.world.settings.camera_hdr
        return Node(
            cls="android.widget.ImageButton",
            rid="hdr_toggle_button",
            desc="HDR on" if on else "HDR off",
            checkable=True,
            checked=on,
            clickable=True,
            focusable=True,
            on_click=self._toggle_hdr,
            width=48,
            height=48,
            style=Style(
                icon="HDR",
                fg=AMBER if on else GREY,
                size=13,
                radius=24,
                border=AMBER if on else None,
            ),
        )

    def _scene(self) -> str:
        if self.front:
            return f"Selfie view: {self.os.world.owner.name} looking at the phone"
        return self.os.world.camera_scene

    def _last(self) -> FileEntry | None:
        shots = [f for f in self.os.world.files if f.folder == FOLDER and f.kind == "image"]
        if self.saved:
            mine = next((f for f in shots if f.path == self.saved), None)
            if mine is not None:
                return mine
        return next(iter(newest_first(shots)), None)

    def _thumbnail(self) -> Node:
        last = self._last()
        if last is None:  # nothing to review yet: an empty ring, as the real app draws
            return Node(width=56, height=56, style=Style(border=GREY, radius=28))
        tile = thumbnail(last, lambda: self._review(last), height=56)
        tile.children = []
        tile.width = 56
        tile.desc = "Last photo"
        tile.rid = "thumbnail_button"
        tile.style = Style(bg=tile.style.bg, radius=28, border=WHITE)
        return tile

    # ----- handlers ---------------------------------------------------------------------

    def _shoot(self) -> None:
        taken = datetime.fromisoformat(self.os.now())
        path = f"{FOLDER}/IMG_{taken:%Y%m%d_%H%M%S}.jpg"
        n = 1
        while self.os.world.file(path) is not None:  # two shots in one second
            path = f"{FOLDER}/IMG_{taken:%Y%m%d_%H%M%S}_{n}.jpg"
            n += 1
        scene = self._scene()
        self.os.world.files.append(FileEntry(path=path, content=scene, modified=self.os.now()))
        self.saved = path
        self.os.log(
            "photo_taken",
            path=path,
            scene=scene,
            lens="front" if self.front else "rear",
            hdr=self.os.world.settings.camera_hdr,
        )

    def _toggle_hdr(self) -> None:
        settings = self.os.world.settings
        settings.camera_hdr = not settings.camera_hdr

    def _switch(self) -> None:
        self.front = not self.front

    def _review(self, entry: FileEntry) -> None:
        self.os.open_app("Gallery", {"file": entry.path})
