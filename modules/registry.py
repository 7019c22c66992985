"""Module kinds by name: the one place that maps `kind = "..."` to a class.

Each kind's class has ``from_config(table, base_dir)``-compatible construction via
:func:`build_module` and declares its configuration as ``CONFIG``
(:mod:`hybridsim.modules.config_schema`); every kind's table also takes ``kind`` and ``limits``.
Kinds are imported lazily so that a site hosting one kind does not import the others.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hybridsim.modules.base import MAX_CONFIG_NUMBERS, count_numbers
from hybridsim.modules.config_schema import Key, Schema, Table, Text
from hybridsim.registry import load
from hybridsim.wire.contract import Module, ModuleError
from hybridsim.wire.protocols import PROTOCOLS
from hybridsim.modules.limits import CONFIG as LIMITS, Confirm, terminal_confirm, with_limits

KINDS: dict[str, str] = {
    "linear": "hybridsim.modules.linear:LinearModule",
    "spring": "hybridsim.modules.spring:SpringModule",
    "opensees": "hybridsim.modules.opensees:OpenSeesModule",
    "plant": "hybridsim.modules.plant.module:PlantModule",
    "experimental": "hybridsim.modules.experimental.module:ExperimentalModule",
    "openfresco": "hybridsim.modules.openfresco:OpenFrescoModule",
    "simcor": "hybridsim.modules.simcor:SimCorModule",
}
CLIENT_KINDS = frozenset(protocol.client for protocol in PROTOCOLS.values())
"""kinds that are clients of a lab's protocol (docs/interop.md): they run in the coordinator's process, and the
``address`` of their [[modules]] table is the server they connect to, not a hybridsim site"""


def module_class(kind: str) -> type:
    """The class of module ``kind`` (ModuleError naming the known kinds when there is none)."""
    try:
        return load(KINDS, kind)
    except KeyError:
        raise ModuleError(f"unknown module kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}") from None


def module_schema(kind: str) -> Schema:
    """The declaration of module ``kind``'s configuration: its own keys plus ``kind`` and ``limits``."""
    own: Schema = module_class(kind).CONFIG
    return own.with_keys(f"`{kind}` module", own.doc, {
        "kind": Key(Text((kind,)), "the module kind (optional here: the site or experiment names it)"),
        "limits": Key(Table(LIMITS), "the site's safety limits"),
    })


def build_module(kind: str, config: Mapping[str, Any], base_dir: Path | None = None,
                 confirm: Confirm = terminal_confirm) -> Module:
    """Build a module of ``kind`` from its config table (paths relative to ``base_dir``).

    A ``limits`` table in the config puts the module behind the site's safety limits
    (``hybridsim.modules.limits``); ``confirm`` asks the operator where the limits require it.
    """
    cls = module_class(kind)
    if count_numbers(config) > MAX_CONFIG_NUMBERS:
        raise ModuleError(f"{kind} module: the configuration holds more than {MAX_CONFIG_NUMBERS:,} numbers; "
                          "give large matrices as files (e.g. stiffness_file)")
    module_schema(kind).check(config)
    config = dict(config)
    config.pop("kind", None)
    limits = config.pop("limits", None)
    if "base_dir" in inspect.signature(cls.from_config).parameters:
        module = cls.from_config(config, base_dir=base_dir or Path.cwd())
    else:
        module = cls.from_config(config)
    return with_limits(module, limits, confirm)
