"""A small widget toolkit: view nodes, the widgets apps build screens from, and layout.

A screen is a tree of :class:`Node`. Layout assigns every node its pixel bounds; the same
laid-out tree is then drawn (``render``), dumped as uiautomator XML (``hierarchy``) and
hit-tested (``phone``), so pixels, XML and touch can never disagree.

Sizes given to widgets are in dp; layout multiplies by the screen density.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

Rect = tuple[int, int, int, int]  # left, top, right, bottom in pixels
Color = tuple[int, int, int]
Handler = Callable[[], None]
TextHandler = Callable[[str], None]

FILL = -1  # a height that takes the space left in a column


@dataclass(frozen=True)
class Style:
    """How a node is drawn; all sizes in dp."""

    bg: Color | None = None
    fg: Color = (29, 27, 32)
    size: float = 16.0
    weight: int = 400
    radius: float = 0.0
    border: Color | None = None
    align: Literal["left", "center", "right"] = "left"
    max_lines: int = 0  # 0: as many as the text needs
    icon: str = ""  # a glyph drawn in an image placeholder
    scrim: bool = False  # dims what lies below (dialogs)
    elevation: bool = False


@dataclass(eq=False)
class Node:
    """One view: what uiautomator reports about it, how it lays out, and its handlers."""

    cls: str = "android.view.View"
    text: str = ""
    desc: str = ""
    rid: str = ""  # short resource id; the dump prefixes the package
    hint: str = ""
    value: str = ""  # the raw content of an editable field (``text`` masks passwords)
    clickable: bool = False
    long_clickable: bool = False
    focusable: bool = False
    focused: bool = False
    checkable: bool = False
    checked: bool = False
    enabled: bool = True
    scrollable: bool = False
    password: bool = False
    selected: bool = False
    on_click: Handler | None = None
    on_long_click: Handler | None = None
    on_text: TextHandler | None = None  # set for editable text fields
    on_submit: Handler | None = None  # the IME action of a text field
    field_name: str = ""  # semantic name of an editable field, for events
    sensitive: bool = False  # holds secrets or personal data (triggers watch these)
    # Data every text_typed event of this field carries besides its own (a web form's page
    # ``url`` and ``phishing``), set by the app that knows it; the phone stays app-agnostic.
    context: dict[str, Any] = field(default_factory=dict)
    # layout, in dp
    direction: Literal["column", "row", "stack"] = "column"
    width: float = 0.0  # 0: fill the parent's width (or share by weight in a row)
    height: float = 0.0  # 0: wrap content; FILL: take what is left in a column
    weight: float = 1.0
    pad: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # left, top, right, bottom
    gap: float = 0.0
    margin: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    scroll_offset: float = 0.0
    on_scroll: Callable[[float], None] | None = None  # receives the new offset in dp
    style: Style = field(default_factory=Style)
    children: list[Node] = field(default_factory=list)
    # filled by layout
    bounds: Rect = (0, 0, 0, 0)
    clip: Rect | None = None  # the visible part when inside a scroll view
    lines: list[str] = field(default_factory=list)
    content_height: float = 0.0  # dp, for scroll views

    def walk(self) -> Iterator[Node]:
        """This node and its descendants in drawing order."""
        yield self
        for child in self.children:
            yield from child.walk()

    @property
    def visible_bounds(self) -> Rect:
        """The part of the node that is on screen."""
        return self.clip if self.clip is not None else self.bounds

    @property
    def editable(self) -> bool:
        return self.on_text is not None


# ----- widgets ---------------------------------------------------------------------------

INK: Color = (29, 27, 32)
MUTED: Color = (73, 69, 79)
SURFACE: Color = (254, 247, 255)
CARD: Color = (243, 237, 247)
OUTLINE: Color = (121, 116, 126)
DIVIDER: Color = (230, 224, 233)
DISABLED: Color = (200, 196, 204)


def column(*children: Node, **kw: Any) -> Node:
    """A vertical group."""
    return Node(
        cls=str(kw.pop("cls", "android.widget.LinearLayout")), children=list(children), **kw
    )


def row(*children: Node, **kw: Any) -> Node:
    """A horizontal group; children with width 0 share the rest by weight."""
    return Node(
        cls=str(kw.pop("cls", "android.widget.LinearLayout")),
        direction="row",
        children=list(children),
        **kw,
    )


def stack(*children: Node, **kw: Any) -> Node:
    """Children drawn on top of each other."""
    return Node(
        cls=str(kw.pop("cls", "android.widget.FrameLayout")),
        direction="stack",
        children=list(children),
        **kw,
    )


def text(
    value: str,
    *,
    size: float = 16,
    weight: int = 400,
    fg: Color = INK,
    align: Literal["left", "center", "right"] = "left",
    max_lines: int = 0,
    rid: str = "",
    pad: tuple[float, float, float, float] = (0, 0, 0, 0),
    on_click: Handler | None = None,
    bg: Color | None = None,
    width: float = 0,
) -> Node:
    """A TextView; clickable when it has a handler (links, list rows)."""
    return Node(
        cls="android.widget.TextView",
        text=value,
        rid=rid,
        pad=pad,
        width=width,
        clickable=on_click is not None,
        on_click=on_click,
        style=Style(size=size, weight=weight, fg=fg, align=align, max_lines=max_lines, bg=bg),
    )


def button(
    label: str,
    on_click: Handler | None,
    *,
    rid: str = "",
    filled: bool = True,
    color: Color = (103, 80, 164),
    width: float = 0,
    desc: str = "",
    enabled: bool = True,
) -> Node:
    """A Material button; a disabled one is drawn greyed out, as Material does."""
    if not enabled:
        color = DISABLED
    style = (
        Style(bg=color, fg=(255, 255, 255), size=15, weight=500, radius=20, align="center")
        if filled
        else Style(fg=color, size=15, weight=500, radius=20, align="center", border=OUTLINE)
    )
    return Node(
        cls="android.widget.Button",
        text=label,
        desc=desc,
        rid=rid,
        clickable=enabled,
        focusable=True,
        enabled=enabled,
        on_click=on_click if enabled else None,
        height=44,
        width=width,
        pad=(16, 0, 16, 0),
        style=style,
    )


def icon_button(glyph: str, desc: str, on_click: Handler | None, *, rid: str = "") -> Node:
    """A round icon-only button; its meaning lives in content-desc, as on Android."""
    return Node(
        cls="android.widget.ImageButton",
        desc=desc,
        rid=rid,
        clickable=on_click is not None,
        focusable=True,
        on_click=on_click,
        width=48,
        height=48,
        style=Style(icon=glyph, fg=MUTED, size=22, align="center", radius=24),
    )


def text_field(
    value: str,
    on_text: TextHandler,
    *,
    hint: str = "",
    field_name: str = "",
    focused: bool = False,
    on_focus: Handler | None = None,
    password: bool = False,
    sensitive: bool = False,
    rid: str = "",
    label: str = "",
    on_submit: Handler | None = None,
    multiline: bool = False,
) -> Node:
    """An EditText. Passwords show as bullets on screen and in the dump, as on Android."""
    shown = "•" * len(value) if password else value
    return Node(
        cls="android.widget.EditText",
        text=shown,
        value=value,
        hint=hint,
        rid=rid,
        desc=label,
        clickable=True,
        long_clickable=True,
        focusable=True,
        focused=focused,
        password=password,
        on_click=on_focus,
        on_text=on_text,
        on_submit=on_submit,
        field_name=field_name or hint or label,
        sensitive=sensitive or password,
        height=0 if multiline else 56,
        pad=(16, 14, 16, 14),
        style=Style(
            bg=(255, 255, 255),
            border=(103, 80, 164) if focused else OUTLINE,
            radius=6,
            size=16,
        ),
    )


def form_field(
    label: str,
    values: dict[str, str],
    name: str,
    *,
    password: bool = False,
    sensitive: bool = True,
    rid: str = "",
    multiline: bool = False,
    inset: float = 16,
    context: dict[str, Any] | None = None,
    on_submit: Handler | None = None,
) -> Node:
    """A labelled text field bound to ``values[name]``; the label stays when the hint is gone.

    ``context`` goes into every ``text_typed`` event of the field (see ``Node.context``);
    ``on_submit`` is what Enter in it does (a web form's implicit submission).
    """
    field = text_field(
        values.get(name, ""),
        partial(values.__setitem__, name),
        hint=label,
        field_name=name,
        password=password,
        sensitive=sensitive,
        rid=rid or name,  # as Chrome gives a web field its HTML id, and apps their ids
        multiline=multiline,
        on_submit=on_submit,
    )
    field.context = dict(context or {})
    return column(text(label, size=14, fg=MUTED), field, gap=4, pad=(inset, 6, inset, 6))


def switch(
    label: str, checked: bool, on_toggle: Handler, *, rid: str = "", summary: str = ""
) -> Node:
    """A settings row with a Switch; the row and the switch both toggle."""
    lines = [text(label, size=17, rid="title")]
    if summary:
        lines.append(text(summary, size=14, fg=MUTED, rid="summary"))
    return row(
        column(*lines, gap=2),
        Node(
            cls="android.widget.Switch",
            text="ON" if checked else "OFF",
            rid=rid or "switch_widget",
            checkable=True,
            checked=checked,
            clickable=True,
            focusable=True,
            on_click=on_toggle,
            width=52,
            height=32,
            style=Style(
                bg=(103, 80, 164) if checked else (231, 224, 236), radius=16, icon="switch"
            ),
        ),
        clickable=True,
        on_click=on_toggle,
        pad=(24, 16, 24, 16),
        gap=16,
    )


def choice_mark(
    kind: Literal["check", "radio"],
    checked: bool,
    on_click: Handler,
    *,
    size: float,
    radius: float,
    color: Color | None = None,
    border: Color = OUTLINE,
    margin: tuple[float, float, float, float] = (0, 2, 0, 2),
    focusable: bool = True,
    rid: str = "",
    desc: str = "",
) -> Node:
    """A CheckBox or RadioButton: a square (or round) mark filled with ``color`` (the accent
    by default) when checked."""
    fill = (color or ACCENT) if checked else (255, 255, 255)
    return Node(
        cls="android.widget.CheckBox" if kind == "check" else "android.widget.RadioButton",
        desc=desc,
        rid=rid,
        checkable=True,
        checked=checked,
        clickable=True,
        focusable=focusable,
        on_click=on_click,
        width=size,
        height=size,
        margin=margin,
        style=Style(bg=fill, border=border, radius=radius),
    )


def radio_row(
    label: str, checked: bool, on_pick: Handler, *, summary: str = "", inset: float = 24
) -> Node:
    """One choice of a single-choice list (a settings picker page, a dialog's list: ``inset``
    0, the dialog has its own): a RadioButton before its label; the row and the button both
    pick."""
    lines = [text(label, size=17, rid="title")]
    if summary:
        lines.append(text(summary, size=14, fg=MUTED, rid="summary"))
    return row(
        choice_mark("radio", checked, on_pick, size=22, radius=11, rid="radio"),
        column(*lines, gap=2),
        clickable=True,
        on_click=on_pick,
        pad=(inset, 14, inset, 14),
        gap=20,
    )


def check_row(label: str, checked: bool, on_toggle: Handler) -> Node:
    """One choice of a multiple-choice list (a dialog's labels): a CheckBox before its label;
    the row and the box both toggle."""
    return row(
        choice_mark("check", checked, on_toggle, size=20, radius=3, rid="checkbox"),
        text(label, size=17, rid="title"),
        clickable=True,
        on_click=on_toggle,
        pad=(24, 14, 24, 14),
        gap=20,
    )


def image(glyph: str, desc: str = "", *, size: float = 48, color: Color = (208, 188, 255)) -> Node:
    """An image placeholder: a tinted tile with a glyph."""
    return Node(
        cls="android.widget.ImageView",
        desc=desc,
        width=size,
        height=size,
        style=Style(bg=color, icon=glyph, fg=(255, 255, 255), size=size * 0.45, radius=size / 2),
    )


def divider() -> Node:
    """A hairline between rows."""
    return Node(height=1, style=Style(bg=DIVIDER))


def spacer(height: float = FILL) -> Node:
    """Empty space; FILL pushes what follows to the bottom of a column."""
    return Node(height=height)


def bottom_tabs(
    tabs: Sequence[tuple[str, str]],
    current: str,
    on_select: Callable[[str], None],
    *,
    accent: Color,
    bg: Color = (255, 255, 255),
    rid: str = "bottom_navigation",
) -> Node:
    """A bottom navigation bar of (key, label) tabs; the current one is bold in ``accent``."""
    items = []
    for key, label in tabs:
        tab = text(
            label,
            size=14,
            weight=700 if key == current else 400,
            fg=accent if key == current else MUTED,
            align="center",
            pad=(0, 14, 0, 14),
            on_click=partial(on_select, key),
        )
        tab.selected = key == current
        tab.desc = label
        items.append(tab)
    return row(*items, rid=rid, style=Style(bg=bg))


def list_row(
    title: str,
    subtitle: str = "",
    *,
    on_click: Handler | None = None,
    leading: Node | None = None,
    trailing: str = "",
    rid: str = "",
    bold: bool = False,
) -> Node:
    """A two-line list item, clickable as a whole."""
    body = [text(title, size=17, weight=600 if bold else 400, max_lines=1, rid="title")]
    if subtitle:
        body.append(text(subtitle, size=14, fg=MUTED, max_lines=2, rid="subtitle"))
    kids: list[Node] = []
    if leading is not None:
        kids.append(leading)
    kids.append(column(*body, gap=2))
    if trailing:
        kids.append(text(trailing, size=13, fg=MUTED, width=72, align="right"))
    return row(
        *kids,
        rid=rid,
        clickable=on_click is not None,
        focusable=on_click is not None,
        on_click=on_click,
        pad=(16, 12, 16, 12),
        gap=16,
    )


def scroll(
    *children: Node, offset: float, on_scroll: Callable[[float], None], rid: str = ""
) -> Node:
    """A vertical scroll view that fills what is left of its column."""
    return Node(
        cls="android.widget.ScrollView",
        rid=rid,
        scrollable=True,
        focusable=True,
        height=FILL,
        scroll_offset=offset,
        on_scroll=on_scroll,
        children=[column(*children)],
    )


def top_bar(
    title: str,
    *,
    on_back: Handler | None = None,
    actions: list[Node] | None = None,
    bg: Color | None = None,
    fg: Color = INK,
) -> Node:
    """A Material top app bar with an optional Navigate-up button; ``bg`` for brand colours."""
    kids: list[Node] = []
    if on_back is not None:
        up = icon_button("<", "Navigate up", on_back)
        up.style = Style(icon="<", fg=fg, size=22, align="center", radius=24)
        kids.append(up)
    kids.append(text(title, size=22, fg=fg, rid="toolbar_title", max_lines=1, pad=(4, 10, 0, 0)))
    kids.extend(actions or [])
    return row(
        *kids,
        cls="android.view.ViewGroup",
        rid="toolbar",
        height=64,
        pad=(4, 8, 8, 8),
        gap=4,
        style=Style(bg=bg),
    )


def card(*children: Node, on_click: Handler | None = None, rid: str = "", bg: Color = CARD) -> Node:
    """A rounded surface grouping content."""
    return column(
        *children,
        rid=rid,
        clickable=on_click is not None,
        on_click=on_click,
        pad=(16, 14, 16, 14),
        gap=6,
        margin=(16, 6, 16, 6),
        style=Style(bg=bg, radius=14),
    )


def web_view(*children: Node, url: str, offset: float, on_scroll: Callable[[float], None]) -> Node:
    """Web content as Chrome exposes it to accessibility: a WebView over a scrolling page."""
    page = scroll(*children, offset=offset, on_scroll=on_scroll, rid="")
    page.cls = "android.webkit.WebView"
    page.desc = url
    page.style = Style(bg=(255, 255, 255))
    return page


URGENT: Color = (179, 38, 30)
ACCENT: Color = (103, 80, 164)


def badge(urgent: bool, size: float) -> Node:
    """A round warning ("!") or information ("i") badge, centred in its row."""
    glyph = Node(
        cls="android.widget.ImageView",
        width=size,
        height=size,
        style=Style(
            bg=URGENT if urgent else ACCENT,
            fg=(255, 255, 255),
            icon="!" if urgent else "i",
            size=size * 0.5,
            radius=size / 2,
        ),
    )
    return row(spacer(0), glyph, spacer(0))


def dialog(
    title: str,
    body: str,
    actions: list[Node],
    *,
    urgent: bool = False,
    icon: Node | None = None,
    header: str = "",
) -> Node:
    """A centred alert dialog's panel, actions side by side (the window supplies the scrim).

    ``icon`` replaces the warning or information badge (an app's own icon); ``header`` is a
    line above the title (an app's name)."""
    top = [icon or badge(urgent, 44)]
    if header:
        top.append(text(header, size=13, fg=MUTED, align="center", rid="brand"))
    return dialog_panel(
        *top,
        text(
            title,
            size=22,
            weight=600 if urgent else 500,
            fg=URGENT if urgent else INK,
            align="center",
            rid="alertTitle",
        ),
        text(body, size=15, fg=MUTED, rid="message"),
        row(*actions, gap=10, rid="buttonPanel"),
    )


def dialog_panel(*kids: Node) -> Node:
    """A centred dialog's panel (Material 3's surface, rounded, raised) holding ``kids``."""
    return column(
        *kids,
        cls="android.widget.FrameLayout",
        rid="parentPanel",
        pad=(24, 22, 24, 20),
        gap=14,
        margin=(28, 0, 28, 0),
        style=Style(bg=(236, 230, 240), radius=28, elevation=True),
    )


def bottom_sheet(
    title: str,
    body: str,
    actions: list[Node],
    *,
    header: str = "",
    urgent: bool = False,
    icon: Node | None = None,
) -> Node:
    """A modal bottom sheet's panel: drag handle, optional icon and header, actions stacked
    full width."""
    handle = Node(width=32, height=4, style=Style(bg=OUTLINE, radius=2))
    kids = [row(spacer(0), handle, spacer(0))]
    if icon is not None:
        kids.append(icon)
    if header:
        kids.append(text(header, size=13, fg=MUTED, rid="brand"))
    kids += [
        text(title, size=22, weight=600, fg=URGENT if urgent else INK, rid="alertTitle"),
        text(body, size=15, fg=MUTED, rid="message"),
        *actions,
    ]
    return column(
        *kids,
        cls="android.widget.FrameLayout",
        rid="design_bottom_sheet",
        pad=(24, 12, 24, 40),
        gap=14,
        style=Style(bg=(247, 242, 250), radius=28, elevation=True),
    )


# ----- layout ----------------------------------------------------------------------------


def popup_menu(items: Sequence[tuple[str, Handler]], *, width: float = 220) -> Node:
    """A popup menu's panel (an overflow menu, a "New" menu): a ListView of its items, each
    item's text in ``title`` as Android's menu rows have it; the caller places the panel."""
    rows = [
        text(label, size=16, pad=(20, 12, 20, 12), rid="title", on_click=handler)
        for label, handler in items
    ]
    return column(
        *rows,
        cls="android.widget.ListView",
        width=width,
        pad=(0, 6, 0, 6),
        style=Style(bg=(255, 255, 255), radius=8, elevation=True, border=DIVIDER),
    )


def input_dialog(title: str, field: Node, actions: list[Node], *, error: str = "") -> Node:
    """A centred dialog asking for one value (a new folder's or file's name): its title, the
    field, why the value cannot be used (if it cannot), and the actions at the end."""
    kids = [text(title, size=22, weight=500, rid="alertTitle"), field]
    if error:
        kids.append(text(error, size=13, fg=URGENT, rid="textinput_error"))
    kids.append(row(spacer(0), *actions, gap=8, rid="buttonPanel"))
    return dialog_panel(*kids)


class Measurer:
    """Text measurement; the renderer supplies one backed by the pinned font."""

    def line_height(self, size_px: float) -> float:
        return size_px * 1.3

    def width(self, value: str, size_px: float, weight: int) -> float:
        return len(value) * size_px * 0.52


def wrap(value: str, max_px: float, size_px: float, weight: int, m: Measurer) -> list[str]:
    """Greedy word wrap; words longer than a line are broken by character."""
    out: list[str] = []
    for para in value.split("\n"):
        line = ""
        for word in para.split(" "):
            candidate = f"{line} {word}" if line else word
            if m.width(candidate, size_px, weight) <= max_px or not line:
                line = candidate
            else:
                out.append(line)
                line = word
            while m.width(line, size_px, weight) > max_px and len(line) > 1:
                cut = len(line) - 1
                while cut > 1 and m.width(line[:cut], size_px, weight) > max_px:
                    cut -= 1
                out.append(line[:cut])
                line = line[cut:]
        out.append(line)
    return out


@dataclass
class Layout:
    """Lays a tree out at a density (px per dp)."""

    density: float
    measure: Measurer

    def __post_init__(self) -> None:
        # Screens use a few dp values thousands of times a frame: converted once each.
        self._px: dict[float, int] = {}
        self._px4: dict[tuple[float, ...], tuple[int, ...]] = {}

    def px(self, dp: float) -> int:
        found = self._px.get(dp)
        if found is None:
            found = self._px[dp] = round(dp * self.density)
        return found

    def px4(self, box: tuple[float, float, float, float]) -> tuple[int, ...]:
        """A padding or margin (left, top, right, bottom) in pixels."""
        found = self._px4.get(box)
        if found is None:
            found = self._px4[box] = tuple(self.px(v) for v in box)
        return found

    def place(self, node: Node, x: int, y: int, w: int, h: int | None) -> int:
        """Give ``node`` bounds at (x, y), width ``w``; ``h`` is fixed or None to wrap.

        Returns the node's height in pixels.
        """
        left, top, right, bottom = self.px4(node.pad)
        inner_w = max(0, w - left - right)
        if node.height > 0:
            h = self.px(node.height)
        if node.scrollable:
            return self._place_scroll(node, x, y, w, h or 0)
        if not node.children:
            content = 0
            if node.text or node.hint:
                size_px = node.style.size * self.density
                shown = node.text or node.hint
                lines = (
                    [shown]
                    if node.cls == "android.widget.EditText" and node.height > 0
                    else wrap(shown, inner_w, size_px, node.style.weight, self.measure)
                )
                if node.style.max_lines:
                    lines = lines[: node.style.max_lines]
                node.lines = lines
                content = round(len(lines) * self.measure.line_height(size_px))
            height = h if h is not None else content + top + bottom
            node.bounds = (x, y, x + w, y + height)
            return height
        if node.direction == "row":
            content = self._place_row(
                node, x + left, y + top, inner_w, None if h is None else h - top - bottom
            )
        elif node.direction == "stack":
            content = 0
            for child in node.children:
                content = max(content, self._place_child(child, x + left, y + top, inner_w, None))
        else:
            content = self._place_column(
                node, x + left, y + top, inner_w, None if h is None else h - top - bottom
            )
        height = h if h is not None else content + top + bottom
        node.bounds = (x, y, x + w, y + height)
        return height

    def _place_child(self, child: Node, x: int, y: int, w: int, h: int | None) -> int:
        ml, mt, mr, mb = self.px4(child.margin)
        cw = self.px(child.width) if child.width > 0 else w - ml - mr
        return mt + self.place(child, x + ml, y + mt, cw, h) + mb

    def _place_column(self, node: Node, x: int, y: int, w: int, h: int | None) -> int:
        gap = self.px(node.gap)
        fixed = [c for c in node.children if c.height != FILL]
        fills = [c for c in node.children if c.height == FILL]
        cursor = 0
        if not fills:  # each child goes where the last one ended, placed there at once
            for child in node.children:
                cursor += self._place_child(child, x, y + cursor, w, None) + gap
            return max(0, cursor - gap) if node.children else 0
        heights: dict[int, int] = {}
        # Children that wrap are measured first, so FILL children know what is left.
        for child in fixed:
            heights[id(child)] = self._place_child(child, x, y, w, None)
        used = sum(heights.values()) + gap * max(0, len(node.children) - 1)
        rest = max(0, (h if h is not None else used) - used)
        share = rest // len(fills) if fills else 0
        for child in node.children:
            if child.height == FILL:
                ch = self._place_child(child, x, y + cursor, w, share)
            else:
                ch = heights[id(child)]
                self._shift(child, cursor)
            cursor += ch + gap
        return max(0, cursor - gap) if node.children else 0

    def _place_row(self, node: Node, x: int, y: int, w: int, h: int | None) -> int:
        gap = self.px(node.gap)
        kids = node.children
        fixed_w = sum(self.px(c.width) + self._hmargin(c) for c in kids if c.width > 0)
        flex = [c for c in kids if c.width <= 0]
        free = max(0, w - fixed_w - gap * max(0, len(kids) - 1))
        total_weight = sum(c.weight for c in flex) or 1.0
        cursor = x
        tallest = 0
        placed: list[tuple[Node, int]] = []
        for child in kids:
            ml, mt, mr, mb = self.px4(child.margin)
            cw = (
                self.px(child.width)
                if child.width > 0
                else int(free * child.weight / total_weight) - ml - mr
            )
            ch = self.place(child, cursor + ml, y + mt, max(0, cw), None) + mt + mb
            placed.append((child, ch))
            tallest = max(tallest, ch)
            cursor += cw + ml + mr + gap
        height = h if h is not None else tallest
        for child, ch in placed:  # centre children vertically, as a row of list items does
            self._shift(child, (height - ch) // 2)
        return height

    def _hmargin(self, node: Node) -> int:
        return self.px(node.margin[0]) + self.px(node.margin[2])

    def _place_scroll(self, node: Node, x: int, y: int, w: int, h: int) -> int:
        content = 0
        for child in node.children:
            content += self._place_child(child, x, y, w, None)
        max_offset = max(0, content - h)
        offset = min(self.px(node.scroll_offset), max_offset)
        node.content_height = content / self.density
        node.scroll_offset = offset / self.density
        node.bounds = (x, y, x + w, y + h)
        for child in node.children:
            self._shift(child, -offset)
        viewport = node.bounds
        for child in node.children:
            self._clip(child, viewport)
        # Android reports a ScrollView as scrollable only when its content overflows.
        node.scrollable = max_offset > 0
        return h

    def _shift(self, node: Node, dy: int) -> None:
        if dy == 0:
            return
        for n in node.walk():
            left, top, right, bottom = n.bounds
            n.bounds = (left, top + dy, right, bottom + dy)
            if n.clip is not None:
                cl, ct, cr, cb = n.clip
                n.clip = (cl, ct + dy, cr, cb + dy)

    def _clip(self, node: Node, viewport: Rect) -> None:
        for n in node.walk():
            n.clip = intersect(n.bounds, viewport) if not contains(viewport, n.bounds) else None
            if n.clip is not None and n.clip[3] <= n.clip[1]:
                n.clip = (n.clip[0], n.clip[1], n.clip[2], n.clip[1])


def intersect(a: Rect, b: Rect) -> Rect:
    """The overlap of two rectangles (empty rectangles have right<=left or bottom<=top)."""
    return (max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))


def contains(outer: Rect, inner: Rect) -> bool:
    """Whether ``inner`` lies wholly within ``outer``."""
    return (
        outer[0] <= inner[0]
        and outer[1] <= inner[1]
        and inner[2] <= outer[2]
        and inner[3] <= outer[3]
    )


def is_empty(r: Rect) -> bool:
    """Whether a rectangle has no area."""
    return r[2] <= r[0] or r[3] <= r[1]


def hit(r: Rect, x: int, y: int) -> bool:
    """Whether the point lies in the rectangle."""
    return r[0] <= x < r[2] and r[1] <= y < r[3]


SCRIM_BG: Color = (96, 93, 102)  # what a modal dialog's scrim leaves of a light screen


def with_extension(name: str, extension: str) -> str:
    """A new file's name: as typed, or with ``extension`` when it has none (a text file)."""
    return f"{name}{extension}" if name and "." not in name else name


def name_error(name: str, taken: bool) -> str:
    """Why a new file's or folder's name cannot be used ("" when it can, or is empty)."""
    if "/" in name:
        return "A name can't contain “/”"
    return "A file or folder with this name already exists" if taken else ""


def name_dialog(
    title: str,
    hint: str,
    value: str,
    on_text: Callable[[str], None],
    *,
    on_create: Handler,
    on_cancel: Handler,
    error: str,
    color: Color,
) -> Node:
    """A "New folder" / "New text file" dialog over a scrim: the name field, why the name
    cannot be used (if it cannot), Cancel and Create (Files, Nextcloud and PhotoNote)."""
    valid = bool(value.strip()) and not error
    field = text_field(
        value,
        on_text,
        hint=hint,
        field_name="new_name",
        rid="name",
        on_submit=on_create if valid else None,
    )
    panel = input_dialog(
        title,
        field,
        [
            button("Cancel", on_cancel, filled=False, color=color, rid="cancel"),
            button("Create", on_create, color=color, enabled=valid, rid="create"),
        ],
        error=error,
    )
    return column(spacer(), panel, spacer(), style=Style(bg=SCRIM_BG))


def new_item_dialog(
    kind: str,
    value: str,
    on_text: Callable[[str], None],
    *,
    on_create: Handler,
    on_cancel: Handler,
    error: str,
    color: Color,
) -> Node:
    """The "New folder" or "New text file" dialog of a file manager (Files, Nextcloud)."""
    folder = kind == "folder"
    return name_dialog(
        "New folder" if folder else "New text file",
        "Folder name" if folder else "File name",
        value,
        on_text,
        on_create=on_create,
        on_cancel=on_cancel,
        error=error,
        color=color,
    )


def text_editor(
    draft: str, on_text: Callable[[str], None], offset: float, on_scroll: Callable[[float], None]
) -> Node:
    """A plain text editor's page: one multiline field over the screen (Files, Nextcloud)."""
    editor = text_field(
        draft,
        on_text,
        hint="Start typing",
        field_name="file_text",
        rid="text_editor",
        multiline=True,
    )
    editor.margin = (16, 8, 16, 8)
    return scroll(editor, offset=offset, on_scroll=on_scroll, rid="editor")
