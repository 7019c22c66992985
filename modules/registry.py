"""Module kinds by name: the one place that maps `kind = "..."` to a class.

Each kind's class has ``from_config(table, base_dir)``-compatible construction via
:func:`build_module`; kinds are imported lazily so that a site hosting one
kind does not import the others (openseespy, for instance).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from modules.base import Module, ModuleError

KINDS: dict[str, str] = {
    "linear": "modules.linear:LinearModule",
    "spring": "modules.spring:SpringModule",
    "opensees": "modules.opensees:OpenSeesModule",
}


def build_module(kind: str, config: Mapping[str, Any], base_dir: Path | None = None) -> Module:
    """Build a module of ``kind`` from its config table (paths relative to ``base_dir``)."""
    try:
        target = KINDS[kind]
    except KeyError:
        raise ModuleError(f"unknown module kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}") from None
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    if "base_dir" in inspect.signature(cls.from_config).parameters:
        return cls.from_config(config, base_dir=base_dir or Path.cwd())
    return cls.from_config(config)
