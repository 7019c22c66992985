"""openseespy's commands, imported on their first use.

Importing openseespy makes the process print ``Process 0 Terminating`` on stderr when it exits, so a
command that only reads an OpenSees configuration (a refused experiment, ``--describe-config``) must
not import it: the modules that drive a model take :data:`ops` from here instead of importing
``openseespy.opensees`` at their top.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


def opensees() -> ModuleType:
    """The ``openseespy.opensees`` module (imported now if it was not yet)."""
    return importlib.import_module("openseespy.opensees")


class _Commands:
    """Stands for ``openseespy.opensees``: the first use of a command imports it; later uses are plain
    attribute look-ups (each command is kept on the object once fetched)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        command = getattr(opensees(), name)
        setattr(self, name, command)
        return command


ops: Any = _Commands()
"""use as ``ops.node(...)``, as ``import openseespy.opensees as ops`` would"""
