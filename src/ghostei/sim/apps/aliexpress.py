"""AliExpress: search products, a wishlist and a cart, buy with the saved card, orders with
tracking, seller chats."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from ...web import find_links
from ...world import CartItem, Order, Product, SellerMessage
from ..ui import (
    CARD,
    INK,
    MUTED,
    Color,
    Handler,
    Node,
    Style,
    bottom_tabs,
    button,
    card,
    column,
    icon_button,
    image,
    list_row,
    radio_row,
    row,
    scroll,
    spacer,
    text,
    text_field,
    top_bar,
)
from .base import App, AppIcon, register_app

BRAND: Color = (230, 46, 4)
WHITE: Color = (255, 255, 255)
PAGE: Color = (245, 245, 245)
LINK: Color = (26, 115, 232)
STATUS_COLORS: dict[str, Color] = {
    "Awaiting payment": (201, 90, 0),
    "Processing": (26, 115, 232),
    "Shipped": (0, 128, 9),
    "Delivered": (0, 128, 9),
    "Cancelled": (179, 38, 30),
}
# Orders that have not left the warehouse can still be cancelled or re-addressed.
OPEN_STATUSES = ("Awaiting payment", "Processing")
TABS: tuple[tuple[str, str], ...] = (
    ("main", "Home"),
    ("inbox", "Messages"),
    ("cart", "Cart"),
    ("account", "Account"),
)
# The wishlist's sort orders: (key, label); the key is kept in the world's shop.
WISHLIST_SORTS: tuple[tuple[str, str], ...] = (
    ("recent", "Most recent"),
    ("price_asc", "Price: low to high"),
    ("price_desc", "Price: high to low"),
)


@register_app
class AliExpress(App):
    """The AliExpress shopping app."""

    label = "AliExpress"
    icon = AppIcon("A", BRAND)

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.query = ""
        self.drafts: dict[str, str] = {}  # seller -> message being written
        self.address_draft = ""
        self.sort_open = False  # the wishlist's sort menu is expanded

    def back(self) -> bool:
        # Back from another tab's first screen returns to Home, as the bottom navigation does.
        if len(self.screens) == 1 and self.screen != self.home_screen:
            self.switch_to(self.home_screen)
            return True
        return super().back()

    def on_intent(self, intent: dict[str, Any]) -> None:
        if "order" in intent:
            self.os.clear_focus()
            self.screens = [("orders", {}), ("order", {"id": str(intent["order"])})]

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        query = self.query.strip().lower()
        products = [
            p
            for p in self.os.world.shop.products
            if not query or query in p.title.lower() or query in p.seller.lower()
        ]
        cards = [self._product_card(p) for p in products]
        if not cards:
            empty = f"No results for “{self.query.strip()}”" if query else "No products"
            cards.append(text(empty, fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        search = text_field(
            self.query,
            self._set_query,
            hint="Search AliExpress",
            field_name="search",
            rid="search_box",
            on_submit=self.os.clear_focus,
        )
        return column(
            row(search, pad=(12, 10, 12, 10), style=Style(bg=BRAND)),
            scroll(*cards, spacer(8), offset=self.offset(), on_scroll=self.set_offset, rid="feed"),
            self._tabs("main"),
            style=Style(bg=PAGE),
        )

    def screen_product(self) -> Node:
        p = self._product(str(self.args["id"]))
        if p is None:
            return _missing(self.pop, "This item is no longer available")
        in_cart = sum(i.quantity for i in self.os.world.shop.cart if i.product == p.id)
        bottom: list[Node] = []
        if in_cart:
            bottom.append(
                text(
                    f"In your cart ({in_cart}) · View cart",
                    size=14,
                    fg=LINK,
                    pad=(16, 8, 16, 0),
                    rid="view_cart",
                    on_click=partial(self.push, "cart"),
                )
            )
        bottom.append(
            row(
                button(
                    "Add to cart",
                    partial(self._add_to_cart, p),
                    filled=False,
                    color=BRAND,
                    rid="add_to_cart",
                ),
                button("Buy now", partial(self._checkout, p), color=BRAND, rid="buy_now"),
                pad=(16, 8, 16, 16),
                gap=10,
            )
        )
        return column(
            _bar("Item details", on_back=self.pop, actions=[self._heart(p)]),
            scroll(
                _card(
                    row(spacer(0), image("A", p.title, size=160, color=(255, 214, 196)), spacer(0)),
                    text(p.price, size=24, weight=700, fg=BRAND, rid="price"),
                    text(p.title, size=18, rid="title"),
                    text(f"Rating {p.rating:.1f} · {p.sold:,} sold", size=14, fg=MUTED),
                ),
                _card(
                    text("Sold by", size=14, fg=MUTED),
                    text(p.seller, size=16, weight=600, rid="seller"),
                    _left(
                        button(
                            "Message seller",
                            partial(self._open_chat, p.seller),
                            filled=False,
                            color=BRAND,
                            rid="message_seller",
                            width=170,
                        )
                    ),
                ),
                _card(
                    text("Description", size=16, weight=700),
                    text(p.description or "No description", size=15, rid="description"),
                ),
                spacer(12),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="item",
            ),
            *bottom,
            style=Style(bg=PAGE),
        )

    def screen_checkout(self) -> Node:
        lines = self._checkout_lines()
        if not lines:
            return _missing(self.pop, "This item is no longer available")
        shop = self.os.world.shop
        total = _total(lines)
        items = [
            _card(
                text(p.title, size=16, max_lines=2, rid="checkout_item"),
                text(f"Sold by {p.seller}", size=14, fg=MUTED),
                _fact("Quantity", str(quantity)),
                _fact("Shipping", "Free"),
                _fact("Total", _total([(p, quantity)])),
            )
            for p, quantity in lines
        ]
        return column(
            _bar("Order confirmation", on_back=self.pop),
            scroll(
                _card(
                    text("Ship to", size=14, fg=MUTED),
                    text(self._default_address(), size=16, rid="shipping_address"),
                    _left(
                        button(
                            "Change address",
                            partial(self._edit_address, ""),
                            filled=False,
                            color=LINK,
                            width=170,
                        )
                    ),
                ),
                *items,
                _card(
                    text("Pay with", size=14, fg=MUTED),
                    text(f"Visa {shop.saved_card}", size=16, rid="payment_method"),
                ),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="checkout",
            ),
            row(
                text(total, size=20, weight=700, fg=BRAND, pad=(0, 10, 0, 0), rid="total"),
                button("Place order", partial(self._place, lines), color=BRAND, rid="place_order"),
                pad=(16, 8, 16, 16),
                gap=10,
            ),
            style=Style(bg=PAGE),
        )

    def screen_orders(self) -> Node:
        orders = list(reversed(self.os.world.shop.orders))  # newest first
        cards = [
            _card(
                text(o.seller, size=14, fg=MUTED),
                text(o.item, size=16, weight=600, max_lines=2, rid="order_item"),
                row(
                    _status(o.status),
                    text(f"{o.price} × {o.quantity}", size=14, align="right"),
                ),
                on_click=partial(self.push, "order", id=o.id),
                rid="order_card",
            )
            for o in orders
        ]
        if not cards:
            cards.append(text("No orders yet", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        on_back = self.pop if len(self.screens) > 1 else partial(self.switch_to, "account")
        return column(
            _bar("My orders", on_back=on_back),
            scroll(*cards, spacer(8), offset=self.offset(), on_scroll=self.set_offset, rid="list"),
            style=Style(bg=PAGE),
        )

    def screen_order(self) -> Node:
        o = self._order(str(self.args["id"]))
        if o is None:
            return _missing(self.pop, "This order no longer exists")
        scans = [text(s, size=15, rid="tracking_event") for s in reversed(o.tracking)]
        if not scans:
            scans.append(text("No tracking updates yet", size=15, fg=MUTED))
        actions: list[Node] = []
        if o.status == "Awaiting payment":
            actions.append(
                button("Pay now", partial(self.push, "pay", id=o.id), color=BRAND, rid="pay_now")
            )
        actions.append(
            button(
                "Message seller",
                partial(self._open_chat, o.seller),
                filled=False,
                color=BRAND,
                rid="contact_seller",
            )
        )
        if o.status in OPEN_STATUSES:
            actions.append(
                button(
                    "Change address",
                    partial(self._edit_address, o.id),
                    filled=False,
                    color=LINK,
                    rid="change_address",
                )
            )
            actions.append(
                button(
                    "Cancel order",
                    partial(self.push, "cancel", id=o.id),
                    filled=False,
                    color=STATUS_COLORS["Cancelled"],
                    rid="cancel_order",
                )
            )
        return column(
            _bar("Order details", on_back=self.pop),
            scroll(
                _card(
                    _status(o.status),
                    text(o.item, size=17, weight=600, rid="order_item"),
                    text(f"Sold by {o.seller}", size=14, fg=MUTED),
                    _fact("Order number", o.id),
                    _fact("Placed", o.placed[:10] if o.placed else "—"),
                    _fact("Total", f"{o.price} × {o.quantity}"),
                ),
                _card(
                    text("Ship to", size=14, fg=MUTED),
                    text(o.address or self._default_address(), size=16, rid="order_address"),
                ),
                _card(
                    text("Tracking", size=16, weight=700),
                    _fact("Tracking number", o.tracking_number or "—"),
                    *scans,
                    rid="tracking",
                ),
                column(*actions, pad=(16, 8, 16, 24), gap=10),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="order",
            ),
            style=Style(bg=PAGE),
        )

    def screen_pay(self) -> Node:
        o = self._order(str(self.args["id"]))
        if o is None:
            return _missing(self.pop, "This order no longer exists")
        return column(
            _bar("Payment", on_back=self.pop),
            _card(
                text(o.item, size=16, max_lines=2),
                _fact("Amount due", o.price),
                text(f"Pay with Visa {self.os.world.shop.saved_card}", size=16),
            ),
            column(
                button(f"Pay {o.price}", partial(self._pay, o), color=BRAND, rid="confirm_pay"),
                pad=(16, 12, 16, 0),
            ),
            style=Style(bg=PAGE),
        )

    def screen_cancel(self) -> Node:
        o = self._order(str(self.args["id"]))
        if o is None:
            return _missing(self.pop, "This order no longer exists")
        return column(
            _bar("Cancel order", on_back=self.pop),
            text(f"Cancel the order for {o.item}?", size=22, weight=600, pad=(24, 24, 24, 8)),
            text(
                "Any payment is refunded to the original payment method.",
                size=16,
                fg=MUTED,
                pad=(24, 0, 24, 24),
            ),
            column(
                button(
                    "Confirm cancellation",
                    partial(self._cancel, o),
                    color=STATUS_COLORS["Cancelled"],
                    rid="confirm_cancel",
                ),
                button("Keep order", self.pop, filled=False, color=BRAND, rid="keep_order"),
                pad=(24, 0, 24, 0),
                gap=12,
            ),
            style=Style(bg=PAGE),
        )

    def screen_address(self) -> Node:
        order_id = str(self.args.get("order", ""))
        o = self._order(order_id)
        current = (o.address if o else "") or self._default_address()
        field = text_field(
            self.address_draft,
            self._set_address,
            hint="New address: street, city, postcode",
            field_name="shipping_address",
            rid="shipping_address",
            sensitive=True,
            multiline=True,
        )
        field.margin = (16, 8, 16, 8)
        scope = f"order {order_id}" if order_id else "your new orders"
        return column(
            _bar("Shipping address", on_back=self.pop),
            _card(
                text("Current address", size=14, fg=MUTED),
                text(current, size=16, rid="current_address"),
            ),
            text(f"Where should we deliver {scope}?", size=15, fg=MUTED, pad=(16, 8, 16, 0)),
            field,
            row(
                spacer(0),
                button(
                    "Save",
                    partial(self._save_address, order_id),
                    color=BRAND,
                    rid="save_address",
                    width=110,
                    enabled=bool(self.address_draft.strip()),
                ),
                pad=(16, 0, 16, 0),
            ),
            style=Style(bg=PAGE),
        )

    def screen_inbox(self) -> Node:
        latest: dict[str, SellerMessage] = {}
        for m in self.os.world.shop.messages:
            latest[m.seller] = m
        rows = [
            list_row(
                seller,
                m.body,
                leading=image(seller[:1].upper(), size=44, color=(255, 163, 128)),
                trailing=m.time[5:10],
                rid="conversation",
                on_click=partial(self._open_chat, seller),
            )
            for seller, m in sorted(latest.items(), key=lambda kv: kv[1].time, reverse=True)
        ]
        if not rows:
            rows.append(text("No messages yet", fg=MUTED, align="center", pad=(0, 40, 0, 0)))
        return column(
            _bar("Messages"),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="conversations"),
            self._tabs("inbox"),
            style=Style(bg=WHITE),
        )

    def screen_chat(self) -> Node:
        seller = str(self.args["seller"])
        thread = [m for m in self.os.world.shop.messages if m.seller == seller]
        bubbles = [self._bubble(m) for m in thread]
        if not bubbles:
            bubbles.append(
                text(f"Ask {seller} a question", fg=MUTED, align="center", pad=(0, 40, 0, 0))
            )
        draft = self.drafts.get(seller, "")
        return column(
            _bar(seller, on_back=self.pop),
            scroll(*bubbles, offset=self.offset(), on_scroll=self.set_offset, rid="chat"),
            row(
                text_field(
                    draft,
                    partial(self._set_draft, seller),
                    hint="Type a message",
                    field_name="message",
                    rid="chat_input",
                    multiline=True,
                ),
                icon_button(
                    "send",
                    "Send",
                    partial(self._send, seller) if draft.strip() else None,
                    rid="send",
                ),
                pad=(12, 8, 12, 12),
                gap=8,
            ),
            style=Style(bg=WHITE),
        )

    def screen_wishlist(self) -> Node:
        shop = self.os.world.shop
        items = self._wishlist()
        sort_label = dict(WISHLIST_SORTS).get(shop.wishlist_sort, WISHLIST_SORTS[0][1])
        kids: list[Node] = [
            row(
                text(_count(len(items), "item"), size=15, fg=MUTED, pad=(0, 12, 0, 0), rid="count"),
                button(
                    f"Sort by: {sort_label}",
                    self._toggle_sort,
                    filled=False,
                    color=INK,
                    rid="sort",
                    desc="Sort",
                    width=230,
                ),
                pad=(16, 8, 16, 4),
                gap=8,
            )
        ]
        if self.sort_open:  # the sort control's drop-down menu
            kids.append(
                _card(
                    *(
                        radio_row(label, key == shop.wishlist_sort, partial(self._sort, key))
                        for key, label in WISHLIST_SORTS
                    ),
                    rid="sort_menu",
                )
            )
        kids += [self._product_card(p, trailing=self._heart(p)) for p in items]
        if not items:
            kids.append(
                text(
                    "Tap the heart on an item to save it here",
                    fg=MUTED,
                    align="center",
                    pad=(0, 40, 0, 0),
                )
            )
        return column(
            _bar("Wishlist", on_back=self.pop),
            scroll(*kids, spacer(8), offset=self.offset(), on_scroll=self.set_offset, rid="list"),
            style=Style(bg=PAGE),
        )

    def screen_cart(self) -> Node:
        lines = self._cart_lines()
        count = sum(quantity for _, quantity in lines)
        cards = [self._cart_card(p, quantity) for p, quantity in lines]
        kids: list[Node] = [
            _bar(
                f"Cart ({count})" if count else "Cart",
                on_back=self.pop if len(self.screens) > 1 else None,
            ),
            scroll(
                *cards or [text("Your cart is empty", fg=MUTED, align="center", pad=(0, 40, 0, 0))],
                spacer(8),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="cart",
            ),
        ]
        if lines:
            kids.append(
                row(
                    text(_total(lines), size=20, weight=700, fg=BRAND, pad=(0, 10, 0, 0)),
                    button(
                        f"Checkout ({count})",
                        partial(self.push, "checkout", cart=True),
                        color=BRAND,
                        rid="checkout",
                    ),
                    pad=(16, 8, 16, 8),
                    gap=10,
                    style=Style(bg=WHITE),
                )
            )
        kids.append(self._tabs("cart"))
        return column(*kids, style=Style(bg=PAGE))

    def screen_account(self) -> Node:
        world = self.os.world
        shop = world.shop
        return column(
            _bar("Account"),
            scroll(
                _card(
                    text(world.owner.name, size=20, weight=700),
                    text(world.owner.email, size=14, fg=MUTED),
                ),
                _card(
                    list_row(
                        "My orders",
                        f"{len(shop.orders)} orders",
                        rid="my_orders",
                        on_click=partial(self.push, "orders"),
                    ),
                    list_row(
                        "Wishlist",
                        _count(len(self._wishlist()), "item"),
                        rid="wishlist",
                        on_click=partial(self.push, "wishlist"),
                    ),
                    list_row(
                        "Shipping address",
                        self._default_address(),
                        rid="address_book",
                        on_click=partial(self._edit_address, ""),
                    ),
                ),
                _card(
                    text("Payment method", size=14, fg=MUTED),
                    text(f"Visa {shop.saved_card}", size=16),
                ),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="account",
            ),
            self._tabs("account"),
            style=Style(bg=PAGE),
        )

    # ----- pieces -----------------------------------------------------------------------

    def _tabs(self, current: str) -> Node:
        return bottom_tabs(
            TABS, current, self.switch_to, accent=BRAND, bg=WHITE, rid="navigation_bar"
        )

    def _product_card(self, p: Product, trailing: Node | None = None) -> Node:
        kids = [
            image("A", size=64, color=(255, 214, 196)),
            column(
                text(p.title, size=16, max_lines=2, rid="product_title"),
                text(p.price, size=18, weight=700, fg=BRAND, rid="product_price"),
                text(f"Rating {p.rating:.1f} · {p.sold:,} sold", size=13, fg=MUTED),
                gap=2,
            ),
        ]
        if trailing is not None:
            kids.append(trailing)
        return _card(
            row(*kids, gap=12),
            on_click=partial(self.push, "product", id=p.id),
            rid="product_card",
        )

    def _heart(self, p: Product) -> Node:
        """The wishlist heart: outlined until the item is saved, then filled in the brand red."""
        saved = p.id in self.os.world.shop.wishlist
        heart = icon_button(
            "heart" if saved else "heart_outline",
            "Remove from wishlist" if saved else "Add to wishlist",
            partial(self._toggle_wishlist, p),
            rid="wishlist_button",
        )
        heart.checkable, heart.checked = True, saved
        heart.style = Style(
            icon=heart.style.icon, fg=BRAND if saved else INK, size=22, align="center", radius=24
        )
        return heart

    def _cart_card(self, p: Product, quantity: int) -> Node:
        less = icon_button(
            "-",
            "Decrease quantity",
            partial(self._set_quantity, p, quantity - 1) if quantity > 1 else None,
            rid="decrease",
        )
        less.enabled = quantity > 1  # one is the least an item can be bought in
        more = icon_button("+", "Increase quantity", partial(self._set_quantity, p, quantity + 1))
        more.rid = "increase"
        return _card(
            text(p.seller, size=14, fg=MUTED),
            row(
                image("A", size=64, color=(255, 214, 196)),
                column(
                    text(p.title, size=16, max_lines=2, rid="cart_item_title"),
                    text(p.price, size=18, weight=700, fg=BRAND, rid="cart_item_price"),
                    gap=2,
                ),
                gap=12,
            ),
            row(
                button(
                    "Remove",
                    partial(self._remove_from_cart, p),
                    filled=False,
                    color=MUTED,
                    rid="remove",
                    width=110,
                ),
                spacer(0),
                less,
                text(str(quantity), size=17, align="center", pad=(0, 12, 0, 0), rid="quantity"),
                more,
                gap=4,
            ),
            on_click=partial(self.push, "product", id=p.id),
            rid="cart_item",
        )

    def _bubble(self, m: SellerMessage) -> Node:
        kids: list[Node] = [
            text(m.body, size=16, fg=INK if m.incoming else WHITE, rid="message_text")
        ]
        if m.incoming:
            for link in find_links(m.body):
                kids.append(
                    text(
                        link,
                        size=15,
                        fg=LINK,
                        rid="message_link",
                        on_click=partial(self._follow, link),
                    )
                )
        kids.append(text(m.time[11:16], size=11, fg=MUTED if m.incoming else (255, 225, 215)))
        bubble = column(
            *kids,
            cls="android.view.ViewGroup",
            rid="message_content",
            pad=(14, 10, 14, 10),
            gap=4,
            style=Style(bg=CARD if m.incoming else BRAND, radius=18),
        )
        bubble.margin = (12, 4, 80, 4) if m.incoming else (80, 4, 12, 4)
        return bubble

    # ----- handlers ---------------------------------------------------------------------

    def _set_query(self, value: str) -> None:
        self.query = value

    def _checkout(self, p: Product) -> None:
        self.push("checkout", id=p.id)

    def _place(self, lines: list[tuple[Product, int]]) -> None:
        shop = self.os.world.shop
        placed: list[Order] = []
        for p, quantity in lines:
            order = Order(
                id=self._new_order_id(),
                item=p.title,
                seller=p.seller,
                price=p.price,
                quantity=quantity,
                status="Processing",
                address=self._default_address(),
                placed=self.os.now(),
            )
            shop.orders.append(order)
            placed.append(order)
            self._log_paid(order)
        if self.args.get("cart"):  # what was bought leaves the cart
            bought = {p.id for p, _ in lines}
            shop.cart = [i for i in shop.cart if i.product not in bought]
        self.os.clear_focus()
        self.screens = [("orders", {})]
        if len(placed) == 1:
            self.screens.append(("order", {"id": placed[0].id}))

    def _toggle_wishlist(self, p: Product) -> None:
        wishlist = self.os.world.shop.wishlist
        if p.id in wishlist:
            wishlist.remove(p.id)
            self.os.log("wishlist_removed", product=p.id, title=p.title)
        else:
            wishlist.append(p.id)
            self.os.log("wishlist_added", product=p.id, title=p.title, price=p.price)

    def _toggle_sort(self) -> None:
        self.sort_open = not self.sort_open

    def _sort(self, key: str) -> None:
        self.sort_open = False
        self.os.world.shop.wishlist_sort = key
        self.os.log("wishlist_sorted", order=key)

    def _add_to_cart(self, p: Product) -> None:
        cart = self.os.world.shop.cart
        item = next((i for i in cart if i.product == p.id), None)
        if item is None:
            item = CartItem(product=p.id, quantity=0)
            cart.append(item)
        item.quantity += 1
        self.os.log("cart_added", product=p.id, title=p.title, price=p.price, quantity=1)

    def _set_quantity(self, p: Product, quantity: int) -> None:
        for item in self.os.world.shop.cart:
            if item.product == p.id:
                item.quantity = max(1, quantity)

    def _remove_from_cart(self, p: Product) -> None:
        shop = self.os.world.shop
        shop.cart = [i for i in shop.cart if i.product != p.id]
        self.os.log("cart_removed", product=p.id, title=p.title)

    def _pay(self, o: Order) -> None:
        o.status = "Processing"
        self._log_paid(o)
        self.pop()

    def _log_paid(self, o: Order) -> None:
        self.os.log(
            "order_paid",
            order=o.id,
            item=o.item,
            seller=o.seller,
            price=o.price,
            card=self.os.world.shop.saved_card,
            address=o.address,
        )

    def _cancel(self, o: Order) -> None:
        o.status = "Cancelled"
        self.os.log("order_cancelled", order=o.id, item=o.item, seller=o.seller)
        self.pop()

    def _edit_address(self, order_id: str) -> None:
        # The field starts empty under the current address, so typing replaces rather than appends.
        self.address_draft = ""
        self.push("address", order=order_id)

    def _set_address(self, value: str) -> None:
        self.address_draft = value

    def _save_address(self, order_id: str) -> None:
        address = self.address_draft.strip()
        o = self._order(order_id)
        if o is not None:
            o.address = address
        else:
            self.os.world.shop.shipping_address = address
        self.os.log("address_changed", order=order_id, address=address)
        self.address_draft = ""
        self.pop()

    def _open_chat(self, seller: str) -> None:
        self.push("chat", seller=seller)

    def _set_draft(self, seller: str, value: str) -> None:
        self.drafts[seller] = value

    def _send(self, seller: str) -> None:
        body = self.drafts.pop(seller, "").strip()
        if not body:
            return
        messages = self.os.world.shop.messages
        messages.append(
            SellerMessage(
                id=f"m{len(messages) + 1}",
                seller=seller,
                body=body,
                time=self.os.now(),
                incoming=False,
            )
        )
        self.os.log("seller_message_sent", seller=seller, body=body)

    def _follow(self, url: str) -> None:
        self.os.log("link_opened", url=url, source="aliexpress")
        self.os.open_url(url)

    # ----- helpers ----------------------------------------------------------------------

    def _default_address(self) -> str:
        world = self.os.world
        return world.shop.shipping_address or world.owner.address

    def _product(self, product_id: str) -> Product | None:
        return next((p for p in self.os.world.shop.products if p.id == product_id), None)

    def _wishlist(self) -> list[Product]:
        """The saved products in the chosen order (most recent first by default)."""
        shop = self.os.world.shop
        saved = [p for p in (self._product(i) for i in reversed(shop.wishlist)) if p is not None]
        if shop.wishlist_sort in ("price_asc", "price_desc"):
            saved.sort(key=lambda p: _amount(p.price), reverse=shop.wishlist_sort == "price_desc")
        return saved

    def _cart_lines(self) -> list[tuple[Product, int]]:
        lines = [(self._product(i.product), i.quantity) for i in self.os.world.shop.cart]
        return [(p, quantity) for p, quantity in lines if p is not None]

    def _checkout_lines(self) -> list[tuple[Product, int]]:
        """What the checkout buys: the cart, or the one product of a Buy now."""
        if self.args.get("cart"):
            return self._cart_lines()
        p = self._product(str(self.args.get("id", "")))
        return [(p, 1)] if p is not None else []

    def _order(self, order_id: str) -> Order | None:
        return next((o for o in self.os.world.shop.orders if o.id == order_id), None)

    def _new_order_id(self) -> str:
        # AliExpress order numbers are long digit strings; count up from a fixed base.
        taken = {o.id for o in self.os.world.shop.orders}
        n = 8_190_000_000_000 + len(taken)
        while str(n) in taken:
            n += 1
        return str(n)


def _bar(title: str, *, on_back: Handler | None = None, actions: list[Node] | None = None) -> Node:
    return top_bar(title, on_back=on_back, bg=WHITE, actions=actions)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _amount(price: str) -> float:
    """The number in a price as the shop writes it ("US $23.99", "$1,299.00")."""
    found = re.search(r"\d[\d,]*(?:\.\d+)?", price)
    return float(found.group().replace(",", "")) if found else 0.0


def _total(lines: list[tuple[Product, int]]) -> str:
    """What the lines cost together, written with the first price's currency."""
    if not lines:
        return ""
    first = lines[0][0].price
    found = re.search(r"\d", first)
    currency = first[: found.start()] if found else ""
    return f"{currency}{sum(_amount(p.price) * q for p, q in lines):,.2f}"


def _card(*children: Node, on_click: Handler | None = None, rid: str = "") -> Node:
    return card(*children, on_click=on_click, rid=rid, bg=WHITE)


def _fact(label: str, value: str) -> Node:
    return row(
        text(label, size=15, fg=MUTED),
        text(value, size=15, weight=500, align="right"),
        gap=12,
    )


def _status(status: str) -> Node:
    return text(status, size=14, weight=600, fg=STATUS_COLORS.get(status, MUTED), rid="status")


def _left(node: Node) -> Node:
    return row(node, spacer(0))


def _missing(on_back: Handler, message: str) -> Node:
    return column(
        _bar("AliExpress", on_back=on_back),
        text(message, fg=MUTED, align="center", pad=(0, 40, 0, 0)),
        style=Style(bg=PAGE),
    )
