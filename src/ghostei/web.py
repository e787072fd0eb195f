"""The world's web as a browser and a web server read it: searches, results and downloads.

The pages themselves are world data (:class:`ghostei.world.WebPage`). The simulated phone's
Chrome and the Android backend's loopback web server both answer a search and link a
download through these functions, so the two backends show the same web without importing
each other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qs, urlsplit

from .world import WebPage

SEARCH = "https://www.google.com/search?q="  # a search's URL is this and its words


def search_query(url: str) -> str | None:
    """The words of a Google search URL, or None for any other URL."""
    if not url.startswith(SEARCH.split("?", 1)[0]):
        return None
    return parse_qs(urlsplit(url).query).get("q", [""])[0]


def search_hits(query: str, pages: Iterable[WebPage]) -> list[WebPage]:
    """The pages a search finds: those with a word of the query (three letters or more) in
    their title, heading or text, in the web's order."""
    words = [w for w in query.lower().split() if len(w) > 2] or [query.lower()]
    return [
        p
        for p in pages
        if any(w in " ".join([p.title, p.heading, *p.paragraphs]).lower() for w in words)
    ]


def download_url(page_url: str, path: str) -> str:
    """Where a page's download lives: a full URL as given, a path on the page's site."""
    if "://" in path:
        return path
    parts = urlsplit(page_url)
    return f"{parts.scheme or 'https'}://{parts.netloc}/{path.lstrip('/')}"


def search_title(url: str) -> str:
    """The title of a search's result page, or "" for any other URL."""
    query = search_query(url)
    return f"{query} - Google Search" if query is not None else ""


LINK = re.compile(
    # A bare domain is a link, except as the domain part of an email address.
    r"(?:https?://|www\.)[^\s]+|(?<![@\w.-])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|co|info|top|xyz|app|link|ly)(?:/[^\s]*)?",
    re.I,
)


def find_links(body: str) -> list[str]:
    """The links in a text, as Messages, Gmail and the other apps make them tappable."""
    return [m.group(0).rstrip(".,;!?)") for m in LINK.finditer(body)]
