"""Go Forex: account overview, quotes, a trade ticket, positions, a community feed, withdrawals.

Prices do not move during an episode (the world is deterministic), so an open position's
profit is what the frozen quote gives; closing books that profit into the balance.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ...world import Forex, Post, Trade
from ..ui import (
    MUTED,
    Color,
    Handler,
    Node,
    Style,
    bottom_tabs,
    button,
    card,
    column,
    form_field,
    image,
    list_row,
    row,
    scroll,
    spacer,
    text,
    text_field,
    top_bar,
)
from .base import App, AppIcon, register_app

BRAND: Color = (13, 71, 161)
WHITE: Color = (255, 255, 255)
PAGE: Color = (244, 246, 250)
GAIN: Color = (0, 128, 9)
LOSS: Color = (179, 38, 30)
TABS: tuple[tuple[str, str], ...] = (
    ("main", "Account"),
    ("quotes", "Quotes"),
    ("positions", "Positions"),
    ("community", "Community"),
)
# Units per lot: a standard FX lot, 100 oz of gold, one coin.
CONTRACT_SIZE: dict[str, float] = {"XAU": 100.0, "XAG": 5000.0, "BTC": 1.0, "ETH": 1.0}
STANDARD_LOT = 100_000.0


def contract_size(symbol: str) -> float:
    """Units of the base asset in one lot of ``symbol``."""
    return CONTRACT_SIZE.get(symbol.split("/", 1)[0], STANDARD_LOT)


def profit(trade: Trade, price: float) -> float:
    """A position's profit in the account currency (USD) at ``price``."""
    move = (price - trade.open_price) * (1 if trade.side == "buy" else -1)
    in_quote = move * trade.lots * contract_size(trade.symbol)
    # A USD/XXX pair earns in XXX: convert at the current price.
    if trade.symbol.startswith("USD/") and price:
        return round(in_quote / price, 2)
    return round(in_quote, 2)


def margin(symbol: str, lots: float, price: float, leverage: str) -> float:
    """The margin a position needs, in USD, at the account's leverage ("1:100")."""
    ratio = float(leverage.split(":", 1)[-1] or 1)
    units = lots * contract_size(symbol)
    notional = units if symbol.startswith("USD/") else units * price
    return round(notional / max(ratio, 1.0), 2)


def parse_amount(value: str) -> float | None:
    """A typed amount like "$1,250.50", or None when it is not a number."""
    cleaned = value.replace("$", "").replace(",", "").replace("USD", "").strip()
    try:
        return float(cleaned)
    except ValueError:
        return None


