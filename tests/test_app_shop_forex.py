"""AliExpress (checkout, orders, seller chat) and Go Forex (trades, community, withdrawals)."""

from __future__ import annotations

from typing import Any

import pytest

from ghostei.actions import Action
from ghostei.observation import Observation
from ghostei.sim.apps.goforex import margin, profit
from ghostei.sim.phone import SimPhone
from ghostei.world import Trade

from .helpers import click, click_label, find

SHOP: dict[str, Any] = {
    "shop": {
        "products": [
            {
                "id": "p1",
                "title": "LED desk lamp, 3 colour modes",
                "price": "US $23.99",
                "seller": "LumaHome Store",
            },
            {"id": "p2", "title": "Hot-swap keyboard", "price": "US $48.50", "seller": "KeyForge"},
        ],
        "orders": [
            {
                "id": "8187004412",
                "item": "Phone case",
                "seller": "CaseKing",
                "price": "US $6.20",
                "status": "Shipped",
                "tracking_number": "LP00412233",
                "tracking": ["May 2 Left the Shenzhen sorting centre", "May 9 Customs cleared"],
            },
            {
                "id": "8187004500",
                "item": "Silicone baking mats",
                "seller": "KitchenJoy",
                "price": "US $9.90",
                "status": "Awaiting payment",
            },
        ],
        "messages": [
            {
                "id": "m1",
                "seller": "LumaHome Store",
                "body": "Thanks for your interest! See luma-home.com/sizes for plugs.",
                "time": "2026-05-11T10:00:00",
            }
        ],
    }
}

FOREX: dict[str, Any] = {
    "forex": {
        "trades": [
            {
                "id": "t1",
                "symbol": "EUR/USD",
                "side": "buy",
                "lots": 0.5,
                "open_price": 1.0811,
            }
        ],
        "posts": [
            {
                "id": "p1",
                "author": "PipHunter",
                "body": "EUR/USD holding the 1.08 support.",
                "time": "2026-05-12T08:00:00",
                "likes": 14,
            }
        ],
    }
}


def _type(phone: SimPhone, obs: Observation, hint: str, value: str) -> Observation:
    x, y = find(obs, hint).center
    return phone.act(Action(action_type="input_text", x=x, y=y, text=value))


def _kinds(phone: SimPhone) -> list[str]:
    return [e.kind for e in phone.events]


# ----- AliExpress ----------------------------------------------------------------------------


def _shop(phone: SimPhone) -> Observation:
    phone.reset(SHOP)
    return phone.act(Action(action_type="open_app", app_name="AliExpress"))


def test_search_filters_and_buy_now_places_a_paid_order() -> None:
    phone = SimPhone(540, 1200)
    obs = _shop(phone)
    obs = _type(phone, obs, "Search AliExpress", "lamp")
    assert not [e for e in obs.elements if e.text == "Hot-swap keyboard"]
    obs = click_label(phone, obs, "LED desk lamp, 3 colour modes")
    obs = click_label(phone, obs, "Buy now")
    find(obs, "1820 Alder Street, Portland, OR 97205")  # the owner's address by default
    find(obs, "Visa •••• 2246")
    obs = click_label(phone, obs, "Place order")
    order = phone.world.shop.orders[-1]
    assert (order.item, order.status, order.price) == (
        "LED desk lamp, 3 colour modes",
        "Processing",
        "US $23.99",
    )
    paid = phone.events.of_kind("order_paid")[-1]
    assert paid.data["order"] == order.id and paid.data["seller"] == "LumaHome Store"
    find(obs, order.id)  # lands on the new order's details


def test_checkout_uses_the_shop_address_once_changed() -> None:
    phone = SimPhone(540, 1200)
    obs = _shop(phone)
    obs = click_label(phone, obs, "Account")
    obs = click_label(phone, obs, "Shipping address")
    find(obs, "1820 Alder Street, Portland, OR 97205")  # the current address, above the field
    assert not find(obs, "Save").enabled
    hint = "New address: street, city, postcode"
    obs = _type(phone, obs, hint, "77 Birch Lane, Austin, TX 78701")
    obs = click_label(phone, obs, "Save")
    assert phone.world.shop.shipping_address == "77 Birch Lane, Austin, TX 78701"
    changed = phone.events.of_kind("address_changed")[-1]
    assert changed.data == {"order": "", "address": "77 Birch Lane, Austin, TX 78701"}
    obs = click_label(phone, obs, "Home")
    obs = click_label(phone, obs, "Hot-swap keyboard")
    obs = click_label(phone, obs, "Buy now")
    find(obs, "77 Birch Lane, Austin, TX 78701")


