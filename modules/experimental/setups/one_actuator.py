"""``one-actuator``: one actuator along one DOF (OpenFresco's ESOneActuator): stroke = +-u, exact at any size."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.wire.contract import Dof
from hybridsim.modules.config_schema import Key, Schema, Text
from hybridsim.modules.experimental.setups.base import Setup, SetupError
from hybridsim.modules.experimental.setups.rigid import SIDE, side_sign


class OneActuator(Setup):
    """An actuator in line with the DOF ``dof``; its reaction on the ``side`` it pushes from."""

    kind = "one-actuator"
    actuators = 1
    CONFIG = Schema("setup 'one-actuator'", "One actuator in line with one DOF.", {
        "dof": Key(Text(), "the DOF's name", default="u"),
        "dof_kind": Key(Text(("translation", "rotation")), "its kind", default="translation"),
        "side": SIDE})

    def __init__(self, dof: Dof = Dof("u"), sign: float = 1.0) -> None:
        super().__init__()
        self.dofs = (dof,)
        self.sign = float(sign)

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> OneActuator:
        """Optional ``dof`` (name, default "u"), ``dof_kind`` (translation or rotation), ``side``."""
        name = table.get("dof", "u")
        if not isinstance(name, str) or not name:
            raise SetupError(f"setup {cls.kind!r}: dof must be a DOF name, not {name!r}")
        try:
            dof = Dof(name, table.get("dof_kind", "translation"))
        except Exception as exc:
            raise SetupError(f"setup {cls.kind!r}: {exc}") from None
        return cls(dof, side_sign(table, cls.kind))

    def strokes(self, q: np.ndarray) -> np.ndarray:
        return self.sign * np.asarray(q, float)

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        return np.array([[self.sign]])

    def pose(self, strokes: np.ndarray) -> np.ndarray:
        return self.sign * np.asarray(strokes, float)
