"""A plain HTML page as the served phone's Chrome shows it: title, text, links and one form.

A server on the host (the paper's harness's page server, say) sends a static page with a form;
a real emulator's Chrome renders it and, on submit, sends the form's fields to its ``action``.
The simulated Chrome shows the world's pages (:class:`ghostei.world.WebPage`), so a page from
the host becomes one: :func:`parse_page` reads, with the standard library's HTML parser,

- the ``<title>``, the first ``<h1>``/``<h2>`` as the heading, and the text of ``<p>``,
  ``<li>`` and ``<footer>`` elements as paragraphs;
- ``<a href>`` links (made absolute against the page's URL);
- the first ``<form>``: its ``action`` (the page's own URL when it has none, as a browser
  submits it) and ``method`` (GET unless it says POST), its text-like ``<input>`` and
  ``<textarea>`` fields, each labelled by its ``<label for>``, the ``<label>`` around it,
  its ``placeholder``, ``aria-label`` or else its ``name``; its hidden inputs (sent, not
  shown); and its submit button's text.

What a browser would not show is skipped: ``<head>`` (but the title), ``<script>``,
``<style>``, ``<template>``, and elements that are ``hidden``, ``aria-hidden="true"`` or
styled ``display:none`` (a page's "Thank you" modal waiting for its script). Scripts do not
run: a form whose script would stop the submission is submitted as it is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin

from ..world import FormField, WebPage

# Inputs that take typed text (a browser's text-like types).
TEXT_TYPES = frozenset(
    {"text", "email", "tel", "password", "number", "search", "url", "date", "month", "week"}
    | {"time", "datetime-local", ""}
)
SUBMIT_TYPES = frozenset({"submit", "image"})
_SKIPPED = frozenset({"script", "style", "template", "noscript", "head"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}
    | {"track", "wbr"}
)
_TEXT_BLOCKS = frozenset({"p", "li", "footer"})
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


@dataclass
class HtmlField:
    """An input of the form: its submitted name, shown label, type and initial value."""

    name: str
    label: str
    kind: str = "text"
    value: str = ""
    element_id: str = ""

    @property
    def hidden(self) -> bool:
        return self.kind == "hidden"


@dataclass
class HtmlPage:
    """What the phone's Chrome shows of an HTML page, and where its form goes."""

    url: str
    title: str = ""
    heading: str = ""
    paragraphs: list[str] = field(default_factory=list)
    links: dict[str, str] = field(default_factory=dict)  # text -> absolute URL
    fields: list[HtmlField] = field(default_factory=list)
    submit_label: str = ""
    has_form: bool = False
    action: str = ""
    method: str = "GET"

    def web_page(self, *, phishing: bool) -> WebPage:
        """The page as the world's pages are (its visible fields; hidden ones are sent only)."""
        return WebPage(
            url=self.url,
            title=self.title or self.heading or self.url,
            heading=self.heading,
            paragraphs=list(self.paragraphs),
            links=dict(self.links),
            form=[
                FormField(name=f.name, label=f.label, password=f.kind == "password")
                for f in self.fields
                if not f.hidden
            ],
            submit_label=self.submit_label or "Submit",
            phishing=phishing,
        )

    def submission(self, values: dict[str, str]) -> list[tuple[str, str]]:
        """The form's data set as a browser builds it: every named field in page order, typed
        values for the shown ones (their initial value if untouched), hidden ones as given."""
        return [(f.name, f.value if f.hidden else values.get(f.name, f.value)) for f in self.fields]


def _text(data: str) -> str:
    return " ".join(data.split())