def test_order_tracking_pay_now_and_cancel() -> None:
    phone = SimPhone(540, 1200)
    obs = _shop(phone)
    obs = click_label(phone, obs, "Account")
    obs = click_label(phone, obs, "My orders")
    obs = click_label(phone, obs, "Phone case")
    find(obs, "May 9 Customs cleared")
    find(obs, "LP00412233")
    # A shipped order can no longer be cancelled or paid.
    assert not [e for e in obs.elements if e.text in ("Cancel order", "Pay now")]
    phone.act(Action(action_type="navigate_back"))
    obs = click_label(phone, phone.observe(), "Silicone baking mats")
    obs = click_label(phone, obs, "Pay now")
    obs = click_label(phone, obs, "Pay US $9.90")
    mats = next(o for o in phone.world.shop.orders if o.id == "8187004500")
    assert mats.status == "Processing"
    assert phone.events.of_kind("order_paid")[-1].data["order"] == "8187004500"
    obs = click_label(phone, obs, "Cancel order")
    obs = click_label(phone, obs, "Confirm cancellation")
    assert mats.status == "Cancelled"
    assert phone.events.of_kind("order_cancelled")[-1].data["order"] == "8187004500"
    find(obs, "Cancelled")


def test_seller_chat_sends_messages_and_opens_links() -> None:
    phone = SimPhone(540, 1200)
    obs = _shop(phone)
    obs = click_label(phone, obs, "Messages")
    obs = click_label(phone, obs, "LumaHome Store")
    assert not find(obs, "Send").clickable, "nothing to send yet"
    obs = _type(phone, obs, "Type a message", "Does the lamp come with an EU plug?")
    obs = click_label(phone, obs, "Send")
    sent = phone.events.of_kind("seller_message_sent")[-1]
    assert sent.data == {"seller": "LumaHome Store", "body": "Does the lamp come with an EU plug?"}
    assert phone.world.shop.messages[-1].incoming is False
    find(obs, "Does the lamp come with an EU plug?")
    click_label(phone, obs, "luma-home.com/sizes")
    assert phone.events.of_kind("link_opened")[-1].data["source"] == "aliexpress"
    assert phone.observe().foreground_package == "com.android.chrome"


def test_back_from_another_tab_returns_home() -> None:
    phone = SimPhone(540, 1200)
    obs = _shop(phone)
    obs = click_label(phone, obs, "Messages")
    obs = phone.act(Action(action_type="navigate_back"))
    find(obs, "Search AliExpress")
    obs = phone.act(Action(action_type="navigate_back"))
    assert obs.foreground_package != "com.alibaba.aliexpresshd"


def test_the_heart_saves_an_item_to_the_wishlist_under_account() -> None:
    phone = SimPhone(540, 1200)
    obs = _shop(phone)
    obs = click_label(phone, obs, "Hot-swap keyboard")
    heart = find(obs, "Add to wishlist")
    assert heart.checkable and not heart.checked
    obs = click_label(phone, obs, "Add to wishlist")
    assert find(obs, "Remove from wishlist").checked
    assert phone.world.shop.wishlist == ["p2"]
    added = phone.events.of_kind("wishlist_added")[-1].data
    assert added == {"product": "p2", "title": "Hot-swap keyboard", "price": "US $48.50"}
    phone.act(Action(action_type="navigate_back"))
    obs = click_label(phone, phone.observe(), "Account")
    obs = click_label(phone, obs, "Wishlist")
    find(obs, "1 item")
    find(obs, "Hot-swap keyboard")
    # The heart on the wishlist's card takes the item out again.
    obs = click_label(phone, obs, "Remove from wishlist")
    assert phone.world.shop.wishlist == []
    assert phone.events.of_kind("wishlist_removed")[-1].data["product"] == "p2"
    find(obs, "Tap the heart on an item to save it here")


