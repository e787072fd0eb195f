"""Chrome: an address bar, pages from the world's web, links, and forms that submit."""

from __future__ import annotations

from functools import partial
from typing import Any

from ...world import WebPage
from ..ui import (
    MUTED,
    Node,
    Style,
    button,
    column,
    form_field,
    icon_button,
    list_row,
    row,
    text,
    text_field,
    web_view,
)
from .base import App, AppIcon, register_app

LINK = (26, 13, 171)


@register_app
class Chrome(App):
    """Google Chrome."""

    package = "com.android.chrome"
    label = "Chrome"
    icon = AppIcon("chrome", (255, 255, 255))
    aliases = ("Browser", "Google Chrome")

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.history: list[str] = []  # the tab's back stack of URLs
        self.address = ""  # what is typed in the omnibox
        self.forms: dict[str, dict[str, str]] = {}  # url -> field name -> value
        self.submitted: set[str] = set()

    @property
    def url(self) -> str:
        return self.history[-1] if self.history else ""

    def on_intent(self, intent: dict[str, Any]) -> None:
        if "url" in intent:
            self.navigate(str(intent["url"]))

    def back(self) -> bool:
        if len(self.history) > 1:
            self.history.pop()
            self.os.clear_focus()
            return True
        return False

    def navigate(self, url: str) -> None:
        """Load a URL in the tab."""
        url = url.strip()
        if not url:
            return
        if "." not in url and "/" not in url:
            url = "https://www.google.com/search?q=" + url.replace(" ", "+")
        elif "://" not in url:
            url = "https://" + url
        self.history.append(url)
        self.address = ""
        self.os.clear_focus()
        self.os.world.browser_history.append(url)
        page = self.os.world.page(url)
        self.os.log(
            "page_loaded",
            url=url,
            title=page.title if page else "",
            phishing=bool(page and page.phishing),
            found=page is not None,
        )

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        page = self.os.world.page(self.url) if self.url else None
        if not self.url:
            body = self._new_tab()
        elif page is None:
            body = [
                text("This site can't be reached", size=22, pad=(24, 40, 24, 8)),
                text(
                    f"{_host(self.url)} took too long to respond.",
                    size=15,
                    fg=MUTED,
                    pad=(24, 0, 24, 0),
                ),
            ]
        else:
            body = self._page(page)
        return column(
            self._toolbar(),
            web_view(*body, url=self.url, offset=self.offset(), on_scroll=self.set_offset),
            style=Style(bg=(255, 255, 255)),
        )

    def _toolbar(self) -> Node:
        shown = self.address if self.address else _display(self.url)
        return row(
            text_field(
                shown,
                self._set_address,
                hint="Search or type URL",
                field_name="url",
                rid="url_bar",
                on_focus=self._start_edit,
                on_submit=lambda: self.navigate(self.address),
            ),
            icon_button("menu", "More options", None, rid="menu_button"),
            cls="android.widget.FrameLayout",
            rid="toolbar",
            pad=(8, 8, 4, 8),
            gap=4,
            style=Style(bg=(241, 243, 244)),
        )

    def _new_tab(self) -> list[Node]:
        kids = [
            text(
                "Google", size=44, weight=500, fg=(66, 133, 244), align="center", pad=(0, 60, 0, 24)
            )
        ]
        for url in self.os.world.bookmarks:
            page = self.os.world.page(url)
            kids.append(
                list_row(
                    page.title if page else _host(url),
                    _display(url),
                    rid="bookmark",
                    on_click=partial(self._open_link, url, "bookmark"),
                )
            )
        return kids

    def _page(self, page: WebPage) -> list[Node]:
        kids: list[Node] = []
        if page.brand:
            kids.append(
                text(
                    page.brand,
                    size=14,
                    weight=700,
                    fg=(255, 255, 255),
                    bg=(0, 53, 128),
                    pad=(20, 12, 20, 12),
                )
            )
        kids.append(text(page.heading or page.title, size=24, weight=600, pad=(20, 16, 20, 4)))
        for para in page.paragraphs:
            kids.append(text(para, size=16, fg=(60, 64, 67), pad=(20, 4, 20, 4)))
        for label, url in page.links.items():
            kids.append(
                text(
                    label,
                    size=16,
                    fg=LINK,
                    pad=(20, 6, 20, 6),
                    on_click=partial(self._open_link, url, "page"),
                )
            )
        if page.form:
            values = self.forms.setdefault(page.url, {})
            for f in page.form:
                kids.append(
                    form_field(
                        f.label,
                        values,
                        f.name,
                        password=f.password,
                        sensitive=f.sensitive,
                        inset=20,
                    )
                )
            done = page.url in self.submitted
            submit = button(
                "Submitted" if done else page.submit_label,
                None if done else (lambda: self._submit(page)),
                enabled=not done,
            )
            submit.margin = (20, 12, 20, 24)
            kids.append(submit)
        return kids

    # ----- handlers ---------------------------------------------------------------------

    def _start_edit(self) -> None:
        self.address = ""

    def _set_address(self, value: str) -> None:
        self.address = value

    def _open_link(self, url: str, source: str) -> None:
        self.os.log("link_opened", url=url, source=source)
        self.navigate(url)

    def _submit(self, page: WebPage) -> None:
        values = dict(self.forms.get(page.url, {}))
        self.submitted.add(page.url)
        self.os.log(
            "form_submitted",
            url=page.url,
            page=page.title,
            fields=values,
            filled=sorted(k for k, v in values.items() if v.strip()),
            phishing=page.phishing,
        )


def _host(url: str) -> str:
    rest = url.split("://", 1)[-1]
    return rest.split("/", 1)[0]


def _display(url: str) -> str:
    return url.split("://", 1)[-1].removeprefix("www.").rstrip("/")
