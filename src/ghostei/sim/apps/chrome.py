"""Chrome: an address bar, pages from the world's web, links, forms, downloads and a menu.

One tab whose back stack is a list of URLs ("" is the new-tab page). The menu shares or
copies the page's link and bookmarks it; bookmarks, history and downloads have their own
screens. Opening a download hands it to the Files app (which passes an APK to the package
installer), as Chrome hands downloads to the system.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ...web import SEARCH, download_url, search_hits, search_query, search_title
from ...world import FileEntry, WebPage
from ..ui import (
    DIVIDER,
    MUTED,
    Node,
    Style,
    button,
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
    web_view,
)
from .base import App, AppIcon, SharePayload, register_app

LINK = (26, 13, 171)
WHITE = (255, 255, 255)
TOOLBAR = (241, 243, 244)
BLUE = (26, 115, 232)
DOWNLOADS = "/sdcard/Download"


@register_app
class Chrome(App):
    """Google Chrome."""

    label = "Chrome"
    icon = AppIcon("chrome", (255, 255, 255))

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.history: list[str] = []  # the tab's back stack of URLs; "" is a new tab
        self.address = ""  # what is typed in the omnibox
        self.editing = False  # the omnibox was tapped: it shows what is typed, not the URL
        self.forms: dict[str, dict[str, str]] = {}  # url -> field name -> value
        self.submitted: set[str] = set()
        self.menu_open = False
        self.last_download = ""  # path of the download the message bar offers to open

    @property
    def url(self) -> str:
        return self.history[-1] if self.history else ""

    def on_intent(self, intent: dict[str, Any]) -> None:
        if "url" in intent:
            self.screens = [(self.home_screen, {})]
            self.menu_open = False
            self.navigate(str(intent["url"]))

    def back(self) -> bool:
        self.editing = False
        if self.menu_open:
            self.menu_open = False
            return True
        if len(self.screens) > 1:
            self.pop()
            return True
        if len(self.history) > 1:
            self.history.pop()
            self.last_download = ""
            self.os.clear_focus()
            return True
        return False

    def navigate(self, url: str) -> None:
        """Load a URL (or search for words) in the tab."""
        url = url.strip()
        if not url:
            return
        if "." not in url and "/" not in url:
            url = SEARCH + url.replace(" ", "+")
        elif "://" not in url:
            url = "https://" + url
        self.history.append(url)
        self.address = ""
        self.editing = False
        self.menu_open = False
        self.last_download = ""
        self.scroll.pop(self._scroll_key(), None)  # a page opens at its top
        self.os.clear_focus()
        self.os.world.browser_history.append(url)
        page = self.os.load_page(url)
        self.os.log(
            "page_loaded",
            url=url,
            title=page.title if page else search_title(url),
            phishing=bool(page and page.phishing),
            found=page is not None or search_query(url) is not None,
        )

    def _scroll_key(self) -> str:
        # Each page keeps its own scroll position, as each history entry does in a browser.
        key = super()._scroll_key()
        return f"{key}:{self.url}" if self.screen == "main" else key

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        page = self.os.world.page(self.url) if self.url else None
        query = search_query(self.url)
        if not self.url:
            body = self._new_tab()
        elif page is not None:
            body = self._page(page)
        elif query is not None:
            body = self._results(query)
        else:
            body = [
                text("This site can't be reached", size=22, pad=(24, 40, 24, 8)),
                text(
                    f"{_host(self.url)} took too long to respond.",
                    size=15,
                    fg=MUTED,
                    pad=(24, 0, 24, 0),
                ),
            ]
        kids = [self._toolbar()]
        if self.menu_open:
            kids.append(self._menu(page))
        kids.append(web_view(*body, url=self.url, offset=self.offset(), on_scroll=self.set_offset))
        if self.last_download:
            kids.append(self._download_bar())
        return column(*kids, style=Style(bg=WHITE))

    def screen_bookmarks(self) -> Node:
        rows: list[Node] = []
        for url in self.os.world.bookmarks:
            rows.append(
                row(
                    list_row(
                        self._title(url),
                        _display(url),
                        rid="bookmark",
                        on_click=partial(self._open_link, url, "bookmark"),
                    ),
                    icon_button(
                        "x",
                        f"Remove bookmark {self._title(url)}",
                        partial(self._unbookmark, url),
                        rid="remove_bookmark",
                    ),
                    pad=(0, 0, 8, 0),
                )
            )
        if not rows:
            rows.append(_empty("No bookmarks yet"))
        return _list_screen("Bookmarks", self.pop, rows, self)

    def screen_history(self) -> Node:
        seen: set[str] = set()
        rows: list[Node] = []
        for url in reversed(self.os.world.browser_history):  # newest first, each page once
            if url in seen:
                continue
            seen.add(url)
            rows.append(
                list_row(
                    self._title(url),
                    _display(url),
                    rid="history_entry",
                    on_click=partial(self._open_link, url, "history"),
                )
            )
        if rows:
            clear = button(
                "Clear browsing data", self._clear_history, filled=False, rid="clear_history"
            )
            clear.margin = (16, 8, 16, 8)
            rows.insert(0, clear)
        else:
            rows.append(_empty("Pages you visit appear here"))
        return _list_screen("History", self.pop, rows, self)

    def screen_downloads(self) -> Node:
        files = [f for f in self.os.world.files if f.folder == DOWNLOADS]
        rows: list[Node] = [
            list_row(
                f.name,
                f"{_size(f.byte_size)} · {f.modified[:10] or 'Downloaded'}",
                leading=image(f.name[:1].upper(), size=40, color=BLUE),
                rid="download_item",
                on_click=partial(self._open_file, f.path),
            )
            for f in reversed(files)
        ]
        if not rows:
            rows.append(_empty("No downloads here"))
        return _list_screen("Downloads", self.pop, rows, self)

    # ----- pieces -----------------------------------------------------------------------

    def _toolbar(self) -> Node:
        shown = self.address if self.editing else _display(self.url)
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
            icon_button("menu", "More options", self._toggle_menu, rid="menu_button"),
            cls="android.widget.FrameLayout",
            rid="toolbar",
            pad=(8, 8, 4, 8),
            gap=4,
            style=Style(bg=TOOLBAR),
        )

    def _menu(self, page: WebPage | None) -> Node:
        items: list[tuple[str, Any]] = [
            ("New tab", self._new_tab_action),
            ("Bookmarks", partial(self._menu_push, "bookmarks")),
            ("History", partial(self._menu_push, "history")),
            ("Downloads", partial(self._menu_push, "downloads")),
        ]
        if self.url:
            marked = self.url in self.os.world.bookmarks
            items += [
                ("Remove bookmark" if marked else "Bookmark this page", self._toggle_bookmark),
                ("Share", partial(self._share, page)),
                ("Copy link", self._copy_link),
            ]
        rows = [
            text(label, size=16, pad=(20, 12, 20, 12), rid="menu_item", on_click=handler)
            for label, handler in items
        ]
        panel = column(
            *rows,
            cls="android.widget.ListView",
            rid="app_menu_list",
            width=240,
            pad=(0, 6, 0, 6),
            style=Style(bg=WHITE, radius=8, elevation=True, border=DIVIDER),
        )
        return row(spacer(0), panel, pad=(0, 0, 8, 4))

    def _new_tab(self) -> list[Node]:
        logo = text("Google", size=44, weight=500, fg=(66, 133, 244), align="center")
        logo.pad = (0, 60, 0, 24)
        kids = [logo]
        for url in self.os.world.bookmarks:
            kids.append(
                list_row(
                    self._title(url),
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
                    fg=WHITE,
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
        for d in page.downloads:
            kids.append(
                row(
                    image(d.name[:1].upper(), size=36, color=BLUE),
                    column(
                        text(d.name, size=16, fg=LINK, rid="download_link"),
                        text(f"Download · {_size(d.byte_size)}", size=13, fg=MUTED),
                        gap=2,
                    ),
                    clickable=True,
                    on_click=partial(self._download, page, d),
                    desc=f"Download {d.name}",
                    rid="download",
                    pad=(20, 8, 20, 8),
                    gap=12,
                )
            )
        if page.form:
            values = self.forms.setdefault(page.url, {})
            # Typing into a web form is typing on that page: a phishing kit's script (and so
            # a real device's phishing server) sees it with the page's URL.
            context = {"url": page.url, "phishing": page.phishing}
            done = page.url in self.submitted
            send = None if done else partial(self._submit, page)
            for f in page.form:
                kids.append(
                    form_field(
                        f.label,
                        values,
                        f.name,
                        password=f.password,
                        sensitive=f.sensitive,
                        inset=20,
                        context=context,
                        # Enter in a field submits its form, as a browser's implicit
                        # submission does for a form with a submit button.
                        on_submit=send,
                    )
                )
            submit = button("Submitted" if done else page.submit_label, send, enabled=not done)
            submit.margin = (20, 12, 20, 24)
            kids.append(submit)
        return kids

    def _results(self, query: str) -> list[Node]:
        hits = search_hits(query, self.os.world.web)
        kids: list[Node] = [
            text(f"Results for “{query}”", size=20, weight=500, pad=(20, 16, 20, 8))
        ]
        for p in hits:
            kids.append(
                column(
                    text(_display(p.url), size=13, fg=MUTED),
                    text(p.title, size=18, fg=LINK, rid="result_title"),
                    text(" ".join(p.paragraphs)[:140], size=14, fg=MUTED, max_lines=2),
                    clickable=True,
                    on_click=partial(self._open_link, p.url, "search"),
                    rid="search_result",
                    pad=(20, 8, 20, 8),
                    gap=2,
                )
            )
        if not hits:
            kids.append(text(f"No results found for “{query}”.", fg=MUTED, pad=(20, 8, 20, 8)))
        return kids

    def _download_bar(self) -> Node:
        name = self.last_download.rsplit("/", 1)[-1]
        return row(
            text(f"Downloaded {name}", size=15, fg=WHITE, rid="download_message"),
            button(
                "Open",
                partial(self._open_file, self.last_download),
                filled=False,
                color=(138, 180, 248),
                rid="open_download",
                width=96,
            ),
            rid="message_bar",
            pad=(16, 8, 12, 8),
            gap=8,
            style=Style(bg=(60, 64, 67)),
        )

    def _title(self, url: str) -> str:
        page = self.os.world.page(url)
        return page.title if page else search_title(url) or _host(url)

    # ----- handlers ---------------------------------------------------------------------

    def _start_edit(self) -> None:
        # Tapping the omnibox selects the whole URL, so typing replaces it.
        self.address = ""
        self.editing = True
        self.menu_open = False

    def _set_address(self, value: str) -> None:
        self.address = value

    def _open_link(self, url: str, source: str) -> None:
        self.os.log("link_opened", url=url, source=source)
        self.screens = [(self.home_screen, {})]
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

    def _toggle_menu(self) -> None:
        self.menu_open = not self.menu_open
        self.editing = False
        self.os.clear_focus()

    def _menu_push(self, screen: str) -> None:
        self.menu_open = False
        self.push(screen)

    def _new_tab_action(self) -> None:
        self.menu_open = False
        self.history.append("")
        self.last_download = ""

    def _toggle_bookmark(self) -> None:
        self.menu_open = False
        marks = self.os.world.bookmarks
        if self.url in marks:
            marks.remove(self.url)
        else:
            marks.append(self.url)

    def _unbookmark(self, url: str) -> None:
        if url in self.os.world.bookmarks:
            self.os.world.bookmarks.remove(url)

    def _share(self, page: WebPage | None) -> None:
        self.menu_open = False
        self.os.share(SharePayload(text=self.url, subject=page.title if page else ""))

    def _copy_link(self) -> None:
        self.menu_open = False
        self.os.set_clipboard(self.url)

    def _clear_history(self) -> None:
        self.os.world.browser_history.clear()

    def _download(self, page: WebPage, entry: FileEntry) -> None:
        url = download_url(page.url, entry.path)
        self.os.log("link_opened", url=url, source="download")
        self.last_download = self.os.download(url, entry.name, entry.content)

    def _open_file(self, path: str) -> None:
        # Chrome hands a download to the system's handler: the Files app views documents
        # and passes APKs to the package installer.
        self.last_download = ""
        self.os.open_app("Files", {"file": path})


def _list_screen(title: str, on_back: Any, rows: list[Node], app: App) -> Node:
    return column(
        top_bar(title, on_back=on_back),
        scroll(*rows, offset=app.offset(), on_scroll=app.set_offset, rid="list"),
        style=Style(bg=WHITE),
    )


def _empty(message: str) -> Node:
    return text(message, fg=MUTED, align="center", pad=(0, 40, 0, 0))


def _host(url: str) -> str:
    rest = url.split("://", 1)[-1]
    return rest.split("/", 1)[0]


def _display(url: str) -> str:
    return url.split("://", 1)[-1].removeprefix("www.").rstrip("/")


def _size(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB" if size >= 1_000_000 else f"{max(1, size // 1000)} kB"