@register_app
class GoForex(App):
    """The Go Forex trading app."""

    label = "Go Forex"
    icon = AppIcon("FX", BRAND)

    def __init__(self, os: Any) -> None:
        super().__init__(os)
        self.side: str = "buy"
        self.lots = ""
        self.post_draft = ""
        self.withdrawal: dict[str, str] = {}

    def back(self) -> bool:
        # Back from another tab's first screen returns to the account, as the bottom bar does.
        if len(self.screens) == 1 and self.screen != self.home_screen:
            self.switch_to(self.home_screen)
            return True
        return super().back()

    # ----- screens ----------------------------------------------------------------------

    def screen_main(self) -> Node:
        fx = self.os.world.forex
        open_pl = self._open_profit()
        positions = [t for t in fx.trades if t.status == "open"]
        return column(
            _bar("Go Forex"),
            scroll(
                _card(
                    text(f"Account {fx.account_id}", size=14, fg=MUTED, rid="account_id"),
                    text(_money(fx.balance, fx.currency), size=30, weight=700, rid="balance"),
                    text("Balance", size=13, fg=MUTED),
                    _fact("Equity", _money(fx.balance + open_pl, fx.currency)),
                    _fact("Open P/L", _signed(open_pl, fx.currency)),
                    _fact("Open positions", str(len(positions))),
                    _fact("Leverage", fx.leverage),
                    _fact("Withdrawal account", fx.withdrawal_account),
                    rid="account_card",
                ),
                row(
                    button("New trade", partial(self.switch_to, "quotes"), color=BRAND),
                    button("Withdraw", self._start_withdrawal, filled=False, color=BRAND),
                    pad=(16, 8, 16, 8),
                    gap=10,
                ),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="overview",
            ),
            self._tabs("main"),
            style=Style(bg=PAGE),
        )

    def screen_quotes(self) -> Node:
        quotes = self.os.world.forex.quotes
        rows = [
            list_row(
                symbol,
                "Tap to trade",
                trailing=_price(symbol, price),
                rid="quote_row",
                on_click=partial(self._open_ticket, symbol),
            )
            for symbol, price in quotes.items()
        ]
        return column(
            _bar("Quotes"),
            scroll(*rows, offset=self.offset(), on_scroll=self.set_offset, rid="quotes"),
            self._tabs("quotes"),
            style=Style(bg=WHITE),
        )

    def screen_ticket(self) -> Node:
        fx = self.os.world.forex
        symbol = str(self.args["symbol"])
        price = fx.quotes.get(symbol, 0.0)
        lots = parse_amount(self.lots)
        needed = margin(symbol, lots, price, fx.leverage) if lots and lots > 0 else 0.0
        free = self._free_margin()
        valid = lots is not None and 0 < lots <= 100 and price > 0
        affordable = valid and needed <= free
        sides = [
            self._side_button("Buy", "buy", GAIN),
            self._side_button("Sell", "sell", LOSS),
        ]
        lots_field = text_field(
            self.lots,
            self._set_lots,
            hint="Lots (e.g. 0.10)",
            field_name="lots",
            rid="lots_input",
            on_submit=self.os.clear_focus,
        )
        lots_field.margin = (16, 4, 16, 4)
        notes: list[Node] = [
            text(f"Required margin {_money(needed, fx.currency)}", size=14, fg=MUTED),
            text(f"Free margin {_money(free, fx.currency)}", size=14, fg=MUTED),
        ]
        if valid and not affordable:
            notes.append(text("Not enough free margin for this size", size=14, fg=LOSS))
        return column(
            _bar(f"Trade {symbol}", on_back=self.pop),
            _card(
                text(symbol, size=22, weight=700, rid="symbol"),
                text(f"Market price {_price(symbol, price)}", size=16, rid="market_price"),
            ),
            row(*sides, pad=(16, 4, 16, 4), gap=10),
            text("Volume (lots)", size=14, fg=MUTED, pad=(16, 8, 16, 0)),
            lots_field,
            column(*notes, pad=(16, 4, 16, 4), gap=2),
            column(
                button(
                    "Place order",
                    partial(self._place, symbol),
                    color=GAIN if self.side == "buy" else LOSS,
                    rid="place_order",
                    enabled=affordable,
                ),
                pad=(16, 12, 16, 0),
            ),
            style=Style(bg=PAGE),
        )

    def screen_positions(self) -> Node:
        fx = self.os.world.forex
        open_trades = [t for t in fx.trades if t.status == "open"]
        closed = [t for t in fx.trades if t.status == "closed"]
        kids: list[Node] = [text("Open positions", size=16, weight=700, pad=(16, 12, 16, 4))]
        kids += [self._position_card(t) for t in open_trades]
        if not open_trades:
            kids.append(text("No open positions", size=15, fg=MUTED, pad=(16, 4, 16, 4)))
        if closed:
            kids.append(text("History", size=16, weight=700, pad=(16, 16, 16, 4)))
            kids += [
                list_row(
                    f"{t.symbol} {t.side} {t.lots:g}",
                    f"Opened at {_price(t.symbol, t.open_price)}",
                    trailing=_signed(t.profit, fx.currency),
                    rid="closed_trade",
                )
                for t in reversed(closed)
            ]
        return column(
            _bar("Positions"),
            scroll(*kids, spacer(8), offset=self.offset(), on_scroll=self.set_offset, rid="list"),
            self._tabs("positions"),
            style=Style(bg=PAGE),
        )

    def screen_community(self) -> Node:
        posts = sorted(self.os.world.forex.posts, key=lambda p: p.time, reverse=True)
        composer = text_field(
            self.post_draft,
            self._set_post,
            hint="Share an idea with the community",
            field_name="post",
            rid="post_input",
            multiline=True,
        )
        kids: list[Node] = [
            _card(
                composer,
                row(
                    spacer(0),
                    button(
                        "Publish",
                        self._publish,
                        color=BRAND,
                        rid="publish",
                        width=120,
                        enabled=bool(self.post_draft.strip()),
                    ),
                ),
                rid="composer",
            )
        ]
        kids += [self._post_card(p) for p in posts]
        return column(
            _bar("Community"),
            scroll(*kids, spacer(8), offset=self.offset(), on_scroll=self.set_offset, rid="feed"),
            self._tabs("community"),
            style=Style(bg=PAGE),
        )

    def screen_withdraw(self) -> Node:
        fx = self.os.world.forex
        values = self.withdrawal
        amount = parse_amount(values.get("amount", ""))
        destination = values.get("destination", "").strip()
        ok = amount is not None and 0 < amount <= fx.balance and bool(destination)
        kids: list[Node] = [
            _card(
                text("Available to withdraw", size=14, fg=MUTED),
                text(_money(fx.balance, fx.currency), size=22, weight=700),
            ),
            form_field(f"Amount ({fx.currency})", values, "amount", sensitive=False),
            form_field("Destination account", values, "destination", sensitive=True),
        ]
        if amount is not None and amount > fx.balance:
            kids.append(
                text("The amount exceeds your balance", size=14, fg=LOSS, pad=(16, 0, 16, 0))
            )
        kids.append(
            column(
                button(
                    "Continue",
                    partial(self.push, "confirm_withdrawal"),
                    color=BRAND,
                    rid="continue",
                    enabled=ok,
                ),
                pad=(16, 12, 16, 0),
            )
        )
        return column(
            _bar("Withdraw funds", on_back=self.pop),
            scroll(*kids, offset=self.offset(), on_scroll=self.set_offset, rid="withdraw"),
            style=Style(bg=PAGE),
        )

    def screen_confirm_withdrawal(self) -> Node:
        fx = self.os.world.forex
        amount = parse_amount(self.withdrawal.get("amount", "")) or 0.0
        destination = self.withdrawal.get("destination", "").strip()
        return column(
            _bar("Confirm withdrawal", on_back=self.pop),
            text(
                f"Withdraw {_money(amount, fx.currency)}?", size=24, weight=600, pad=(24, 24, 24, 8)
            ),
            text(
                f"To {destination}. Funds usually arrive within 1–3 business days.",
                size=16,
                fg=MUTED,
                pad=(24, 0, 24, 24),
            ),
            column(
                button("Confirm withdrawal", self._withdraw, color=BRAND, rid="confirm"),
                button("Cancel", self.pop, filled=False, color=BRAND, rid="cancel"),
                pad=(24, 0, 24, 0),
                gap=12,
            ),
            style=Style(bg=PAGE),
        )

    # ----- pieces -----------------------------------------------------------------------

    def _tabs(self, current: str) -> Node:
        return bottom_tabs(
            TABS, current, self.switch_to, accent=BRAND, bg=WHITE, rid="bottom_navigation"
        )

    def _side_button(self, label: str, side: str, color: Color) -> Node:
        chosen = self.side == side
        node = button(
            label, partial(self._set_side, side), filled=chosen, color=color, rid=f"side_{side}"
        )
        node.selected = chosen
        return node

    def _position_card(self, t: Trade) -> Node:
        fx = self.os.world.forex
        price = fx.quotes.get(t.symbol, t.open_price)
        pl = profit(t, price)
        return _card(
            row(
                text(
                    f"{t.symbol} {t.side.upper()} {t.lots:g}", size=17, weight=700, rid="position"
                ),
                text(
                    _signed(pl, fx.currency),
                    size=16,
                    weight=600,
                    fg=GAIN if pl >= 0 else LOSS,
                    align="right",
                    rid="profit",
                ),
                gap=8,
            ),
            text(
                f"Open {_price(t.symbol, t.open_price)} · now {_price(t.symbol, price)}",
                size=14,
                fg=MUTED,
            ),
            row(
                spacer(0),
                button(
                    "Close",
                    partial(self._close, t),
                    filled=False,
                    color=LOSS,
                    rid="close_position",
                    desc=f"Close {t.symbol} {t.side} {t.lots:g}",
                    width=110,
                ),
            ),
            rid="position_card",
        )

    def _post_card(self, p: Post) -> Node:
        kids: list[Node] = [
            row(
                image(p.author[:1].upper(), size=36, color=(92, 107, 192)),
                column(
                    text(p.author, size=15, weight=700, rid="author"),
                    text(p.time[:16].replace("T", " "), size=12, fg=MUTED),
                    gap=0,
                ),
                gap=10,
            ),
            text(p.body, size=16, rid="post_body"),
        ]
        footer: list[Node] = [text(f"{p.likes} likes", size=13, fg=MUTED, pad=(0, 12, 0, 0))]
        if not p.mine:
            footer.append(
                button(
                    "Repost",
                    partial(self._repost, p),
                    filled=False,
                    color=BRAND,
                    rid="repost",
                    desc=f"Repost post by {p.author}",
                    width=110,
                )
            )
        kids.append(row(*footer, gap=8))
        return _card(*kids, rid="post")

    # ----- handlers ---------------------------------------------------------------------

    def _open_ticket(self, symbol: str) -> None:
        self.side, self.lots = "buy", ""
        self.push("ticket", symbol=symbol)

    def _set_side(self, side: str) -> None:
        self.side = side

    def _set_lots(self, value: str) -> None:
        self.lots = value

    def _place(self, symbol: str) -> None:
        fx = self.os.world.forex
        lots = parse_amount(self.lots) or 0.0
        price = fx.quotes[symbol]
        trade = Trade(
            id=_next_id("t", [t.id for t in fx.trades]),
            symbol=symbol,
            side="sell" if self.side == "sell" else "buy",
            lots=lots,
            open_price=price,
            opened=self.os.now(),
        )
        fx.trades.append(trade)
        self.os.log(
            "trade_placed", id=trade.id, symbol=symbol, side=trade.side, lots=lots, price=price
        )
        self.switch_to("positions")

    def _close(self, t: Trade) -> None:
        fx = self.os.world.forex
        t.profit = profit(t, fx.quotes.get(t.symbol, t.open_price))
        t.status = "closed"
        fx.balance = round(fx.balance + t.profit, 2)
        self.os.log(
            "trade_closed", id=t.id, symbol=t.symbol, side=t.side, lots=t.lots, profit=t.profit
        )

    def _set_post(self, value: str) -> None:
        self.post_draft = value

    def _publish(self) -> None:
        body = self.post_draft.strip()
        if body:
            self._add_post(body, repost_of="")
            self.post_draft = ""
            self.os.clear_focus()

    def _repost(self, p: Post) -> None:
        self._add_post(p.body, repost_of=p.id)

    def _add_post(self, body: str, *, repost_of: str) -> None:
        world = self.os.world
        posts = world.forex.posts
        post = Post(
            id=_next_id("p", [p.id for p in posts]),
            author=world.owner.name,
            body=body,
            time=self.os.now(),
            mine=True,
        )
        posts.append(post)
        self.os.log("post_published", id=post.id, body=body, repost_of=repost_of)

    def _start_withdrawal(self) -> None:
        fx = self.os.world.forex
        self.withdrawal = {"amount": "", "destination": fx.withdrawal_account}
        self.push("withdraw")

    def _withdraw(self) -> None:
        fx = self.os.world.forex
        amount = parse_amount(self.withdrawal.get("amount", "")) or 0.0
        destination = self.withdrawal.get("destination", "").strip()
        if not 0 < amount <= fx.balance:
            return
        fx.balance = round(fx.balance - amount, 2)
        self.os.log(
            "withdrawal_requested", amount=amount, destination=destination, currency=fx.currency
        )
        self.withdrawal = {}
        self.switch_to("main")

    # ----- helpers ----------------------------------------------------------------------

    def _open_profit(self) -> float:
        fx = self.os.world.forex
        return round(sum(profit(t, fx.quotes.get(t.symbol, t.open_price)) for t in _open(fx)), 2)

    def _free_margin(self) -> float:
        fx = self.os.world.forex
        used = sum(
            margin(t.symbol, t.lots, fx.quotes.get(t.symbol, t.open_price), fx.leverage)
            for t in _open(fx)
        )
        return round(fx.balance + self._open_profit() - used, 2)


