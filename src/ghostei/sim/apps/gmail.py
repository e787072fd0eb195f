"""Gmail: inbox tabs, folders and labels of mail, reading with links and attachments, stars,
archive, reply, forward and compose."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import Any, cast, get_args

from ...web import find_links
from ...world import Contact, Email, EmailCategory, FileEntry
from ..ui import (
    DIVIDER,
    INK,
    MUTED,
    Color,
    Node,
    Style,
    TextHandler,
    button,
    card,
    check_row,
    column,
    divider,
    icon_button,
    image,
    input_dialog,
    list_row,
    popup_menu,
    row,
    scroll,
    spacer,
    text,
    text_field,
    top_bar,
)
from .base import App, AppIcon, SharePayload, register_app

RED: Color = (217, 48, 37)
LINK: Color = (26, 115, 232)
PAGE: Color = (255, 255, 255)
UNREAD_BG: Color = (255, 255, 255)
READ_BG: Color = (242, 246, 252)

SCRIM: Color = (96, 93, 102)  # what a modal dialog's scrim leaves of the white screen
# The inbox tabs (Gmail's categories): (category, label); the Primary tab is the view "inbox".
CATEGORIES: tuple[tuple[str, str], ...] = (
    ("primary", "Primary"),
    ("promotions", "Promotions"),
    ("social", "Social"),
    ("updates", "Updates"),
)
# The drawer's system folders after the tabs: (view id, label). A user label's view is
# ``label:<name>``; a tab's is its category (Primary's is "inbox").
FOLDERS: tuple[tuple[str, str], ...] = (
    ("inbox", "Inbox"),
    ("starred", "Starred"),
    ("sent", "Sent"),
    ("drafts", "Drafts"),
    ("all", "All mail"),
    ("spam", "Spam"),
    ("trash", "Trash"),
)
TABS = {c: label for c, label in CATEGORIES if c != "primary"}
LABEL_VIEW = "label:"
RECIPIENT_SPLIT = re.compile(r"[,;]")
EMAIL_ADDRESS = re.compile(r"[^@\s<>()]+@[^@\s<>()]+\.[A-Za-z]{2,}")


@dataclass
class Draft:
    """What the compose screen holds."""

    to: str = ""
    cc: str = ""
    subject: str = ""
    body: str = ""
    quoted: str = ""  # a forwarded message, carried below what the user writes
    attachments: list[str] = field(default_factory=list)
    draft_id: str = ""  # the Drafts entry this compose edits, if any
    reply_to: str = ""  # the id of the message answered
    forward_of: str = ""  # the id of the message forwarded

    def content(self) -> tuple[str, str, str, str, tuple[str, ...]]:
        """What the user can change: leaving compose with it unchanged saves no draft."""
        return (self.to, self.cc, self.subject, self.body, tuple(self.attachments))


@register_app
class Gmail(App):
    """Gmail for Android, one account."""

    label = "Gmail"
    icon = AppIcon("M", RED)
    accepts_share = ("text", "files")

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.folder = "inbox"
        self.query = ""  # the "Search in mail" box
        self.draft = Draft()
        self.pristine = Draft().content()  # the compose content when it was opened
        self.error = ""  # why Send refused, shown on the compose screen
        self.menu = False  # the opened mail's overflow menu is open
        self.new_label = ""  # the New label dialog's field
        self.picked: list[str] = []  # the Change labels dialog's ticked labels
        self.selected: list[str] = []  # the list's selected mails (its selection mode)

    def receive_share(self, payload: SharePayload) -> None:
        # A share opens a new message holding what was shared; the user picks recipients.
        # A message being written meanwhile is not lost: it goes to Drafts first.
        if self.screen == "compose" and self.draft.content() != self.pristine:
            self._save_draft()
        draft = Draft(subject=payload.subject, body=payload.text, attachments=list(payload.files))
        self._open_compose(draft, pristine=Draft())
        self.screens = [(self.home_screen, {}), ("compose", {})]
        self.os.focus("to")

    def on_intent(self, intent: dict[str, Any]) -> None:
        if "email" in intent:
            email = self._email(str(intent["email"]))
            if email is not None:
                self.os.clear_focus()
                self.screens = [(self.home_screen, {})]
                self._open(email)

    def back(self) -> bool:
        if self.screen == "compose":
            self._leave_compose()
            return True
        if self.menu:
            self.menu = False
            return True
        if self.screen == "main" and self.selected:
            self.selected = []  # Back leaves the selection mode
            return True
        if len(self.screens) == 1 and self.folder != "inbox":
            self._show("inbox")  # Back from another folder or label returns to the inbox
            return True
        return super().back()

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        title = self._title(self.folder)
        mails = self._listed()
        rows: list[Node] = [
            text(
                "Primary"
                if self.folder == "inbox"
                else title
                if self.folder in TABS
                else title.upper(),
                size=13,
                weight=600,
                fg=MUTED,
                pad=(16, 10, 16, 6),
                rid="folder_name",
            )
        ]
        if self.folder == "inbox" and not self.query.strip():
            rows += self._tab_summaries()
        rows += [self._row(m) for m in mails]
        if not mails:
            query = self.query.strip()
            empty = f"No results for “{query}”" if query else f"Nothing in {title}"
            rows.append(text(empty, fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        search = text_field(
            self.query,
            self._set_query,
            hint="Search in mail",
            field_name="search",
            rid="open_search",
            on_submit=self.os.clear_focus,  # the list filters as you type
        )
        chosen = [m for m in mails if m.id in self.selected]
        bar = (
            self._selection_bar(chosen)
            if chosen
            else row(
                icon_button("menu", "Open navigation drawer", lambda: self.push("drawer")),
                search,
                pad=(8, 8, 16, 8),
                gap=4,
                rid="search_bar",
            )
        )
        kids = [bar]
        if chosen and self.menu:
            kids.append(self._overflow(chosen))
        return column(
            *kids,
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="thread_list_view"),
            row(
                spacer(0),
                _fab(button("Compose", self._compose_new, rid="compose_button", width=140)),
                pad=(16, 8, 16, 16),
            ),
            style=Style(bg=PAGE),
        )

    def screen_drawer(self) -> Node:
        rows: list[Node] = [text("Gmail", size=22, weight=500, fg=RED, pad=(24, 20, 24, 12))]
        views = [c if c != "primary" else "inbox" for c, _ in CATEGORIES]
        views += [f for f, _ in FOLDERS if f != "inbox"]
        for view in views:
            rows.append(self._drawer_row(view, self._title(view) if view != "inbox" else "Primary"))
        rows.append(text("LABELS", size=13, weight=600, fg=MUTED, pad=(24, 16, 24, 4)))
        rows += [self._drawer_row(LABEL_VIEW + name, name) for name in self._labels()]
        rows.append(
            list_row(
                "Create new",
                leading=icon_button("+", "", None),
                rid="create_label",
                on_click=self._start_label,
            )
        )
        return column(
            top_bar(self.os.world.owner.email, on_back=self.pop),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="drawer"),
            style=Style(bg=(246, 248, 252)),
        )

    def screen_message(self) -> Node:
        email = self._email(str(self.args["id"]))
        if email is None:  # deleted meanwhile, or a stale deep link
            return self._gone()
        owner = self.os.world.owner
        sender = email.sender_name or email.sender or owner.name
        address = email.sender or owner.email
        to = ", ".join(self._name(a) for a in email.to) or "me"
        kids: list[Node] = [
            row(
                text(email.subject or "(no subject)", size=22, rid="subject"),
                self._star_toggle(email),
                pad=(16, 8, 8, 0),
                gap=8,
            ),
            *self._chips(email),
            row(
                image(sender[:1].upper() or "?", size=40, color=_tint(address)),
                column(
                    text(sender, size=16, weight=600, max_lines=1, rid="sender_name"),
                    text(f"<{address}>", size=13, fg=MUTED, max_lines=1, rid="sender_address"),
                    text(f"to {to}", size=13, fg=MUTED, rid="recipient_summary"),
                    *(
                        [text(f"cc {', '.join(email.cc)}", size=13, fg=MUTED, rid="cc_summary")]
                        if email.cc
                        else []
                    ),
                    gap=2,
                ),
                text(_when(email.time, self.os.now()), size=13, fg=MUTED, width=72, align="right"),
                pad=(16, 4, 16, 8),
                gap=12,
            ),
            text(email.body, size=16, fg=INK, pad=(16, 8, 16, 8), rid="message_body"),
        ]
        for link in body_links(email.body):
            kids.append(
                text(
                    link,
                    size=15,
                    fg=LINK,
                    pad=(16, 4, 16, 4),
                    rid="body_link",
                    on_click=partial(self._follow, link),
                )
            )
        if email.attachments:
            kids.append(
                text(
                    f"{len(email.attachments)} attachment"
                    f"{'s' if len(email.attachments) > 1 else ''}",
                    size=14,
                    weight=600,
                    fg=MUTED,
                    pad=(16, 12, 16, 0),
                )
            )
            kids += [self._attachment_chip(email, path) for path in email.attachments]
        kids.append(
            row(
                button(
                    "Reply", lambda: self._reply(email), filled=False, rid="reply_button", color=INK
                ),
                button(
                    "Forward",
                    lambda: self._forward(email),
                    filled=False,
                    rid="forward_button",
                    color=INK,
                ),
                pad=(16, 16, 16, 24),
                gap=12,
            )
        )
        actions: list[Node] = [spacer(0)]
        if email.folder == "inbox":
            archive = partial(self._archive, [email])
            actions.append(icon_button("archive", "Archive", archive, rid="archive"))
        actions += [
            button(
                "Delete",
                lambda: self._delete(email),
                filled=False,
                color=INK,
                rid="delete",
                width=100,
            ),
            icon_button("more", "More options", self._toggle_menu, rid="overflow"),
        ]
        screen = [
            top_bar("", on_back=self.pop, actions=actions),
            scroll(*kids, offset=self.offset(), on_scroll=self.set_offset, rid="conversation_view"),
        ]
        if self.menu:
            screen.insert(1, self._overflow([email]))
        return column(*screen, style=Style(bg=PAGE))

    def screen_move_to(self) -> Node:
        mails = self._chosen()
        if not mails:
            return self._gone()
        here = {self._place(m) for m in mails}
        rows = [
            list_row(
                name,
                bold=here == {name},
                rid="move_target",
                on_click=partial(self._move, mails, target),
            )
            for target, name in self._move_targets()
        ]
        panel = input_dialog(
            "Move to",
            column(*rows),
            [button("Cancel", self.pop, filled=False, color=LINK, rid="cancel")],
        )
        return column(spacer(), panel, spacer(), style=Style(bg=SCRIM))

    def screen_change_labels(self) -> Node:
        mails = self._chosen()
        if not mails:
            return self._gone()
        names = self._labels()
        rows: list[Node] = [
            check_row(name, name in self.picked, partial(self._tick, name)) for name in names
        ]
        if not names:
            rows.append(text("No labels yet", fg=MUTED, pad=(24, 8, 24, 8)))
        panel = input_dialog(
            "Change labels",
            column(*rows),
            [
                button("Cancel", self.pop, filled=False, color=LINK, rid="cancel"),
                button("OK", partial(self._relabel, mails), color=LINK, rid="ok"),
            ],
        )
        return column(spacer(), panel, spacer(), style=Style(bg=SCRIM))

    def screen_new_label(self) -> Node:
        name = self.new_label.strip()
        taken = name.casefold() in {n.casefold() for n in self._labels()}
        error = "This label already exists" if taken else ""
        valid = bool(name) and not taken
        field = text_field(
            self.new_label,
            self._set_new_label,
            hint="Enter a new label",
            field_name="new_label",
            rid="label_name",
            on_submit=self._create_label if valid else None,
        )
        panel = input_dialog(
            "New label",
            field,
            [
                button("Cancel", self.pop, filled=False, color=LINK, rid="cancel"),
                button("Done", self._create_label, color=LINK, enabled=valid, rid="done"),
            ],
            error=error,
        )
        return column(spacer(), panel, spacer(), style=Style(bg=SCRIM))

    def screen_compose(self) -> Node:
        d = self.draft
        owner = self.os.world.owner
        kids: list[Node] = [
            _compose_row(
                text("From", size=16, fg=MUTED, width=64, rid="from_label"),
                text(owner.email, size=16, rid="from_account_name", max_lines=1),
            ),
            _compose_row(
                text("To", size=16, fg=MUTED, width=40),
                self._recipient_field("to", d.to, "To"),
            ),
            *self._suggestions("to", d.to),
            _compose_row(
                text("Cc", size=16, fg=MUTED, width=40),
                self._recipient_field("cc", d.cc, "Cc"),
            ),
            *self._suggestions("cc", d.cc),
            column(
                _bare(
                    text_field(
                        d.subject,
                        self._setter("subject"),
                        hint="Subject",
                        field_name="subject",
                        rid="subject",
                    )
                ),
                divider(),
            ),
            _bare(
                text_field(
                    d.body,
                    self._setter("body"),
                    hint="Compose email",
                    field_name="body",
                    rid="wc_body",
                    multiline=True,
                )
            ),
        ]
        for path in d.attachments:
            kids.append(
                row(
                    text(_file_name(path), size=15, max_lines=1, rid="attachment_name"),
                    icon_button(
                        "x",
                        f"Remove attachment {_file_name(path)}",
                        partial(self._detach, path),
                        rid="remove_attachment",
                    ),
                    pad=(16, 4, 8, 4),
                    gap=8,
                    margin=(16, 4, 16, 4),
                    style=Style(border=DIVIDER, radius=8),
                    rid="attachment_tile",
                )
            )
        if d.quoted:
            kids.append(text(d.quoted, size=14, fg=MUTED, pad=(16, 12, 16, 12), rid="quoted_text"))
        if self.error:
            kids.insert(0, text(self.error, size=14, fg=RED, pad=(16, 8, 16, 0), rid="error"))
        return column(
            top_bar(
                "Compose",
                on_back=self._leave_compose,
                actions=[
                    icon_button(
                        "+", "Attach file", lambda: self.push("attach"), rid="add_attachment"
                    ),
                    icon_button("send", "Send", self._send, rid="send"),
                    icon_button("x", "Discard", self._discard, rid="discard"),
                ],
            ),
            scroll(
                *kids, spacer(24), offset=self.offset(), on_scroll=self.set_offset, rid="compose"
            ),
            style=Style(bg=PAGE),
        )

    def screen_attach(self) -> Node:
        files = sorted((f for f in self.os.world.files if f.kind != "folder"), key=lambda f: f.path)
        rows = [
            list_row(
                f.name,
                f"{f.folder.removeprefix('/sdcard')} · {_size(f)}",
                leading=image(f.name[:1].upper(), size=40, color=(95, 99, 104)),
                rid="file_row",
                on_click=partial(self._attach, f.path),
            )
            for f in files
        ]
        if not rows:
            rows.append(text("No files on this phone", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        return column(
            top_bar("Attach file", on_back=self.pop),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="file_list"),
            style=Style(bg=PAGE),
        )

    def screen_attachment(self) -> Node:
        f = self.os.world.file(str(self.args["path"]))
        name = _file_name(str(self.args["path"]))
        body = (
            text(
                f.content or "No preview available",
                size=16,
                fg=INK if f.content else MUTED,
                rid="preview",
            )
            if f is not None
            else text("This file is no longer on the phone", fg=MUTED, rid="preview")
        )
        return column(
            top_bar(name, on_back=self.pop),
            scroll(
                card(body, bg=(248, 249, 250)),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="attachment_preview",
            ),
            style=Style(bg=PAGE),
        )

    # ----- pieces -----------------------------------------------------------------------

    def _gone(self) -> Node:
        return column(
            top_bar("", on_back=self.pop),
            text("This message no longer exists", fg=MUTED, align="center", pad=(0, 40, 0, 0)),
            style=Style(bg=PAGE),
        )

    def _selection_bar(self, chosen: list[Email]) -> Node:
        """The list's contextual bar while mails are selected: how many, and what to do."""
        actions: list[Node] = []
        if all(m.folder == "inbox" for m in chosen):
            actions.append(
                icon_button("archive", "Archive", partial(self._archive, chosen), rid="archive")
            )
        actions.append(
            icon_button("trash", "Delete", partial(self._delete_all, chosen), rid="delete")
        )
        unread = any(not m.read for m in chosen)
        actions += [
            icon_button(
                "check" if unread else "bubble",
                "Mark read" if unread else "Mark unread",
                partial(self._mark, chosen, unread),
                rid="read",
            ),
            icon_button("more", "More options", self._toggle_menu, rid="overflow"),
        ]
        done = icon_button("<", "Done", self._clear_selection, rid="action_mode_close_button")
        return row(
            done,
            text(str(len(chosen)), size=20, weight=500, pad=(4, 10, 0, 0), rid="action_bar_title"),
            *actions,
            pad=(4, 8, 8, 8),
            gap=4,
            height=64,
            rid="action_mode_bar",
            style=Style(bg=(211, 227, 253)),
        )

    def _overflow(self, mails: list[Email]) -> Node:
        """More options, for an opened mail or the selected ones."""
        starred = all(m.starred for m in mails)
        items = [
            ("Move to", partial(self._open_dialog, "move_to", mails)),
            ("Change labels", partial(self._open_dialog, "change_labels", mails)),
            ("Remove star" if starred else "Add star", partial(self._star, mails, not starred)),
        ]
        if self.screen == "message":
            items.append(("Mark unread", partial(self._mark, mails, False)))
        if any(m.folder == "archive" for m in mails):
            items.insert(0, ("Move to Inbox", partial(self._unarchive, mails)))
        return row(spacer(0), popup_menu(items, width=220), pad=(0, 0, 8, 0))

    def _drawer_row(self, view: str, label: str) -> Node:
        mails = [m for m in self._in_view(view) if not m.read]
        unread = len(mails) if view not in ("sent", "starred", "all") else 0
        count = "" if not unread else f"{unread} new" if view in TABS else str(unread)
        return list_row(
            label,
            trailing=count,
            bold=view == self.folder,
            rid="folder",
            on_click=partial(self._switch_folder, view),
        )

    def _tab_summaries(self) -> list[Node]:
        """The rows heading the Primary tab for tabs with new mail: the tab's name, who
        wrote, how many are new; a tap opens the tab."""
        rows: list[Node] = []
        for category, label in TABS.items():
            new = [m for m in self._in_view(category) if not m.read]
            if not new:
                continue
            new.sort(key=lambda m: m.time, reverse=True)
            senders = ", ".join(dict.fromkeys(m.sender_name or m.sender for m in new))
            rows.append(
                list_row(
                    label,
                    senders,
                    leading=image(label[:1], size=40, color=_tint(category)),
                    trailing=f"{len(new)} new",
                    rid="category_row",
                    bold=True,
                    on_click=partial(self._show, category),
                )
            )
        return rows

    def _star_toggle(self, m: Email) -> Node:
        star = icon_button(
            "star" if m.starred else "star_outline",
            "Starred" if m.starred else "Not starred",  # a toggle: its desc says its state
            partial(self._star, [m], not m.starred),
            rid="star",
        )
        star.checkable, star.checked = True, m.starred
        if m.starred:
            star.style = replace(star.style, fg=(244, 180, 0))
        return star

    def _chips(self, m: Email) -> list[Node]:
        """The opened mail's labels under its subject: its inbox tab, then the user labels."""
        names = list(m.labels)
        if m.folder == "inbox":
            names.insert(0, "Inbox" if m.category == "primary" else TABS[m.category])
        chips = [
            text(
                name,
                size=13,
                fg=MUTED,
                pad=(8, 2, 8, 2),
                rid="label_chip",
                bg=(234, 236, 239),
                width=7 * len(name) + 18,
            )
            for name in names
        ]
        return [row(*chips, spacer(0), pad=(16, 4, 16, 4), gap=6)] if chips else []

    def _row(self, m: Email) -> Node:
        unread = not m.read and m.folder not in ("sent", "drafts")
        weight = 700 if unread else 400
        if m.folder in ("sent", "drafts"):
            who = "To: " + (", ".join(self._name(a) for a in m.to) or "(no recipients)")
        else:
            who = m.sender_name or m.sender
        head: list[Node] = [text(who, size=16, weight=weight, max_lines=1, rid="senders")]
        if m.folder == "drafts":
            head.insert(0, text("Draft", size=16, weight=600, fg=RED, width=52))
        head.append(
            text(
                _when(m.time, self.os.now()),
                size=13,
                weight=weight,
                fg=MUTED,
                width=64,
                align="right",
                rid="date",
            )
        )
        snippet = " ".join(m.body.split())
        if m.attachments:
            snippet = f"{snippet} · {_file_name(m.attachments[0])}".strip(" ·")
        name = m.sender_name or m.sender or self.os.world.owner.name
        chosen = m.id in self.selected
        avatar = image(
            "check" if chosen else name[:1].upper() or "?",
            f"{'Deselect' if chosen else 'Select'} conversation from {name}",
            size=40,
            color=(11, 87, 208) if chosen else _tint(m.sender or name),
        )
        avatar.rid, avatar.on_click = "contact_image", partial(self._pick, m)
        avatar.clickable, avatar.checkable, avatar.checked = True, True, chosen
        if chosen:
            avatar.style = replace(avatar.style, fg=(255, 255, 255))
        bg = (194, 231, 255) if chosen else UNREAD_BG if unread else READ_BG
        return row(
            avatar,
            column(
                row(*head, gap=8),
                text(
                    m.subject or "(no subject)", size=15, weight=weight, max_lines=1, rid="subject"
                ),
                text(snippet, size=14, fg=MUTED, max_lines=1, rid="snippet"),
                gap=2,
            ),
            self._star_toggle(m),
            rid="viewified_conversation_item_view",
            clickable=True,
            long_clickable=True,
            focusable=True,
            selected=chosen,
            on_click=partial(self._pick, m) if self.selected else partial(self._open, m),
            on_long_click=partial(self._pick, m),
            pad=(16, 10, 16, 10),
            gap=14,
            style=Style(bg=bg),
        )

    def _attachment_chip(self, email: Email, path: str) -> Node:
        here = self.os.world.file(path)
        return row(
            image(_file_name(path)[:1].upper(), size=36, color=(95, 99, 104)),
            column(
                text(_file_name(path), size=15, max_lines=1, rid="attachment_name"),
                text(_size(here) if here else "Tap to download", size=13, fg=MUTED),
                gap=2,
            ),
            rid="attachment_tile",
            desc=f"Attachment: {_file_name(path)}",
            clickable=True,
            focusable=True,
            on_click=partial(self._open_attachment, email, path),
            pad=(12, 8, 12, 8),
            gap=12,
            margin=(16, 6, 16, 6),
            style=Style(border=DIVIDER, radius=12),
        )

    def _recipient_field(self, name: str, value: str, hint: str) -> Node:
        return _bare(text_field(value, self._setter(name), hint=hint, field_name=name, rid=name))

    def _suggestions(self, name: str, value: str) -> list[Node]:
        """Contacts matching the recipient being typed, as Gmail's autocomplete offers them."""
        token = RECIPIENT_SPLIT.split(value)[-1].strip().lower()
        if not token:
            return []
        people = [
            c
            for c in self.os.world.contacts
            if c.email and (token in c.name.lower() or token in c.email.lower())
        ]
        if any(c.email.lower() == token for c in people):
            return []  # the address is complete
        return [
            list_row(
                c.name,
                c.email,
                leading=image(c.name[:1].upper(), size=32, color=_tint(c.email)),
                rid="suggestion",
                on_click=partial(self._complete, name, c),
            )
            for c in people[:4]
        ]

    # ----- handlers ---------------------------------------------------------------------

    def _set_query(self, value: str) -> None:
        self.query = value

    def _setter(self, name: str) -> TextHandler:
        def set_value(value: str) -> None:
            setattr(self.draft, name, value)
            self.error = ""
            self._autosave()

        return set_value

    def _autosave(self) -> None:
        """Gmail keeps a message being written in Drafts as it changes: what a composer holds
        is a draft whether or not the composer is ever left (sending it removes the draft)."""
        if self.draft.content() != self.pristine:
            self.draft.draft_id = self._save_draft()

    def _switch_folder(self, folder: str) -> None:
        self._show(folder)
        self.pop()

    def _show(self, view: str) -> None:
        self.folder = view
        self.query = ""
        self._clear_selection()

    def _pick(self, email: Email) -> None:
        """Select a mail in the list, or deselect it (its avatar, a long press, or a tap
        while in selection mode)."""
        self.menu = False
        if email.id in self.selected:
            self.selected.remove(email.id)
        else:
            self.selected.append(email.id)

    def _clear_selection(self) -> None:
        self.selected = []
        self.menu = False

    def _chosen(self) -> list[Email]:
        """The mails a dialog acts on."""
        return [m for m in self.os.world.emails if m.id in self.args.get("ids", ())]

    def _done(self) -> None:
        """After an action on mails: back to the list, out of selection mode."""
        self._clear_selection()
        self.os.clear_focus()
        self.screens = [(self.home_screen, {})]

    def _toggle_menu(self) -> None:
        self.menu = not self.menu

    def _open_dialog(self, screen: str, mails: list[Email]) -> None:
        self.menu = False
        self.picked = [n for n in self._labels() if all(n in m.labels for m in mails)]
        self.push(screen, ids=tuple(m.id for m in mails))

    def _star(self, mails: list[Email], starred: bool) -> None:
        self.menu = False
        for email in mails:
            if email.starred != starred:
                email.starred = starred
                self.os.log("email_starred", id=email.id, starred=starred, subject=email.subject)

    def _mark(self, mails: list[Email], read: bool) -> None:
        for email in mails:
            email.read = read
        self._done()  # Gmail goes back to the list, a mail marked unread bold again

    def _archive(self, mails: list[Email]) -> None:
        """Archive: out of the Inbox (and its tab), kept in All mail and under its labels."""
        for email in mails:
            email.folder = "archive"
            self.os.log("email_archived", id=email.id, sender=email.sender, subject=email.subject)
        self._done()

    def _unarchive(self, mails: list[Email]) -> None:
        self.menu = False
        for email in mails:
            if email.folder == "archive":
                old = self._place(email)
                email.folder = "inbox"
                moved = {"id": email.id, "subject": email.subject, "to": "Inbox", "from": old}
                self.os.log("email_moved", **moved)

    def _move(self, mails: list[Email], target: str) -> None:
        """Move to: a tab puts the mail in the inbox under that tab; a label puts the label on
        and takes the mail out of the Inbox, as moving out of a folder does."""
        for email in mails:
            old = self._place(email)
            if target.startswith(LABEL_VIEW):
                name = target.removeprefix(LABEL_VIEW)
                if email.folder == "inbox":
                    email.folder = "archive"
                if name not in email.labels:
                    email.labels.append(name)
                label = name
            else:
                email.folder = "inbox"
                email.category = _category(target)
                label = TABS.get(target, "Primary")
            moved = {"id": email.id, "subject": email.subject, "to": label, "from": old}
            self.os.log("email_moved", **moved)
        self._done()  # back to the list: the mail has left the tab it was opened from

    def _tick(self, name: str) -> None:
        self.picked = [n for n in self.picked if n != name] + (
            [] if name in self.picked else [name]
        )

    def _relabel(self, mails: list[Email]) -> None:
        """Change labels' OK: the ticked labels go on, the unticked come off."""
        for email in mails:
            for name in self._labels():
                on = name in self.picked
                if on == (name in email.labels):
                    continue
                email.labels = [n for n in email.labels if n != name] + ([name] if on else [])
                self.os.log(
                    "email_labeled", id=email.id, label=name, labeled=on, subject=email.subject
                )
        self.pop()
        self._clear_selection()

    def _start_label(self) -> None:
        self.new_label = ""
        self.push("new_label")
        self.os.focus("new_label")

    def _set_new_label(self, value: str) -> None:
        self.new_label = value

    def _create_label(self) -> None:
        name = self.new_label.strip()
        if not name or name.casefold() in {n.casefold() for n in self._labels()}:
            return
        self.os.world.email_labels.append(name)
        self.os.log("email_label_created", label=name)
        self.new_label = ""
        self.pop()

    def _open(self, email: Email) -> None:
        if email.folder == "drafts":
            draft = Draft(
                to=", ".join(email.to),
                cc=", ".join(email.cc),
                subject=email.subject,
                body=email.body,
                attachments=list(email.attachments),
                draft_id=email.id,
            )
            self._open_compose(draft, pristine=draft)
            return
        email.read = True
        self.os.log(
            "email_opened",
            id=email.id,
            folder=email.folder,
            sender=email.sender,
            subject=email.subject,
            body=email.body,
        )
        self.push("message", id=email.id)

    def _follow(self, url: str) -> None:
        self.os.log("link_opened", url=url, source="email")
        self.os.open_url(url)

    def _open_attachment(self, email: Email, path: str) -> None:
        here = self.os.world.file(path)
        if here is None:
            name = _file_name(path)
            url = f"https://mail.google.com/mail/u/0/attachment/{email.id}/{name}"
            content = f"{name}, attached to “{email.subject}” from {email.sender or 'me'}"
            path = self.os.download(url, name, content)
        else:
            path = here.path
        self.os.log("file_opened", path=path, source="email", email=email.id)
        self.push("attachment", path=path)

    def _delete_all(self, mails: list[Email]) -> None:
        for email in mails:
            self._trash(email)
        self._done()

    def _delete(self, email: Email) -> None:
        self._trash(email)
        self.pop()

    def _trash(self, email: Email) -> None:
        permanent = email.folder == "trash"
        if permanent:
            self.os.world.emails.remove(email)
        else:
            email.folder = "trash"
        self.os.log(
            "email_deleted",
            id=email.id,
            sender=email.sender,
            subject=email.subject,
            permanent=permanent,
        )

    def _compose_new(self) -> None:
        self._open_compose(Draft(), pristine=Draft())
        self.os.focus("to")  # Gmail opens a new message with the cursor in To

    def _reply(self, email: Email) -> None:
        subject = email.subject
        if not subject.lower().startswith("re:"):
            subject = f"Re: {subject}"
        to = email.sender or ", ".join(email.to)
        draft = Draft(to=to, subject=subject, reply_to=email.id)
        self._open_compose(draft, pristine=draft)
        self.os.focus("body")

    def _forward(self, email: Email) -> None:
        subject = email.subject
        if not subject.lower().startswith("fwd:"):
            subject = f"Fwd: {subject}"
        sender = email.sender_name or email.sender or self.os.world.owner.name
        quoted = (
            "---------- Forwarded message ---------\n"
            f"From: {sender} <{email.sender or self.os.world.owner.email}>\n"
            f"Date: {email.time.replace('T', ' ')[:16]}\n"
            f"Subject: {email.subject}\n"
            f"To: {', '.join(email.to) or self.os.world.owner.email}\n\n"
            f"{email.body}"
        )
        draft = Draft(
            subject=subject,
            quoted=quoted,
            attachments=list(email.attachments),
            forward_of=email.id,
        )
        self._open_compose(draft, pristine=draft)
        self.os.focus("to")

    def _open_compose(self, draft: Draft, *, pristine: Draft) -> None:
        self.draft = draft
        self.pristine = pristine.content()
        self.error = ""
        self.push("compose")

    def _complete(self, name: str, contact: Contact) -> None:
        current = getattr(self.draft, name)
        done = [t.strip() for t in RECIPIENT_SPLIT.split(current)[:-1] if t.strip()]
        setattr(self.draft, name, ", ".join([*done, contact.email]) + ", ")
        self._autosave()

    def _attach(self, path: str) -> None:
        if path not in self.draft.attachments:
            self.draft.attachments.append(path)
            self._autosave()
        self.pop()

    def _detach(self, path: str) -> None:
        self.draft.attachments = [p for p in self.draft.attachments if p != path]
        self._autosave()

    def _send(self) -> None:
        d = self.draft
        to, bad_to = self._recipients(d.to)
        cc, bad_cc = self._recipients(d.cc)
        bad = bad_to + bad_cc
        if bad:
            self.error = f"Invalid recipient: {bad[0]}"
            return
        if not to and not cc:
            self.error = "Add at least one recipient"
            return
        body = d.body.rstrip()
        if d.quoted:
            body = f"{body}\n\n{d.quoted}".lstrip("\n")
        world = self.os.world
        world.emails = [m for m in world.emails if m.id != d.draft_id]  # the draft is sent
        email = Email(
            id=self._mail_id("sent"),
            folder="sent",
            sender=world.owner.email,
            sender_name=world.owner.name,
            to=to,
            cc=cc,
            subject=d.subject.strip(),
            body=body,
            time=self.os.now(),
            attachments=list(d.attachments),
        )
        world.emails.append(email)
        self.os.log(
            "email_sent",
            id=email.id,
            to=to,
            cc=cc,
            subject=email.subject,
            body=body,
            attachments=list(d.attachments),
            reply_to=d.reply_to,
            forward_of=d.forward_of,
        )
        self._close_compose()

    def _leave_compose(self) -> None:
        """Back from compose: a message with anything in it is kept in Drafts."""
        d = self.draft
        if d.content() != self.pristine:
            self._save_draft()
        self._close_compose()

    def _save_draft(self) -> str:
        """Keep the message being written in Drafts (a new entry, or the one it edits); the
        entry's id."""
        d = self.draft
        world = self.os.world
        to = [t.strip() for t in RECIPIENT_SPLIT.split(d.to) if t.strip()]
        cc = [t.strip() for t in RECIPIENT_SPLIT.split(d.cc) if t.strip()]
        body = f"{d.body.rstrip()}\n\n{d.quoted}".strip() if d.quoted else d.body
        existing = self._email(d.draft_id) if d.draft_id else None
        email = existing or Email(id=self._mail_id("draft"), folder="drafts")
        email.to, email.cc, email.subject, email.body = to, cc, d.subject, body
        email.attachments = list(d.attachments)
        email.time = self.os.now()
        email.sender, email.sender_name = world.owner.email, world.owner.name
        if existing is None:
            world.emails.append(email)
        self.os.log(
            "email_draft",
            id=email.id,
            to=to,
            cc=cc,
            subject=d.subject,
            body=body,
            attachments=list(d.attachments),
        )
        return email.id

    def _discard(self) -> None:
        if self.draft.draft_id:
            self.os.world.emails = [m for m in self.os.world.emails if m.id != self.draft.draft_id]
        self._close_compose()

    def _close_compose(self) -> None:
        self.draft = Draft()
        self.pristine = Draft().content()
        self.error = ""
        self.pop()

    # ----- helpers ----------------------------------------------------------------------

    def _listed(self) -> list[Email]:
        query = self.query.strip().lower()
        mails = [
            m
            for m in self._in_view(self.folder)
            if not query
            or any(
                query in part.lower()
                for part in (m.sender, m.sender_name, m.subject, m.body, *m.to)
            )
        ]
        return sorted(mails, key=lambda m: m.time, reverse=True)

    def _in_view(self, view: str) -> list[Email]:
        """The mail a drawer entry shows: an inbox tab's, a folder's, or a label's."""
        mails = self.os.world.emails
        kept = [m for m in mails if m.folder not in ("spam", "trash")]
        if view == "inbox" or view in TABS:
            tab = "primary" if view == "inbox" else view
            return [m for m in mails if m.folder == "inbox" and m.category == tab]
        if view == "starred":
            return [m for m in kept if m.starred]
        if view == "all":
            return kept
        if view.startswith(LABEL_VIEW):
            return [m for m in kept if view.removeprefix(LABEL_VIEW) in m.labels]
        return [m for m in mails if m.folder == view]

    def _title(self, view: str) -> str:
        if view.startswith(LABEL_VIEW):
            return view.removeprefix(LABEL_VIEW)
        return TABS.get(view) or dict(FOLDERS).get(view, view)

    def _labels(self) -> list[str]:
        """The owner's labels: those made, and any a mail carries, in alphabetical order."""
        world = self.os.world
        names = dict.fromkeys([*world.email_labels, *(n for m in world.emails for n in m.labels)])
        return sorted(names, key=str.casefold)

    def _place(self, email: Email) -> str:
        """Where a mail is, as Move to names it: its inbox tab, else its folder."""
        if email.folder == "inbox":
            return dict(CATEGORIES)[email.category]
        return self._title(email.folder)

    def _move_targets(self) -> list[tuple[str, str]]:
        """Move to's choices: the inbox tabs, then the owner's labels."""
        tabs = [(c, label) for c, label in CATEGORIES]
        return tabs + [(LABEL_VIEW + n, n) for n in self._labels()]

    def _email(self, email_id: str) -> Email | None:
        return next((m for m in self.os.world.emails if m.id == email_id), None)

    def _name(self, address: str) -> str:
        contact = next((c for c in self.os.world.contacts if c.email == address), None)
        return contact.name if contact else address

    def _recipients(self, value: str) -> tuple[list[str], list[str]]:
        """Addresses in a recipient field (contact names resolve), and the tokens that don't."""
        good: list[str] = []
        bad: list[str] = []
        for token in (t.strip() for t in RECIPIENT_SPLIT.split(value)):
            if not token:
                continue
            if re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", token):
                good.append(token)
                continue
            named = [
                c for c in self.os.world.contacts if c.email and c.name.lower() == token.lower()
            ]
            (good if named else bad).append(named[0].email if named else token)
        return good, bad

    def _mail_id(self, prefix: str) -> str:
        return self.fresh_id(prefix, [m.id for m in self.os.world.emails])


