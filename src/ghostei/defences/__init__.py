"""The defence registry: defences by name, composable around any agent.

    ghostei run --agent m3a --model M --defence warn-popups --defence overlay-gate
    ghostei defences list [--format json]

A defence is one module of this package registered with ``@register_defence``, an entry point
of an installed package (group ``ghostei.defences``), or a user's class given as
``path/to/file.py:ClassName`` or ``package.module:ClassName``; ``NAME:key=value,...`` sets its
options. Defences are applied in the order given, and named in every report after the agent
they guard: ``gullible+overlay-gate``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..plugins import PluginLoadError, load_plugin
from .base import (
    POINTS,
    AgentWrapper,
    Defence,
    DefenceChain,
    DefenceContext,
    DefencePoint,
    Defended,
    PromptDefended,
    defended,
    system_note,
)

ENTRY_POINT_GROUP = "ghostei.defences"
DEFENCES: dict[str, type[Defence]] = {}
OPTION_TYPES = (str, int, float, bool)


class DefenceError(ValueError):
    """A defence spec that names no defence, or options it does not take."""


D = typing.TypeVar("D", bound=type[Defence])


def register_defence(cls: D) -> D:
    """Class decorator: make a defence available as ``--defence NAME`` (its ``name``)."""
    if not cls.name or cls.point not in POINTS:
        raise TypeError(f"{cls.__name__}: a defence needs a name and a point ({POINTS})")
    DEFENCES[cls.name] = cls
    return cls


@dataclass(frozen=True)
class Option:
    """One option of a defence: its name, type and default."""

    name: str
    kind: type
    default: object


@dataclass(frozen=True)
class DefenceSpec:
    """A parsed ``NAME[:key=value,...]``: the class and its options, converted."""

    text: str
    cls: type[Defence]
    options: dict[str, object]

    @property
    def label(self) -> str:
        """How the defence appears in agent names: its name, then the options set."""
        name = self.cls.name or self.cls.__name__
        if not self.options:
            return name
        return name + ":" + ",".join(f"{k}={_show(v)}" for k, v in sorted(self.options.items()))

    def build(self, ctx: DefenceContext) -> Defence:
        """A fresh defence for one episode."""
        defence = self.cls(ctx, **self.options)
        defence.label = self.label
        return defence


def options_of(cls: type[Defence]) -> list[Option]:
    """The options a defence takes: the keyword arguments of its ``__init__`` after ctx."""
    hints = typing.get_type_hints(cls.__init__)
    out = []
    for param in list(inspect.signature(cls.__init__).parameters.values())[2:]:
        if param.kind is not param.KEYWORD_ONLY:
            continue
        kind = hints.get(param.name, str)
        out.append(Option(param.name, kind if kind in OPTION_TYPES else str, param.default))
    return out


def parse_spec(text: str) -> DefenceSpec:
    """``NAME[:key=value,...]`` as a DefenceSpec; raises DefenceError naming what is wrong.

    A user's own defence is ``path/to/file.py:ClassName`` (or ``module:ClassName``), whose
    options follow a second colon: ``my.py:Guard:strict=true``. A bool option given bare
    (``overlay-gate:allow_dismiss``) is true; an option given twice is refused.
    """
    name, options_text = _split(text)
    try:
        found = load_plugin(name, DEFENCES, ENTRY_POINT_GROUP, "defence")
    except PluginLoadError as exc:
        raise DefenceError(str(exc)) from None
    if not (isinstance(found, type) and issubclass(found, Defence)):
        raise DefenceError(f"defence {name!r} is not a subclass of ghostei.defences.Defence")
    known = {o.name: o for o in options_of(found)}
    options: dict[str, object] = {}
    for item in filter(None, options_text.split(",")):
        key, sep, raw = item.partition("=")
        key = key.strip()
        if key not in known:
            takes = ", ".join(f"{o.name}={_brief(o.default)}" for o in known.values()) or "none"
            raise DefenceError(
                f"defence {name!r}: unknown option {item.strip()!r} (it takes: {takes})"
            )
        if key in options:  # the last would win silently: say which was meant
            raise DefenceError(f"defence {name!r}: option {key} is given more than once")
        option = known[key]
        if not sep:  # a bare flag: a bool option set to true; any other needs its value
            if option.kind is not bool:
                raise DefenceError(
                    f"defence {name!r}: option {key} needs a value: "
                    f"{key}={option.kind.__name__.upper()} (default {_brief(option.default)})"
                )
            raw = "true"
        options[key] = _convert(name, option, raw.strip())
    return DefenceSpec(text, found, options)


def _split(text: str) -> tuple[str, str]:
    # A registered name has no colon; a user's class has one ("x.py:Class"), so its options
    # come after the second.
    head, sep, rest = text.partition(":")
    if not sep:
        return text, ""
    if head in DEFENCES or "=" in rest.split(":", 1)[0]:
        return head, rest
    cls, _, options = rest.partition(":")
    return f"{head}:{cls}", options


def _convert(name: str, option: Option, raw: str) -> object:
    try:
        if option.kind is bool:
            if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(raw)
            return raw.lower() in ("true", "1", "yes")
        return option.kind(raw)
    except ValueError:
        raise DefenceError(
            f"defence {name!r}: option {option.name} must be {option.kind.__name__}, not {raw!r}"
        ) from None


def _show(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _brief(value: object) -> str:
    shown = _show(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def parse_specs(texts: Sequence[str]) -> list[DefenceSpec]:
    """Every spec parsed (DefenceError for the first bad one)."""
    return [parse_spec(t) for t in texts]


def defended_label(agent: str, specs: Sequence[DefenceSpec]) -> str:
    """An agent's name in records and reports: ``agent+defence+...``."""
    return "+".join([agent, *(s.label for s in specs)])


def agent_labels(config: Mapping[str, Any]) -> list[str]:
    """The agents' names in records of a run, in its order, from its manifest's config (read
    leniently, for reports: a defence that no longer loads keeps its spec as written)."""
    agents = [a for a in config.get("agents", []) if isinstance(a, str)]
    texts = [d for d in config.get("defences", []) if isinstance(d, str)]
    try:
        labels = [s.label for s in parse_specs(texts)]
    except DefenceError:
        labels = texts
    return ["+".join([a, *labels]) for a in agents]


def base_agent(label: str) -> str:
    """The agent a record's name starts with: ``m3a`` for ``m3a+overlay-gate``."""
    return label.split("+", 1)[0]


def catalogue() -> list[dict[str, object]]:
    """Every registered defence, for ``ghostei defences list``."""
    return [
        {
            "name": cls.name,
            "point": cls.point,
            "summary": cls.summary,
            "source": cls.source,
            "options": {o.name: o.default for o in options_of(cls)},
        }
        for cls in sorted(DEFENCES.values(), key=lambda c: (POINTS.index(c.point), c.name))
    ]


def _register_builtins() -> None:
    # The built-in defences are this package's modules, one each: importing registers them.
    for module in pkgutil.iter_modules(__path__):
        if module.name not in ("base", "command", "windows"):
            importlib.import_module(f"{__name__}.{module.name}")


_register_builtins()

__all__ = [
    "DEFENCES",
    "POINTS",
    "AgentWrapper",
    "Defence",
    "DefenceChain",
    "DefenceContext",
    "DefenceError",
    "DefencePoint",
    "DefenceSpec",
    "Defended",
    "Option",
    "PromptDefended",
    "agent_labels",
    "base_agent",
    "catalogue",
    "defended",
    "defended_label",
    "options_of",
    "parse_spec",
    "parse_specs",
    "register_defence",
    "system_note",
]
