"""Registries: the one way hybridsim names its pluggable parts.

Every pluggable kind is a table ``name -> "package.module:Attribute"`` beside the code that uses
it: module kinds (``hybridsim.modules.registry.KINDS``), compensators
(``hybridsim.modules.experimental.compensators.kinds.KINDS``), integrators
(``hybridsim.coordinator.integrators.INTEGRATORS``), reference problems
(``hybridsim.coordinator.problems.PROBLEMS``) and the CLI's subcommands
(``hybridsim.coordinator.cli.SUBCOMMANDS``).  A line is imported only when its name is used, so a
site daemon that hosts one kind never imports the others (openseespy, scipy.signal, h5py).
Adding a kind is one file and one line in its table.

This file imports nothing of hybridsim: both sides and the wire may use it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any


def resolve(line: str) -> Any:
    """The object a registry line ``"package.module:Attribute"`` names, its module imported now."""
    module, _, attribute = line.partition(":")
    return getattr(importlib.import_module(module), attribute)


def load(table: Mapping[str, str], name: str) -> Any:
    """The object registered as ``name`` in ``table`` (KeyError when the table has no such name)."""
    return resolve(table[name])
