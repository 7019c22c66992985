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

from hybridsim.modules.base import MAX_CONFIG_NUMBERS, count_numbers
from hybridsim.wire.contract import Module, ModuleError
from hybridsim.modules.limits import Confirm, terminal_confirm, with_limits

KINDS: dict[str, str] = {
    "linear": "hybridsim.modules.linear:LinearModule",
    "spring": "hybridsim.modules.spring:SpringModule",
    "opensees": "hybridsim.modules.opensees:OpenSeesModule",
    "plant": "hybridsim.modules.plant.module:PlantModule",
    "experimental": "hybridsim.modules.experimental.module:ExperimentalModule",
    "openfresco": "hybridsim.modules.openfresco:OpenFrescoModule",
    "simcor": "hybridsim.modules.simcor:SimCorModule",
}
CLIENT_KINDS = frozenset({"openfresco", "simcor"})
"""kinds that are clients of a lab's protocol (docs/interop.md): they run in the coordinator's process, and the
``address`` of their [[modules]] table is the server they connect to, not a hybridsim site"""


def build_module(kind: str, config: Mapping[str, Any], base_dir: Path | None = None,
                 confirm: Confirm = terminal_confirm) -> Module:
    """Build a module of ``kind`` from its config table (paths relative to ``base_dir``).

    A ``limits`` table in the config puts the module behind the site's safety limits
    (``hybridsim.modules.limits``); ``confirm`` asks the operator where the limits require it.
    """
    try:
        target = KINDS[kind]
    except KeyError:
        raise ModuleError(f"unknown module kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}") from None
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    if count_numbers(config) > MAX_CONFIG_NUMBERS:
        raise ModuleError(f"{kind} module: the configuration holds more than {MAX_CONFIG_NUMBERS:,} numbers; "
                          "give large matrices as files (e.g. stiffness_file)")
    config = dict(config)
    limits = config.pop("limits", None)
    if "base_dir" in inspect.signature(cls.from_config).parameters:
        module = cls.from_config(config, base_dir=base_dir or Path.cwd())
    else:
        module = cls.from_config(config)
    return with_limits(module, limits, confirm)
