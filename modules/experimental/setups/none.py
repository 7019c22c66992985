"""``none``: one actuator per DOF, each stroke the DOF itself (OpenFresco's ESNoTransformation)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hybridsim.wire.contract import Dof
from hybridsim.modules.config_schema import Key, Names, Schema
from hybridsim.modules.experimental.setups.base import Setup, SetupError

DOF_KEYS = {"dofs": Key(Names(), "the DOFs' names", required=True),
            "kinds": Key(Names(("translation", "rotation")), "kind of each DOF (default: translation)")}


class NoTransformation(Setup):
    """strokes = q, DOF forces = loads, over ``dofs``."""

    kind = "none"
    CONFIG = Schema("setup 'none'", "One actuator per DOF, each stroke the DOF itself.", DOF_KEYS)

    def __init__(self, dofs: Sequence[Dof]) -> None:
        super().__init__()
        self.dofs = tuple(dofs)
        self.actuators = len(self.dofs)

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> NoTransformation:
        """``dofs`` (names), optional ``kinds`` (translation or rotation per DOF)."""
        return cls(dof_list(table, cls.kind))

    def strokes(self, q: np.ndarray) -> np.ndarray:
        return np.array(q, float)

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        return np.eye(self.actuators)

    def pose(self, strokes: np.ndarray) -> np.ndarray:
        return np.array(strokes, float)


def dof_list(table: Mapping[str, Any], kind: str) -> list[Dof]:
    """The DOFs of a table's ``dofs`` (names) and optional ``kinds``."""
    names = table["dofs"]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise SetupError(f"setup {kind!r}: dofs must be a non-empty list of DOF names")
    kinds = table.get("kinds", ["translation"] * len(names))
    if not isinstance(kinds, list) or len(kinds) != len(names):
        raise SetupError(f"setup {kind!r}: kinds must give one of translation/rotation per DOF ({len(names)})")
    try:
        return [Dof(n, k) for n, k in zip(names, kinds)]
    except Exception as exc:
        raise SetupError(f"setup {kind!r}: {exc}") from None