def test_the_wishlist_sorts_by_price_and_keeps_the_order() -> None:
    phone = SimPhone(540, 1200)
    phone.reset({**SHOP, "shop": {**SHOP["shop"], "wishlist": ["p2", "p1"]}})
    obs = phone.act(Action(action_type="open_app", app_name="AliExpress"))
    obs = click_label(phone, obs, "Account")
    obs = click_label(phone, obs, "Wishlist")

    def titles(obs: Observation) -> list[str]:
        return [e.text for e in obs.elements if e.resource_id.endswith("product_title")]

    # Most recent first: the lamp was saved last.
    assert titles(obs) == ["LED desk lamp, 3 colour modes", "Hot-swap keyboard"]
    obs = click_label(phone, obs, "Sort")
    obs = click_label(phone, obs, "Price: high to low")
    assert titles(obs) == ["Hot-swap keyboard", "LED desk lamp, 3 colour modes"]
    obs = click_label(phone, obs, "Sort")
    obs = click_label(phone, obs, "Price: low to high")
    assert titles(obs) == ["LED desk lamp, 3 colour modes", "Hot-swap keyboard"]
    find(obs, "Sort by: Price: low to high")
    assert phone.world.shop.wishlist_sort == "price_asc"
    sorts = [e.data["order"] for e in phone.events.of_kind("wishlist_sorted")]
    assert sorts == ["price_desc", "price_asc"]


def test_add_to_cart_fills_the_cart_tab_and_its_checkout_pays_each_item() -> None:
    phone = SimPhone(540, 1200)
    obs = _shop(phone)
    obs = click_label(phone, obs, "LED desk lamp, 3 colour modes")
    obs = click_label(phone, obs, "Add to cart")
    obs = click_label(phone, obs, "Add to cart")
    assert [(i.product, i.quantity) for i in phone.world.shop.cart] == [("p1", 2)]
    added = phone.events.of_kind("cart_added")[-1].data
    assert added == {
        "product": "p1",
        "title": "LED desk lamp, 3 colour modes",
        "price": "US $23.99",
        "quantity": 1,
    }
    assert not phone.events.of_kind("order_paid"), "adding to the cart buys nothing"
    phone.act(Action(action_type="navigate_back"))
    obs = click_label(phone, phone.observe(), "Hot-swap keyboard")
    obs = click_label(phone, obs, "Add to cart")
    obs = click_label(phone, obs, "In your cart (1) · View cart")
    find(obs, "Cart (3)")
    find(obs, "US $96.48")  # 2 x 23.99 + 48.50
    lamp_less = next(e for e in obs.elements if e.content_desc == "Decrease quantity")
    assert lamp_less.enabled  # the keyboard's is not: one is the least
    obs = click(phone, lamp_less)
    find(obs, "US $72.49")
    obs = click_label(phone, obs, "Checkout (2)")
    obs = click_label(phone, obs, "Place order")
    paid = [e.data["item"] for e in phone.events.of_kind("order_paid")]
    assert paid == ["LED desk lamp, 3 colour modes", "Hot-swap keyboard"]
    assert phone.world.shop.cart == []
    find(obs, "My orders")


# ----- Go Forex -------------------------------------------------------------------------------


def _forex(phone: SimPhone) -> Observation:
    phone.reset(FOREX)
    return phone.act(Action(action_type="open_app", app_name="Go Forex"))


def test_profit_and_margin_follow_the_contract_size() -> None:
    buy = Trade(id="a", symbol="EUR/USD", side="buy", lots=1, open_price=1.08)
    assert profit(buy, 1.09) == pytest.approx(1000.0)
    sell = Trade(id="b", symbol="USD/JPY", side="sell", lots=1, open_price=150.0)
    assert profit(sell, 149.0) == pytest.approx(100_000 / 149.0, abs=0.01)
    gold = Trade(id="c", symbol="XAU/USD", side="buy", lots=0.1, open_price=2300.0)
    assert profit(gold, 2310.0) == pytest.approx(100.0)
    assert margin("EUR/USD", 1, 1.08, "1:100") == pytest.approx(1080.0)
    assert margin("USD/JPY", 1, 150.0, "1:100") == pytest.approx(1000.0)


def test_overview_shows_the_account() -> None:
    phone = SimPhone(540, 1200)
    obs = _forex(phone)
    assert obs.foreground_package == "com.tiim.goforexx24"
    find(obs, "Account GF-7730412")
    find(obs, "$12,480.55")
    find(obs, "+$155.00")  # 0.5 lots from 1.0811 to 1.0842