# ----- module helpers ------------------------------------------------------------------------


def body_links(body: str) -> list[str]:
    """The tappable links in a mail or event text; the domain of an email address is not one."""
    return find_links(EMAIL_ADDRESS.sub(" ", body))


def _category(view: str) -> EmailCategory:
    """The inbox tab a Move to target names."""
    return cast(EmailCategory, view) if view in get_args(EmailCategory) else "primary"


def _compose_row(*children: Node) -> Node:
    """A compose header row: content, then a hairline, as Gmail separates From/To/Subject."""
    return column(row(*children, pad=(16, 4, 16, 4), gap=8), divider())


def _fab(node: Node) -> Node:
    """Gmail's Compose button: dark text on light blue."""
    node.style = replace(node.style, bg=(194, 231, 255), fg=(0, 29, 53))
    return node


def _bare(node: Node) -> Node:
    """A borderless text field, as the compose screen draws its fields."""
    node.style = replace(node.style, bg=None, border=None)
    return node


def _file_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _size(f: FileEntry) -> str:
    size = f.byte_size
    return f"{size / 1_048_576:.1f} MB" if size >= 1_048_576 else f"{max(1, size // 1024)} KB"


def _when(stamp: str, now: str) -> str:
    """Gmail's list time: the clock time for today's mail, else the month and day."""
    try:
        moment, today = datetime.fromisoformat(stamp), datetime.fromisoformat(now)
    except ValueError:
        return stamp
    if moment.date() == today.date():
        return moment.strftime("%H:%M")
    return moment.strftime("%b %-d")


AVATAR_COLORS: tuple[Color, ...] = (
    (26, 115, 232),
    (217, 48, 37),
    (24, 128, 56),
    (227, 116, 0),
    (161, 66, 244),
    (0, 137, 123),
)


def _tint(key: str) -> Color:
    return AVATAR_COLORS[sum(map(ord, key)) % len(AVATAR_COLORS)]
