"""Messages: conversation list, threads with links, a composer, new conversations.

A thread's top bar deletes the conversation (Google Messages' Delete, after a confirmation):
its messages leave the phone's store, each logged as ``sms_deleted``.

A new conversation may name several recipients ("+1 202 555 0174, +1 202 555 0182"): its
thread sends each message to every one of them as a message of its own (Google Messages'
group messaging as a mass text: individual messages, individual replies).
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from ...web import find_links
from ...world import Sms, same_number
from ..ui import (
    CARD,
    MUTED,
    Node,
    Style,
    button,
    column,
    icon_button,
    image,
    list_row,
    row,
    scroll,
    text,
    text_field,
    top_bar,
)
from .base import App, AppIcon, SharePayload, register_app
from .gallery import confirm_dialog


@register_app
class Messages(App):
    """Google Messages."""

    label = "Messages"
    icon = AppIcon("bubble", (26, 115, 232))
    accepts_share = ("text", "files")

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.drafts: dict[str, str] = {}
        self.attachments: dict[str, list[str]] = {}  # per thread: files waiting to be sent
        self.recipient_query = ""
        self.sharing: SharePayload | None = None  # shared content waiting for a recipient

    def receive_share(self, payload: SharePayload) -> None:
        # Android opens a new conversation: pick the recipient, then the composer holds it.
        self.sharing = payload
        self.recipient_query = ""
        self.screens = [(self.home_screen, {}), ("new", {})]

    def on_intent(self, intent: dict[str, Any]) -> None:
        if "thread" in intent:
            self.screens = [(self.home_screen, {}), ("thread", {"address": intent["thread"]})]
            self._mark_read(str(intent["thread"]))

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        threads = self._threads()
        rows = []
        for address, last in threads:
            unread = any(not m.read and m.incoming for m in self._messages(address))
            name = self.os.world.display_name(address)
            rows.append(
                list_row(
                    name,
                    last.body,
                    leading=image(name[:1].upper() if name[:1].isalpha() else "#", size=44),
                    trailing=last.time[11:16],
                    bold=unread,
                    rid="conversation",
                    on_click=partial(self._open_thread, address),
                )
            )
        if not rows:
            rows.append(text("No conversations yet", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        return column(
            top_bar("Messages", actions=[icon_button("search", "Search", None)]),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="conversation_list"),
            row(
                button(
                    "Start chat",
                    lambda: self.push("new"),
                    rid="start_chat",
                    width=150,
                    desc="Start chat",
                ),
                pad=(230, 8, 16, 16),
            ),
            style=Style(bg=(254, 247, 255)),
        )

    def screen_new(self) -> Node:
        query = self.recipient_query
        matches = [
            c
            for c in self.os.world.contacts
            if c.phone
            and (
                not query
                or query.lower() in c.name.lower()
                or (_digits(query) and _digits(query) in _digits(c.phone))
            )
        ]
        rows = [
            list_row(
                c.name,
                c.phone,
                leading=image(c.name[:1].upper(), size=40),
                rid="contact_row",
                on_click=partial(self._start, c.phone),
            )
            for c in matches
        ]
        if query and _digits(query) and not matches:
            rows.insert(
                0,
                list_row(
                    f"Send to {query}", on_click=lambda: self._start(query), rid="send_to_number"
                ),
            )
        return column(
            top_bar("New conversation", on_back=self.pop),
            row(
                text("To", size=16, fg=MUTED, width=36, pad=(0, 16, 0, 0)),
                text_field(
                    query,
                    self._set_query,
                    hint="Type name, phone number or email",
                    field_name="recipient",
                    rid="recipient_text_view",
                    on_submit=lambda: self._start(query) if query else None,
                ),
                pad=(16, 4, 16, 8),
                gap=8,
            ),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="contact_list"),
            style=Style(bg=(254, 247, 255)),
        )

    def screen_thread(self) -> Node:
        address = str(self.args["address"])
        bubbles = [self._bubble(m) for m in self._messages(address)]
        draft = self.drafts.get(address, "")
        attached = self.attachments.get(address, [])
        name = ", ".join(self.os.world.display_name(a) for a in recipients(address))
        subtitle = address if name != address else ""
        return column(
            top_bar(
                name,
                on_back=self.pop,
                actions=[
                    text(subtitle, size=13, fg=MUTED, width=150, pad=(0, 16, 0, 0)),
                    icon_button(
                        "trash",
                        "Delete conversation",
                        lambda: self.push("confirm_delete", address=address),
                        rid="delete_conversation",
                    ),
                ],
            ),
            scroll(*bubbles, offset=self.offset(), on_scroll=self.set_offset, rid="messages_list"),
            *(
                row(
                    text(f"Attachment: {path.rsplit('/', 1)[-1]}", size=14, rid="attachment_name"),
                    icon_button(
                        "x",
                        "Remove attachment",
                        partial(self._detach, address, path),
                        rid="remove_attachment",
                    ),
                    pad=(16, 4, 12, 0),
                    gap=8,
                )
                for path in attached
            ),
            row(
                text_field(
                    draft,
                    lambda v: self._set_draft(address, v),
                    hint="Text message",
                    field_name="message",
                    rid="compose_message_text",
                    multiline=True,
                ),
                icon_button(
                    "send",
                    "Send SMS",
                    (lambda: self._send(address)) if draft.strip() or attached else None,
                    rid="send_message_button_icon",
                ),
                pad=(12, 8, 12, 12),
                gap=8,
            ),
            style=Style(bg=(254, 247, 255)),
        )

    def screen_confirm_delete(self) -> Node:
        address = str(self.args["address"])
        name = ", ".join(self.os.world.display_name(a) for a in recipients(address))
        return confirm_dialog(
            "Delete this conversation?",
            f"The conversation with {name} will be deleted from this phone.",
            "Delete",
            lambda: self._delete_thread(address),
            self.pop,
        )

    # ----- pieces -----------------------------------------------------------------------

    def _bubble(self, m: Sms) -> Node:
        links = find_links(m.body)
        kids: list[Node] = [
            text(
                m.body,
                size=16,
                fg=(29, 27, 32) if m.incoming else (255, 255, 255),
                rid="message_text",
            )
        ]
        for link in links:
            kids.append(
                text(
                    link,
                    size=15,
                    fg=(26, 115, 232) if m.incoming else (220, 230, 255),
                    rid="message_link",
                    on_click=partial(self._follow, link),
                )
            )
        for path in m.attachments:
            name = path.rsplit("/", 1)[-1]
            kids.append(image(name[:1].upper(), name, size=120))
        kids.append(text(m.time[11:16], size=11, fg=MUTED if m.incoming else (230, 225, 240)))
        bubble = column(
            *kids,
            cls="android.view.ViewGroup",
            rid="message_content",
            pad=(14, 10, 14, 10),
            gap=4,
            style=Style(bg=CARD if m.incoming else (103, 80, 164), radius=18),
        )
        margin = (12, 4, 80, 4) if m.incoming else (80, 4, 12, 4)
        bubble.margin = margin
        return bubble

    def _threads(self) -> list[tuple[str, Sms]]:
        latest: dict[str, Sms] = {}
        for m in self.os.world.sms:
            key = next((k for k in latest if same_number(k, m.address)), m.address)
            latest[key] = m
        return sorted(latest.items(), key=lambda kv: kv[1].time, reverse=True)

    def _messages(self, address: str) -> list[Sms]:
        # A thread with several recipients shows what was exchanged with any of them.
        return [
            m
            for m in self.os.world.sms
            if m.address == address or any(same_number(m.address, a) for a in recipients(address))
        ]

    def _mark_read(self, address: str) -> None:
        for m in self._messages(address):
            m.read = True

    def _open_thread(self, address: str) -> None:
        self._mark_read(address)
        self.push("thread", address=address)

    def _start(self, address: str) -> None:
        self.recipient_query = ""
        if self.sharing is not None:
            shared, self.sharing = self.sharing, None
            if shared.text:
                self._set_draft(address, shared.text)
            self.attachments[address] = [*self.attachments.get(address, []), *shared.files]
        self.screens = [(self.home_screen, {}), ("thread", {"address": address})]
        self.os.clear_focus()

    def _set_query(self, value: str) -> None:
        self.recipient_query = value

    def _set_draft(self, address: str, value: str) -> None:
        self.drafts[address] = value
        self.os.log("sms_draft", to=address, body=value)

    def _detach(self, address: str, path: str) -> None:
        self.attachments[address] = [p for p in self.attachments.get(address, []) if p != path]

    def _send(self, address: str) -> None:
        body = self.drafts.pop(address, "").strip()
        files = self.attachments.pop(address, [])
        if not body and not files:
            return
        world = self.os.world
        for to in recipients(address):  # several recipients: a message to each
            world.sms.append(
                Sms(
                    id=f"out{len(world.sms)}",
                    address=to,
                    body=body,
                    time=self.os.now(),
                    incoming=False,
                    attachments=files,
                )
            )
            self.os.log(
                "sms_sent",
                to=to,
                body=body,
                contact=world.display_name(to),
                attachments=files,
            )

    def _delete_thread(self, address: str) -> None:
        world = self.os.world
        for m in self._messages(address):
            world.sms.remove(m)
            self.os.log("sms_deleted", address=m.address, body=m.body, id=m.id)
        self.drafts.pop(address, None)
        self.attachments.pop(address, None)
        self.os.clear_focus()
        self.screens = [(self.home_screen, {})]

    def _follow(self, url: str) -> None:
        self.os.log("link_opened", url=url, source="sms")
        self.os.open_url(url)


def _digits(value: str) -> str:
    return "".join(ch for ch in value if ch.isdigit())


def recipients(address: str) -> list[str]:
    """The recipients of a conversation: one address, or several separated by commas or
    semicolons as the To field takes them."""
    parts = [p.strip() for p in re.split(r"[,;]", address) if p.strip()]
    return parts or [address]
