"""``loading-platform``: a rigid crosshead driven by six actuators, all six DOFs (a Stewart-type platform such
as the Load and Boundary Condition Box of multi-site tests).

Each actuator joins a reaction point ``bases[i]`` to a crosshead point ``attachments[i]`` (m, at rest,
relative to the control point).  DOFs ux, uy, uz (m) and the rotation vector rx, ry, rz (rad).
The forward map is exact; the inverse is Newton's from the linearised pose (quadratic: about four
iterations across the working range), refused with :class:`UnreachablePose` when it does not
converge or when a stroke is beyond ``stroke_range``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Key, Numbers, Schema
from hybridsim.modules.experimental.setups.base import SetupError
from hybridsim.modules.experimental.setups.rigid import OPTIONS, RigidBodySetup, configured


class LoadingPlatform(RigidBodySetup):
    kind = "loading-platform"
    CONFIG = Schema("setup 'loading-platform'", "A rigid crosshead driven by six actuators, all six DOFs.", {
        "attachments": Key(Numbers("m", (2,)), "six crosshead points [x, y, z] at rest", required=True),
        "bases": Key(Numbers("m", (2,)), "six reaction points [x, y, z]", required=True), **OPTIONS})

    def __init__(self, attachments: np.ndarray, bases: np.ndarray) -> None:
        super().__init__(attachments, bases, controlled=range(6))
        rank = np.linalg.matrix_rank(self.jacobian(np.zeros(6)))
        if rank < 6:
            raise SetupError(f"setup {self.kind!r}: the six actuators hold only {rank} of the six DOFs at rest "
                             "(a singular layout): move attachments or bases")

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> LoadingPlatform:
        """``attachments`` and ``bases`` (6 points x 3, m) and the rigid-body options."""
        points = {}
        for key in ("attachments", "bases"):
            try:
                points[key] = np.asarray(table[key], float)
            except (TypeError, ValueError):
                points[key] = None
            if points[key] is None or points[key].shape != (6, 3) or not np.all(np.isfinite(points[key])):
                raise SetupError(f"setup {cls.kind!r}: {key} must be six points [x, y, z] (m)")
        return configured(cls(points["attachments"], points["bases"]), table)
