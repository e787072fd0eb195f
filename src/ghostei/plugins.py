"""Plug-ins by name: a registered one, an installed package's entry point, or a user's own.

Agents and defences are found the same way, so a user learns one rule: a name from the
registry (``ghostei run --agent t3a``, ``--defence overlay-gate``), the entry point an
installed package declares under the kind's group (``ghostei.agents``, ``ghostei.defences``),
or ``package.module:Name`` / ``path/to/file.py:Name``.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Mapping
from importlib.metadata import entry_points
from pathlib import Path


class PluginLoadError(KeyError):
    """A name that names no registered plug-in, entry point or importable object."""

    def __str__(self) -> str:
        return str(self.args[0])


def load_plugin(name: str, registry: Mapping[str, object], group: str, kind: str) -> object:
    """The object ``name`` stands for: ``registry[name]``, the entry point ``name`` of
    ``group``, or ``module:attr`` / ``file.py:attr``. ``kind`` ("agent", "defence") words
    the errors, which are PluginLoadErrors."""
    if name in registry:
        return registry[name]
    for ep in entry_points(group=group):
        if ep.name == name:
            try:
                return ep.load()
            except Exception as exc:  # a third party's package may raise anything
                raise PluginLoadError(
                    f"{kind} {name!r}: loading its entry point failed: {exc}"
                ) from exc
    if ":" not in name:
        known = ", ".join(sorted(registry))
        raise PluginLoadError(
            f"unknown {kind} {name!r}; known: {known}; or give your own as "
            f"'package.module:ClassName' or 'path/to/{kind}.py:ClassName'"
        )
    where, _, attr = name.rpartition(":")
    module = _import(where, name, kind)
    if not hasattr(module, attr):
        raise PluginLoadError(f"{kind} {name!r}: {where} has no {attr!r}")
    return getattr(module, attr)


def _import(where: str, name: str, kind: str) -> object:
    try:
        if where.endswith(".py") or "/" in where:
            path = Path(where).resolve()
            if not path.is_file():
                raise PluginLoadError(f"{kind} {name!r}: no file {where}")
            # One module name per file, the same in every worker process.
            digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
            mod_name = f"ghostei_user_{kind}_{digest}_{path.stem}"
            if mod_name in sys.modules:
                return sys.modules[mod_name]
            spec = importlib.util.spec_from_file_location(mod_name, path)
            if spec is None or spec.loader is None:
                raise PluginLoadError(f"{kind} {name!r}: cannot import {where}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[mod_name] = module
            spec.loader.exec_module(module)
            return module
        return importlib.import_module(where)
    except PluginLoadError:
        raise
    except Exception as exc:  # a user's module may raise anything while importing
        raise PluginLoadError(f"{kind} {name!r}: importing {where} failed: {exc}") from exc
