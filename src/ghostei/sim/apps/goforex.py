"""Go Forex: account overview, quotes, charts with notes, a trade ticket, positions, the trade
history and its CSV export, a community feed, withdrawals.

Prices do not move during an episode (the world is deterministic), so an open position's
profit is what the frozen quote gives; closing books that profit into the balance.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial
from typing import Any

from ...world import ChartNote, FileEntry, Forex, Post, Trade
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
    icon_button,
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
TIMEFRAMES: tuple[tuple[str, str], ...] = tuple(
    (tf, tf) for tf in ("M1", "M5", "M15", "H1", "H4", "D1")
)
# The trade history's periods, in days, as its filter chips name them.
PERIODS: tuple[tuple[str, str], ...] = (("7", "7 days"), ("30", "30 days"), ("90", "90 days"))
EXPORT_FOLDER = "/sdcard/Download"
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
        self.timeframe = "H1"
        self.note_draft = ""
        self.history_days = 7  # the trade history's period (its chips; the export uses it)
        self.memo = ""
        self.exported = ""  # the last export's path, announced on the history screen

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
            row(
                list_row(
                    symbol,
                    "Tap to trade",
                    trailing=_price(symbol, price),
                    rid="quote_row",
                    on_click=partial(self._open_ticket, symbol),
                ),
                _chart_button(symbol, partial(self._open_chart, symbol)),
                pad=(0, 0, 8, 0),
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
            _bar(
                f"Trade {symbol}",
                on_back=self.pop,
                actions=[_chart_button(symbol, partial(self._open_chart, symbol), fg=WHITE)],
            ),
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
            _bar("Positions", actions=[_bar_action("Trade history", self._open_history)]),
            scroll(*kids, spacer(8), offset=self.offset(), on_scroll=self.set_offset, rid="list"),
            self._tabs("positions"),
            style=Style(bg=PAGE),
        )

    def screen_chart(self) -> Node:
        fx = self.os.world.forex
        symbol = str(self.args["symbol"])
        price = fx.quotes.get(symbol, 0.0)
        notes = sorted(
            (n for n in fx.notes if n.symbol == symbol), key=lambda n: n.time, reverse=True
        )
        chart = Node(
            cls="android.widget.ImageView",
            rid="chart_view",
            desc=f"{symbol} {self.timeframe} price chart",
            height=200,
            style=Style(bg=(250, 251, 253), fg=BRAND, icon="chart", radius=8),
        )
        note_rows: list[Node] = [
            list_row(
                n.text,
                f"{n.time[:16].replace('T', ' ')} · at {_price(symbol, n.price)}",
                rid="chart_note",
            )
            for n in notes
        ]
        if not note_rows:
            note_rows.append(text("No notes on this chart yet", size=15, fg=MUTED))
        return column(
            _bar(symbol, on_back=self.pop),
            bottom_tabs(
                TIMEFRAMES, self.timeframe, self._set_timeframe, accent=BRAND, rid="timeframes"
            ),
            scroll(
                _card(
                    row(
                        text(f"{symbol} · {self.timeframe}", size=15, fg=MUTED),
                        text(
                            _price(symbol, price),
                            size=18,
                            weight=700,
                            align="right",
                            rid="last_price",
                        ),
                        gap=8,
                    ),
                    chart,
                    rid="chart_card",
                ),
                _card(
                    text("Notes", size=16, weight=700),
                    *note_rows,
                    row(
                        button(
                            "Add note",
                            self._start_note,
                            filled=False,
                            color=BRAND,
                            rid="add_note",
                            width=130,
                        ),
                        spacer(0),
                    ),
                    rid="notes_card",
                ),
                column(
                    button(f"Trade {symbol}", partial(self._open_ticket, symbol), color=BRAND),
                    pad=(16, 8, 16, 8),
                ),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="chart",
            ),
            style=Style(bg=PAGE),
        )

    def screen_chart_note(self) -> Node:
        fx = self.os.world.forex
        symbol = str(self.args["symbol"])
        price = fx.quotes.get(symbol, 0.0)
        field = text_field(
            self.note_draft,
            self._set_note,
            hint="Write a note",
            field_name="chart_note",
            rid="note_input",
            multiline=True,
        )
        field.margin = (16, 8, 16, 8)
        return column(
            _bar(
                "Add note",
                on_back=self.pop,
                actions=[
                    _bar_action(
                        "Save",
                        partial(self._save_note, symbol),
                        enabled=bool(self.note_draft.strip()),
                    )
                ],
            ),
            text(
                f"The note is pinned to the {symbol} chart at {_price(symbol, price)}. "
                "Only you can see it.",
                size=14,
                fg=MUTED,
                pad=(16, 16, 16, 0),
            ),
            field,
            style=Style(bg=PAGE),
        )

    def screen_history(self) -> Node:
        fx = self.os.world.forex
        trades = self._history()
        total = round(sum(t.profit for t in trades), 2)
        kids: list[Node] = [
            _card(
                _fact("Closed trades", str(len(trades))),
                _fact("Profit", _signed(total, fx.currency)),
                rid="history_summary",
            )
        ]
        if self.exported:
            kids.append(
                text(
                    f"Exported to Download/{self.exported.rsplit('/', 1)[-1]}",
                    size=14,
                    fg=GAIN,
                    pad=(16, 4, 16, 4),
                    rid="export_status",
                )
            )
        kids += [
            list_row(
                f"{t.symbol} {t.side} {t.lots:g}",
                f"{_day(t)[:16].replace('T', ' ')} · opened at {_price(t.symbol, t.open_price)}",
                trailing=_signed(t.profit, fx.currency),
                rid="history_trade",
            )
            for t in trades
        ]
        if not trades:
            kids.append(text("No trades in this period", size=15, fg=MUTED, pad=(16, 8, 16, 8)))
        return column(
            _bar(
                "Trade history",
                on_back=self.pop,
                actions=[_bar_action("Export", partial(self.push, "export"))],
            ),
            self._periods(),
            scroll(
                *kids, spacer(8), offset=self.offset(), on_scroll=self.set_offset, rid="history"
            ),
            style=Style(bg=PAGE),
        )

    def screen_export(self) -> Node:
        trades = self._history()
        memo = text_field(
            self.memo,
            self._set_memo,
            hint="Memo (optional)",
            field_name="export_memo",
            rid="memo_input",
            multiline=True,
        )
        memo.margin = (16, 4, 16, 4)
        return column(
            _bar("Export history", on_back=self.pop),
            scroll(
                text("Period", size=14, fg=MUTED, pad=(16, 12, 16, 0)),
                self._periods(),
                _card(
                    _fact("Trades", str(len(trades))),
                    _fact("Format", "CSV"),
                    _fact("Save to", "Download"),
                    rid="export_summary",
                ),
                text("Memo", size=14, fg=MUTED, pad=(16, 8, 16, 0)),
                memo,
                column(
                    button("Export CSV", self._export, color=BRAND, rid="export_csv"),
                    pad=(16, 12, 16, 12),
                ),
                offset=self.offset(),
                on_scroll=self.set_offset,
                rid="export",
            ),
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

    def _periods(self) -> Node:
        return bottom_tabs(
            PERIODS, str(self.history_days), self._set_period, accent=BRAND, rid="period"
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

    def _open_chart(self, symbol: str) -> None:
        self.push("chart", symbol=symbol)

    def _set_timeframe(self, timeframe: str) -> None:
        self.timeframe = timeframe

    def _start_note(self) -> None:
        self.note_draft = ""
        self.push("chart_note", symbol=self.args["symbol"])

    def _set_note(self, value: str) -> None:
        self.note_draft = value

    def _save_note(self, symbol: str) -> None:
        fx = self.os.world.forex
        body = self.note_draft.strip()
        if not body:
            return
        note = ChartNote(
            id=self.fresh_id("n", [n.id for n in fx.notes]),
            symbol=symbol,
            text=body,
            time=self.os.now(),
            price=fx.quotes.get(symbol, 0.0),
        )
        fx.notes.append(note)
        self.os.log("note_saved", id=note.id, symbol=symbol, text=body, created=True)
        self.note_draft = ""
        self.pop()

    def _open_history(self) -> None:
        self.exported = ""
        self.push("history")

    def _set_period(self, days: str) -> None:
        self.history_days = int(days)

    def _set_memo(self, value: str) -> None:
        self.memo = value

    def _export(self) -> None:
        fx = self.os.world.forex
        trades = self._history()
        memo = self.memo.strip()
        now = datetime.fromisoformat(self.os.now())
        stem = f"GoForex_history_{self.history_days}d_{now:%Y%m%d}"
        path, n = f"{EXPORT_FOLDER}/{stem}.csv", 1
        while self.os.world.file(path) is not None:  # an earlier export of the same day
            path, n = f"{EXPORT_FOLDER}/{stem}_{n}.csv", n + 1
        start = now - timedelta(days=self.history_days)
        lines = [
            f"# Go Forex trade history, account {fx.account_id}",
            f"# Period: last {self.history_days} days ({start:%Y-%m-%d} to {now:%Y-%m-%d})",
            *(f"# Memo: {line}" for line in memo.splitlines() if line.strip()),
            "Ticket,Symbol,Type,Lots,Open price,Open time,Close time,Profit",
            *(
                f"{t.id},{t.symbol},{t.side},{t.lots:g},{_price(t.symbol, t.open_price)},"
                f"{t.opened},{t.closed},{t.profit:.2f}"
                for t in trades
            ),
        ]
        self.os.world.files.append(
            FileEntry(path=path, content="\n".join(lines), modified=self.os.now())
        )
        self.os.log(
            "history_exported", days=self.history_days, memo=memo, path=path, trades=len(trades)
        )
        self.memo = ""
        self.exported = path
        self.pop()

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
        t.closed = self.os.now()
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

    def _history(self) -> list[Trade]:
        """Closed trades of the chosen period, newest first; an undated one is always shown."""
        fx = self.os.world.forex
        since = datetime.fromisoformat(self.os.now()) - timedelta(days=self.history_days)
        closed = [t for t in fx.trades if t.status == "closed"]
        kept = [t for t in closed if not _day(t) or datetime.fromisoformat(_day(t)) >= since]
        return sorted(kept, key=_day, reverse=True)

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


def _bar(title: str, *, on_back: Handler | None = None, actions: list[Node] | None = None) -> Node:
    return top_bar(title, on_back=on_back, actions=actions, bg=BRAND, fg=WHITE)


def _bar_action(label: str, on_click: Handler, *, enabled: bool = True) -> Node:
    """A text action in the brand bar ("Save", "Export")."""
    node = button(label, on_click, filled=False, color=WHITE, enabled=enabled, rid=label.lower())
    node.width = 40 + 10 * len(label)
    node.style = Style(
        fg=WHITE if enabled else (159, 179, 214), size=15, weight=500, radius=20, align="center"
    )
    return node


def _chart_button(symbol: str, on_click: Handler, *, fg: Color = BRAND) -> Node:
    node = icon_button("chart", f"{symbol} chart", on_click, rid="chart_button")
    node.style = Style(icon="chart", fg=fg, size=22, align="center", radius=24)
    return node


def _day(t: Trade) -> str:
    """When a trade entered the history: its close time, or its open time."""
    return (t.closed or t.opened)[:19]


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