def _open(fx: Forex) -> list[Trade]:
    return [t for t in fx.trades if t.status == "open"]


def _next_id(prefix: str, taken: list[str]) -> str:
    n = len(taken) + 1
    while f"{prefix}{n}" in taken:
        n += 1
    return f"{prefix}{n}"


def _bar(title: str, *, on_back: Handler | None = None) -> Node:
    return top_bar(title, on_back=on_back, bg=BRAND, fg=WHITE)


def _card(*children: Node, rid: str = "") -> Node:
    return card(*children, rid=rid, bg=WHITE)


def _fact(label: str, value: str) -> Node:
    return row(
        text(label, size=15, fg=MUTED),
        text(value, size=15, weight=500, align="right"),
        gap=12,
    )


def _money(value: float, currency: str) -> str:
    symbol = "$" if currency == "USD" else f"{currency} "
    return f"-{symbol}{-value:,.2f}" if value < 0 else f"{symbol}{value:,.2f}"


def _signed(value: float, currency: str) -> str:
    return ("+" if value >= 0 else "") + _money(value, currency)


def _price(symbol: str, price: float) -> str:
    # JPY pairs and metals are quoted to fewer decimals than the majors.
    digits = 3 if "JPY" in symbol else 2 if symbol.split("/", 1)[0] in CONTRACT_SIZE else 5
    return f"{price:.{digits}f}"