class _Parser(HTMLParser):
    def __init__(self, url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.page = HtmlPage(url=url)
        self._stack: list[tuple[str, bool]] = []  # open elements: (tag, hides its content)
        self._title: list[str] | None = None
        self._heading: list[str] | None = None
        self._block: list[str] | None = None
        self._link: tuple[str, list[str]] | None = None
        self._label: tuple[str, list[str], list[HtmlField]] | None = None  # for, text, inside
        self._labels: dict[str, str] = {}  # element id -> label text
        self._button: tuple[str, list[str]] | None = None  # type, text
        self._textarea: tuple[HtmlField, list[str]] | None = None
        self._in_form = False
        self._form_done = False

    @property
    def _hidden(self) -> bool:
        return any(hides for _, hides in self._stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "title" and self._title is None and not self.page.title:
            self._title = []
        hides = (
            tag in _SKIPPED
            or "hidden" in a
            or a.get("aria-hidden", "").lower() == "true"
            or bool(_HIDDEN_STYLE.search(a.get("style", "")))
        )
        if tag not in _VOID:
            self._stack.append((tag, hides))
        if self._hidden and tag != "input":
            return
        if tag in ("h1", "h2") and not self.page.heading:
            self._heading = []
        elif tag in _TEXT_BLOCKS and self._block is None:
            self._block = []
        elif tag == "a" and a.get("href"):
            self._link = (urljoin(self.page.url, a["href"]), [])
        elif tag == "form" and not self._form_done and not self._in_form:
            self._in_form = True
            self.page.has_form = True
            self.page.action = urljoin(self.page.url, a.get("action", "")) or self.page.url
            self.page.method = "POST" if a.get("method", "").upper() == "POST" else "GET"
        elif tag == "label":
            self._label = (a.get("for", ""), [], [])
        elif tag == "input" and self._in_form:
            self._input(a)
        elif tag == "textarea" and self._in_form and a.get("name"):
            found = HtmlField(a["name"], "", "textarea", "", a.get("id", ""))
            found.label = self._field_label(a)
            self.page.fields.append(found)
            self._textarea = (found, [])
            if self._label is not None:
                self._label[2].append(found)
        elif tag == "button" and self._in_form:
            self._button = (a.get("type", "submit").lower(), [])

    def _input(self, a: dict[str, str]) -> None:
        kind = a.get("type", "text").lower()
        if kind in SUBMIT_TYPES:
            if not self.page.submit_label and not self._hidden:
                self.page.submit_label = a.get("value", "") or "Submit"
            return
        name = a.get("name", "")
        if not name or "disabled" in a:
            return
        if kind == "hidden":
            self.page.fields.append(HtmlField(name, "", "hidden", a.get("value", "")))
            return
        if kind not in TEXT_TYPES or self._hidden:
            return  # checkboxes, radios, files: not typed into here
        found = HtmlField(name, self._field_label(a), kind, a.get("value", ""), a.get("id", ""))
        self.page.fields.append(found)
        if self._label is not None:
            self._label[2].append(found)

    def _field_label(self, a: dict[str, str]) -> str:
        return _text(a.get("placeholder", "") or a.get("aria-label", "") or a.get("name", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self._title is not None:
            self.page.title = _text("".join(self._title))
            self._title = None
        if tag in _VOID:
            return
        # Close up to the matching open element (HTML lets some end tags go missing).
        names = [name for name, _ in self._stack]
        if tag in names:
            index = len(names) - 1 - names[::-1].index(tag)
            del self._stack[index:]
        if tag in ("h1", "h2") and self._heading is not None:
            self.page.heading = _text("".join(self._heading))
            self._heading = None
        elif tag in _TEXT_BLOCKS and self._block is not None:
            line = _text("".join(self._block))
            if line:
                self.page.paragraphs.append(line)
            self._block = None
        elif tag == "a" and self._link is not None:
            href, words = self._link
            label = _text("".join(words))
            if label and href.startswith(("http://", "https://")):
                self.page.links[label] = href
            self._link = None
        elif tag == "label" and self._label is not None:
            target, words, inside = self._label
            label = _text("".join(words))
            if label:
                if target:
                    self._labels[target] = label
                for found in inside:
                    found.label = label
            self._label = None
        elif tag == "textarea" and self._textarea is not None:
            found, words = self._textarea
            found.value = "".join(words)
            self._textarea = None
        elif tag == "button" and self._button is not None:
            kind, words = self._button
            label = _text("".join(words))
            if kind == "submit" and label and not self.page.submit_label and not self._hidden:
                self.page.submit_label = label
            self._button = None
        elif tag == "form" and self._in_form:
            self._in_form = False
            self._form_done = True

    def handle_data(self, data: str) -> None:
        if self._title is not None:
            self._title.append(data)
        if self._hidden:
            return
        for sink in (self._heading, self._block):
            if sink is not None:
                sink.append(data)
        if self._link is not None:
            self._link[1].append(data)
        if self._label is not None:
            self._label[1].append(data)
        if self._button is not None:
            self._button[1].append(data)
        if self._textarea is not None:
            self._textarea[1].append(data)

    def result(self) -> HtmlPage:
        for found in self.page.fields:
            if found.element_id in self._labels:
                found.label = self._labels[found.element_id]
        return self.page


def parse_page(url: str, html: str) -> HtmlPage:
    """The page at ``url`` whose document is ``html``."""
    parser = _Parser(url)
    parser.feed(html)
    parser.close()
    return parser.result()
