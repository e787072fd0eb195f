"""``ghostei defences``: what defences there are, what they act on and where they come from."""

from __future__ import annotations

import json

import click
from rich.table import Table

from ..defences import catalogue
from .console import out


@click.group()
def defences() -> None:
    """The defences `ghostei run --defence` can put around an agent."""


@defences.command("list")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
def list_defences(fmt: str) -> None:
    """Every registered defence: name, the point it acts at, what it does, its source and its
    options (set with --defence NAME:key=value,...)."""
    entries = catalogue()
    if fmt == "json":
        click.echo(json.dumps(entries, indent=2))
        return
    table = Table(show_lines=False)
    for column in ("defence", "acts on", "what it does", "source", "options"):
        table.add_column(column, overflow="fold")
    for entry in entries:
        options = entry["options"]
        assert isinstance(options, dict)
        shown = ", ".join(
            f"{k}={str(v).lower() if isinstance(v, bool) else v}"
            for k, v in options.items()
            if k != "note"  # long texts are for --format json
        )
        table.add_row(
            str(entry["name"]), str(entry["point"]), str(entry["summary"]), str(entry["source"]),
            shown,
        )  # fmt: skip
    out.print(table)
