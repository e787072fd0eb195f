"""The ``ghostei`` command line: the ``main`` group, whose commands live in this package's
modules (``run``, ``cases``, ``report``, ``judge``, ``defences``, ``device``, ``android``,
``mcp``, ``truth``) and are imported when one of them is invoked. Commands own the console
(:mod:`.console`); library code never prints.

The CLI is the top layer of the layer contract (``[tool.importlinter]`` in ``pyproject.toml``):
it imports from every layer below it, and nothing below imports it.
"""

from __future__ import annotations

import importlib

import click

from .console import say_retries


class _LazyGroup(click.Group):
    """A group whose commands are imported when one of them is invoked.

    The reporting, judging, case and device commands pull in matplotlib, the served phone and
    more: importing them for every ``ghostei run`` cost 0.4 s of its start (click's documented
    lazy-loading pattern).
    """

    LAZY = {
        "run": "ghostei.cli.run:run",
        "check-endpoint": "ghostei.cli.run:check_endpoint_command",
        "parse-action": "ghostei.cli.run:parse_action_cmd",
        "report": "ghostei.cli.report:report",
        "compare": "ghostei.cli.report:compare",
        "cases": "ghostei.cli.cases:cases",
        "defences": "ghostei.cli.defences:defences",
        "judge": "ghostei.cli.judge:judge",
        "judge-eval": "ghostei.cli.judge:judge_eval",
        "device": "ghostei.cli.device:device",
        "phish-server": "ghostei.cli.android:phish_server",
        "android": "ghostei.cli.android:android",
        "mcp": "ghostei.cli.mcp:mcp",
        "truth": "ghostei.cli.truth:truth",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.LAZY])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.LAZY:
            module, name = self.LAZY[cmd_name].split(":")
            command = getattr(importlib.import_module(module), name)
            assert isinstance(command, click.Command) and command.name == cmd_name
            return command
        return super().get_command(ctx, cmd_name)


@click.group(cls=_LazyGroup)
@click.version_option(package_name="ghostei")
def main() -> None:
    """GhostEI: how often are mobile GUI agents hijacked by environmental injection?"""
    say_retries()
