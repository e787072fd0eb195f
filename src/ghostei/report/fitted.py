"""A terminal table that never cuts a figure or a name: its columns go on as many tables as the
width needs, each repeating the key columns (the agent, its N) on the left.

Rich fits a table that is too wide by squeezing its columns, which cuts numbers to "100…" and
names to "orac…". A :class:`FittedTable` is laid out when it is printed, for the width it is
printed at: at 140 columns it is one table, at 80 the rates that do not fit continue in a
second table below, under the same keys. Numbers never wrap; only a name longer than the
whole terminal folds onto a second line, whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich import box
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

# Wide enough that measuring a table finds its natural width, not one squeezed to fit.
_UNBOUNDED = 100_000
# A name column keeps at least this width when it must fold (a name longer than the terminal).
_NAME_MIN_WIDTH = 4


@dataclass(frozen=True)
class FittedColumn:
    """A column: its header, and whether it holds names (left, may fold) or figures (right)."""

    header: str
    name: bool = False


class FittedTable:
    """A table whose columns after the first ``keys`` are spread over as few tables as fit the
    width it is printed at; each table repeats the key columns."""

    def __init__(self, title: str, columns: Sequence[FittedColumn], *, keys: int = 1) -> None:
        if not 0 < keys < len(columns):
            raise ValueError(f"keys must leave at least one other column, not {keys}")
        self.title = title
        self.columns = list(columns)
        self.keys = keys
        self.rows: list[list[RenderableType]] = []
        self._sections: set[int] = set()  # rows after which a rule is drawn

    def add_row(self, *cells: RenderableType) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"a row needs {len(self.columns)} cells, not {len(cells)}")
        # Strings are data (names, figures): never rich markup.
        self.rows.append([Text(c) if isinstance(c, str) else c for c in cells])

    def add_section(self) -> None:
        """A rule below the last row added (as :meth:`rich.table.Table.add_section`)."""
        if self.rows:
            self._sections.add(len(self.rows) - 1)

    def tables(self, console: Console, width: int) -> list[Table]:
        """The tables that show every column within ``width`` cells, in column order."""
        keys = list(range(self.keys))
        parts: list[list[int]] = []
        current: list[int] = []
        for index in range(self.keys, len(self.columns)):
            trial = [*current, index]
            if current and self._width(console, keys + trial) > width:
                parts.append(current)
                trial = [index]
            current = trial
        parts.append(current)
        return [
            self._table(keys + part, self.title if i == 0 else f"{self.title} (continued)")
            for i, part in enumerate(parts)
        ]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.tables(console, options.max_width)

    def _width(self, console: Console, indexes: Iterable[int]) -> int:
        table = self._table(list(indexes), "")
        options = console.options.update_width(_UNBOUNDED)
        return Measurement.get(console, options, table).maximum

    def _table(self, indexes: list[int], title: str) -> Table:
        table = Table(title=title or None, box=box.SIMPLE_HEAD)
        for index in indexes:
            column = self.columns[index]
            if column.name:
                table.add_column(
                    column.header, justify="left", overflow="fold", min_width=_NAME_MIN_WIDTH
                )
            else:
                table.add_column(column.header, justify="right", no_wrap=True)
        for number, row in enumerate(self.rows):
            table.add_row(*(row[i] for i in indexes), end_section=number in self._sections)
        return table
