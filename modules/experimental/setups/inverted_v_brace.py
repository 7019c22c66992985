"""``inverted-v-brace``: the apex of an inverted-V brace (x, y, theta) under a loading beam driven by one
horizontal and two vertical actuators symmetric about the apex (OpenFresco's ESInvertedVBrace2d
kinematics: the three-actuator beam with its vertical actuators ``half_span`` either side).

With ``braces`` the forces come from the braces' own load cells, as ESInvertedVBrace2d reads them: six
readings, (Fx, Fy, M) at the foot of each brace (global axes; the force the beam puts on the brace, which
a pinned brace carries unchanged to its foot), instead of the actuators' three.  A pinned brace carries
only an axial force N_i; the site takes N_i = e_i . (Fx, Fy)_i, e_i the brace's present direction (foot to
joint), which drops the components a load cell's cross-talk puts across the brace (OpenFresco averages
the two components' estimates of the axial force instead) and leaves the moments out (as OpenFresco does
without moments).  DOF forces: the virtual work of the axial forces through the braces' length changes,
sum_i N_i d l_i / dq.  The braces meet the beam at ``joints`` (default: both at the control point, the apex).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Key, Number, Numbers, Schema, Table
from hybridsim.modules.experimental.setups.base import SetupError, numbers
from hybridsim.modules.experimental.setups.rigid import LENGTHS, OPTIONS, SIDE, link_kinematics, configured, side_sign
from hybridsim.modules.experimental.setups.three_actuators_2d import ThreeActuators2d

BRACES = Schema("braces", "The two braces, read by their own load cells (ESInvertedVBrace2d's six forces).", {
    "feet": Key(Numbers("m", (2,)), "[[x, y], [x, y]]: each brace's pinned foot, relative to the apex at rest",
                required=True),
    "joints": Key(Numbers("m", (2,)), "[[x, y], [x, y]]: where each brace meets the beam, relative to the apex",
                  default=[[0.0, 0.0], [0.0, 0.0]]),
})


class InvertedVBrace2d(ThreeActuators2d):
    kind = "inverted-v-brace"
    CONFIG = Schema("setup 'inverted-v-brace'", "The apex of an inverted-V brace under a three-actuator loading "
                    "beam (ESInvertedVBrace2d).", {
                        "lengths": Key(LENGTHS, "[La1, La2, La3] at rest", required=True),
                        "half_span": Key(Number("m", 0, open_minimum=True), "the vertical actuators either side of "
                                         "the apex", required=True),
                        "side": SIDE,
                        "braces": Key(Table(BRACES), "forces from the braces' load cells (Fx, Fy, M at each foot) "
                                      "instead of the actuators'"),
                        **OPTIONS})

    feet: np.ndarray | None = None
    joints: np.ndarray | None = None

    @property
    def cells(self) -> int:
        """Three actuator load cells, or six brace readings (Fx, Fy, M per brace)."""
        return self.actuators if self.feet is None else 6

    @property
    def actuator_cells(self) -> bool:
        return self.feet is None

    def braces(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(the braces' lengths (m), their unit vectors foot -> joint (2 x 2), d length / d q (2 x 3)) at ``q``."""
        full = self._full_dofs(np.asarray(q, float))
        rest = np.zeros(2)
        lengths, gradient = link_kinematics(self.joints, self.feet, rest, self.controlled, full)
        theta = full[2]
        turn = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
        vectors = full[:2] + self.joints @ turn.T - self.feet
        return lengths, vectors / lengths[:, None], gradient

    def cell_jacobian(self, q: np.ndarray) -> np.ndarray:
        if self.feet is None:
            return self.jacobian(q)
        _, directions, gradient = self.braces(q)
        rows = np.zeros((6, len(self.dofs)))
        for i in range(2):
            rows[3 * i:3 * i + 2] = np.outer(directions[i], gradient[i])  # (Fx, Fy) . e_i  works through d l_i
        return rows

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> InvertedVBrace2d:
        """``lengths`` [La1, La2, La3] (m), ``half_span`` (m), optional ``side``, ``braces`` and the rigid-body
        options."""
        lengths = numbers(table, "lengths", cls.kind, 3, positive=True)
        half = numbers(table, "half_span", cls.kind, 1, positive=True)[0]
        setup = configured(cls(tuple(lengths), (half, half), side_sign(table, cls.kind)), table)
        if "braces" in table:
            braces = table["braces"]
            feet = np.asarray(braces["feet"], float)
            joints = np.asarray(braces.get("joints", [[0.0, 0.0], [0.0, 0.0]]), float)
            if feet.shape != (2, 2) or joints.shape != (2, 2):
                raise SetupError(f"setup {cls.kind!r}: braces.feet and braces.joints are two points [x, y] (m) each")
            if np.any(np.linalg.norm(joints - feet, axis=1) == 0):
                raise SetupError(f"setup {cls.kind!r}: braces: a brace's foot is on its joint")
            setup.feet, setup.joints = feet, joints
        return setup