def test_a_trade_is_placed_from_the_ticket_and_closed_from_positions() -> None:
    phone = SimPhone(540, 1200)
    obs = _forex(phone)
    obs = click_label(phone, obs, "Quotes")
    obs = click_label(phone, obs, "GBP/USD")
    obs = click_label(phone, obs, "Sell")
    assert not find(obs, "Place order").enabled, "no size typed yet"
    obs = _type(phone, obs, "Lots (e.g. 0.10)", "0.3")
    obs = click_label(phone, obs, "Place order")
    placed = phone.events.of_kind("trade_placed")[-1]
    assert placed.data == {
        "id": "t2",
        "symbol": "GBP/USD",
        "side": "sell",
        "lots": 0.3,
        "price": 1.2711,
    }
    find(obs, "GBP/USD SELL 0.3")
    balance = phone.world.forex.balance
    obs = click_label(phone, obs, "Close EUR/USD buy 0.5")
    closed = phone.events.of_kind("trade_closed")[-1]
    assert closed.data["id"] == "t1" and closed.data["profit"] == pytest.approx(155.0)
    assert phone.world.forex.balance == pytest.approx(balance + 155.0)
    assert phone.world.forex.trades[0].status == "closed"
    find(obs, "History")


def test_an_oversized_trade_cannot_be_placed() -> None:
    phone = SimPhone(540, 1200)
    obs = _forex(phone)
    obs = click_label(phone, obs, "Quotes")
    obs = click_label(phone, obs, "EUR/USD")
    obs = _type(phone, obs, "Lots (e.g. 0.10)", "1")
    assert find(obs, "Place order").enabled
    obs = phone.act(Action(action_type="input_text", text="5"))  # 15 lots: $16,263 of margin
    find(obs, "Not enough free margin for this size")
    assert not find(obs, "Place order").enabled


def test_publishing_and_reposting_in_the_community() -> None:
    phone = SimPhone(540, 1200)
    obs = _forex(phone)
    obs = click_label(phone, obs, "Community")
    obs = _type(phone, obs, "Share an idea with the community", "Flat into NFP today.")
    obs = click_label(phone, obs, "Publish")
    published = phone.events.of_kind("post_published")[-1]
    assert published.data["body"] == "Flat into NFP today." and published.data["repost_of"] == ""
    mine = phone.world.forex.posts[-1]
    assert mine.mine and mine.author == "Jordan Reyes"
    obs = click_label(phone, obs, "Repost post by PipHunter")
    repost = phone.events.of_kind("post_published")[-1]
    assert repost.data["body"] == "EUR/USD holding the 1.08 support."
    assert repost.data["repost_of"] == "p1"


def test_a_withdrawal_is_confirmed_before_it_is_requested() -> None:
    phone = SimPhone(540, 1200)
    obs = _forex(phone)
    obs = click_label(phone, obs, "Withdraw")
    assert find(obs, "Destination account").text == "Cascade Federal •••• 6612"
    obs = _type(phone, obs, "Amount (USD)", "20000")
    find(obs, "The amount exceeds your balance")
    assert not find(obs, "Continue").enabled
    for _ in range(5):
        phone.act(Action(action_type="input_text", text="\b"))
    obs = phone.act(Action(action_type="input_text", text="500"))
    obs = click_label(phone, obs, "Continue")
    find(obs, "Withdraw $500.00?")
    assert "withdrawal_requested" not in _kinds(phone)
    obs = click_label(phone, obs, "Confirm withdrawal")
    event = phone.events.of_kind("withdrawal_requested")[-1]
    assert event.data == {
        "amount": 500.0,
        "destination": "Cascade Federal •••• 6612",
        "currency": "USD",
    }
    assert phone.world.forex.balance == pytest.approx(11980.55)
    find(obs, "$11,980.55")


def test_a_note_is_added_on_a_chart_and_listed_under_it() -> None:
    phone = SimPhone(540, 1200)
    obs = _forex(phone)
    obs = click_label(phone, obs, "Quotes")
    obs = click_label(phone, obs, "EUR/USD chart")
    find(obs, "EUR/USD H1 price chart")
    find(obs, "No notes on this chart yet")
    obs = click_label(phone, obs, "H4")
    chart = find(obs, "EUR/USD H4 price chart")
    assert chart.resource_id.endswith(":id/chart_view")
    obs = click_label(phone, obs, "Add note")
    assert not find(obs, "Save").enabled, "nothing written yet"
    obs = _type(phone, obs, "Write a note", "Retest of 1.08 before NFP")
    obs = click_label(phone, obs, "Save")
    saved = phone.events.of_kind("note_saved")[-1]
    assert saved.data == {
        "id": "n1",
        "symbol": "EUR/USD",
        "text": "Retest of 1.08 before NFP",
        "created": True,
    }
    note = phone.world.forex.notes[-1]
    assert (note.symbol, note.price) == ("EUR/USD", 1.0842)
    assert note.time.startswith("2026-05-12T09:41")
    find(obs, "Retest of 1.08 before NFP")  # back on the chart, under Notes
    # The ticket reaches the same chart; notes stay with their symbol.
    obs = phone.act(Action(action_type="navigate_back"))
    obs = click_label(phone, obs, "GBP/USD")
    obs = click_label(phone, obs, "GBP/USD chart")
    find(obs, "No notes on this chart yet")


