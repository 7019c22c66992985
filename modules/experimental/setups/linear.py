"""``linear``: any n DOFs <-> m actuators by a given matrix T (strokes = T q), m >= n of rank n."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hybridsim.wire.contract import Dof
from hybridsim.modules.config_schema import Key, Numbers, Schema
from hybridsim.modules.experimental.setups.base import Setup, SetupError
from hybridsim.modules.experimental.setups.none import DOF_KEYS, dof_list


class LinearSetup(Setup):
    """strokes = T q (T: actuators x DOFs, m per m or per rad); q from strokes by least squares (exact when the
    strokes are of one pose, the best fit of redundant noisy ones); DOF forces = T^T loads."""

    kind = "linear"
    CONFIG = Schema("setup 'linear'", "strokes = T q by a given matrix (m >= n actuators, rank n).", {
        **DOF_KEYS, "matrix": Key(Numbers("m/m, m/rad", (2,)), "T, one row per actuator", required=True)})

    def __init__(self, dofs: Sequence[Dof], matrix: np.ndarray) -> None:
        super().__init__()
        self.dofs = tuple(dofs)
        self.matrix = np.asarray(matrix, float)
        if self.matrix.ndim != 2 or self.matrix.shape[1] != len(self.dofs) or not np.all(np.isfinite(self.matrix)):
            raise SetupError(f"setup 'linear': matrix must be finite, one row per actuator and one column per DOF "
                             f"({len(self.dofs)}), got shape {self.matrix.shape}")
        if np.linalg.matrix_rank(self.matrix) < len(self.dofs):
            raise SetupError(f"setup 'linear': matrix has rank {np.linalg.matrix_rank(self.matrix)} < {len(self.dofs)} "
                             "DOFs: the strokes cannot tell every DOF (add actuators or fix the matrix)")
        self.actuators = self.matrix.shape[0]
        self._inverse = np.linalg.pinv(self.matrix)

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> LinearSetup:
        """``dofs``, optional ``kinds``, ``matrix`` (one row per actuator)."""
        try:
            matrix = np.asarray(table["matrix"], float)
        except (TypeError, ValueError):
            raise SetupError("setup 'linear': matrix must be a list of rows of numbers") from None
        return cls(dof_list(table, cls.kind), matrix)

    def strokes(self, q: np.ndarray) -> np.ndarray:
        return self.matrix @ np.asarray(q, float)

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        return self.matrix

    def pose(self, strokes: np.ndarray) -> np.ndarray:
        return self._inverse @ np.asarray(strokes, float)