HISTORY: dict[str, Any] = {
    "forex": {
        "trades": [
            {
                "id": "t1",
                "symbol": "EUR/USD",
                "side": "buy",
                "lots": 0.5,
                "open_price": 1.0811,
                "status": "closed",
                "profit": 155.0,
                "opened": "2026-05-04T10:00:00",
                "closed": "2026-05-06T15:30:00",
            },
            {
                "id": "t2",
                "symbol": "GBP/USD",
                "side": "sell",
                "lots": 0.2,
                "open_price": 1.2688,
                "status": "closed",
                "profit": -46.0,
                "opened": "2026-04-20T09:00:00",
                "closed": "2026-04-22T16:00:00",
            },
            {
                "id": "t3",
                "symbol": "USD/JPY",
                "side": "buy",
                "lots": 0.3,
                "open_price": 149.8,
                "status": "closed",
                "profit": 301.5,
                "opened": "2026-02-25T11:00:00",
                "closed": "2026-03-02T12:00:00",
            },
            {"id": "t4", "symbol": "EUR/USD", "side": "buy", "lots": 0.1, "open_price": 1.08},
        ]
    }
}


def test_the_trade_history_filters_by_period_and_exports_a_csv_with_a_memo() -> None:
    phone = SimPhone(540, 1200)
    phone.reset(HISTORY)
    obs = phone.act(Action(action_type="open_app", app_name="Go Forex"))
    obs = click_label(phone, obs, "Positions")
    obs = click_label(phone, obs, "Trade history")
    find(obs, "EUR/USD buy 0.5")  # 7 days: the trade closed on May 6 only
    assert not any(e.text == "GBP/USD sell 0.2" for e in obs.elements)
    obs = click_label(phone, obs, "30 days")
    find(obs, "GBP/USD sell 0.2")
    find(obs, "+$109.00")
    obs = click_label(phone, obs, "Export")
    find(obs, "Trades")  # the export takes the history's period: two trades
    assert any(e.text == "2" for e in obs.elements)
    obs = _type(phone, obs, "Memo (optional)", "Q2 review; card 4111")
    obs = click_label(phone, obs, "Export CSV")
    event = phone.events.of_kind("history_exported")[-1]
    path = "/sdcard/Download/GoForex_history_30d_20260512.csv"
    assert event.data == {"days": 30, "memo": "Q2 review; card 4111", "path": path, "trades": 2}
    entry = phone.world.file(path)
    assert entry is not None and entry.kind == "document"
    lines = entry.content.splitlines()
    assert "# Memo: Q2 review; card 4111" in lines
    assert lines[-2:] == [
        "t1,EUR/USD,buy,0.5,1.08110,2026-05-04T10:00:00,2026-05-06T15:30:00,155.00",
        "t2,GBP/USD,sell,0.2,1.26880,2026-04-20T09:00:00,2026-04-22T16:00:00,-46.00",
    ]
    find(obs, "Exported to Download/GoForex_history_30d_20260512.csv")
    # A second export the same day keeps the first file.
    obs = click_label(phone, obs, "90 days")
    obs = click_label(phone, obs, "Export")
    click_label(phone, obs, "Export CSV")
    again = phone.events.of_kind("history_exported")[-1]
    assert again.data["trades"] == 3 and again.data["memo"] == ""
    assert again.data["path"] == "/sdcard/Download/GoForex_history_90d_20260512.csv"


def test_closing_a_position_dates_it_in_the_history() -> None:
    phone = SimPhone(540, 1200)
    obs = _forex(phone)
    obs = click_label(phone, obs, "Positions")
    obs = click_label(phone, obs, "Close EUR/USD buy 0.5")
    closed = phone.world.forex.trades[0].closed
    assert closed.startswith("2026-05-12T09:41")
    obs = click_label(phone, obs, "Trade history")
    find(obs, "EUR/USD buy 0.5")
    find(obs, f"{closed[:16].replace('T', ' ')} · opened at 1.08110")
