"""``four-actuators-3d``: two translations and two rotations (ux, uy, rx, ry) of a column's loading head by four
horizontal actuators, two along x and two along y at different heights, with the spreader beam and rods of
OpenFresco's ESFourActuators3d.

Actuators 1 and 2 push along the rig's x axis at ``heights`` h1, h2 above the control point, actuators 3
and 4 along its y axis at h3, h4; each is pinned to the head through a rigid link ``links`` a_i long along
its own axis (its clevis a_i from the column's axis, toward its reaction) and is ``lengths`` L_i long at
rest, its reaction beyond.  The rig's x axis is ``angle`` degrees from the model's x about z (OpenFresco's
phiLocX; its actuators 1, 2, 3, 4 are this kind's 1, 3, 2, 4).  uz and rz are held at zero; the rotation
is the rotation vector (rx, ry), OpenFresco's rotation of angle |phi| about the horizontal axis phi.

``rods``: the axial load comes from a spreader beam on the head, pulled down by two rods (north, south)
pinned to the beam at ``pins`` (relative to the control point at rest) and to the floor straight below,
``lengths`` pin to pin.  The rods are not commanded (their jacks hold a force); as the head moves they tilt,
and their load cells (tension, N) enter the force map after the actuators' four: DOF forces =
J_actuators^T f - J_rods^T T, J_rods = d(rod length)/dq (a rod in tension pulls the head toward its floor pin).
OpenFresco reads the same six forces (rods first) and adds their P-delta shear and moments.

Exact kinematics; the inverse is Newton's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Key, Number, Numbers, Schema, Table
from hybridsim.modules.experimental.setups.base import SetupError, numbers
from hybridsim.modules.experimental.setups.rigid import (LENGTHS, OPTIONS, RigidBodySetup, link_kinematics,
                                                         configured)

RODS = Schema("rods", "The spreader beam's two rods (ESFourActuators3d): pinned to the beam and to the floor below.", {
    "pins": Key(Numbers("m", (2,)), "[[x, y, z], [x, y, z]]: the rods' pins on the beam, relative to the control "
                "point at rest (model axes)", required=True),
    "lengths": Key(LENGTHS, "[north, south]: pin to pin", required=True),
})


class FourActuators3d(RigidBodySetup):
    kind = "four-actuators-3d"
    CONFIG = Schema("setup 'four-actuators-3d'", "ux, uy, rx, ry of a loading head: two actuators along x, two "
                    "along y, optionally the spreader beam's rods (ESFourActuators3d).", {
                        "lengths": Key(LENGTHS, "the four actuators' lengths at rest", required=True),
                        "heights": Key(Numbers("m"), "their heights above the control point", required=True),
                        "links": Key(Numbers("m"), "a_i: each actuator's clevis this far from the column's axis, "
                                     "toward its reaction", default=[0.0, 0.0, 0.0, 0.0]),
                        "angle": Key(Number("deg"), "the rig's x axis from the model's, about z (phiLocX)",
                                     default=0.0),
                        "rods": Key(Table(RODS), "the spreader beam's rods; their load cells follow the actuators'"),
                        **OPTIONS})

    def __init__(self, lengths: tuple[float, ...], heights: tuple[float, ...],
                 links: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0), angle_deg: float = 0.0,
                 rod_pins: np.ndarray | None = None, rod_lengths: tuple[float, float] | None = None) -> None:
        c, s = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
        axes = [np.array([c, s, 0.0])] * 2 + [np.array([-s, c, 0.0])] * 2
        attachments = [np.array([0.0, 0.0, h]) - a * e for h, a, e in zip(heights, links, axes)]
        bases = [p - length * e for p, length, e in zip(attachments, lengths, axes)]
        super().__init__(attachments=attachments, bases=bases, controlled=(0, 1, 3, 4), names=("ux", "uy", "rx", "ry"))
        self.rod_pins = None if rod_pins is None else np.asarray(rod_pins, float)
        if self.rod_pins is not None:
            self.rod_floor = self.rod_pins - np.outer(rod_lengths, [0.0, 0.0, 1.0])
            self.rod_lengths = np.asarray(rod_lengths, float)

    @property
    def cells(self) -> int:
        """Four actuators' load cells, and the two rods' with a spreader beam."""
        return self.actuators + (0 if self.rod_pins is None else 2)

    def rods(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the rods' lengths minus their lengths at rest (m), d length / d q (2 x 4)) at ``q``."""
        return link_kinematics(self.rod_pins, self.rod_floor, self.rod_lengths, self.controlled,
                           self._full_dofs(np.asarray(q, float)))

    def cell_jacobian(self, q: np.ndarray) -> np.ndarray:
        jacobian = self.jacobian(q)
        return jacobian if self.rod_pins is None else np.vstack([jacobian, -self.rods(q)[1]])

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> FourActuators3d:
        """``lengths`` (4, m), ``heights`` (4, m; h1 != h2 and h3 != h4), optional ``links`` (4, m), ``angle``
        (deg), ``rods`` and the rigid-body options."""
        lengths = numbers(table, "lengths", cls.kind, 4, positive=True)
        heights = numbers(table, "heights", cls.kind, 4)
        if heights[0] == heights[1] or heights[2] == heights[3]:
            raise SetupError(f"setup {cls.kind!r}: heights: each pair of actuators (1, 2 along x; 3, 4 along y) needs "
                             "two different heights, or the rotations cannot be told apart")
        links = numbers(table, "links", cls.kind, 4) if "links" in table else np.zeros(4)
        angle = numbers(table, "angle", cls.kind, 1)[0] if "angle" in table else 0.0
        pins, rod_lengths = None, None
        if "rods" in table:
            rods = table["rods"]
            pins = np.asarray(rods["pins"], float)
            if pins.shape != (2, 3):
                raise SetupError(f"setup {cls.kind!r}: rods.pins must be two points [x, y, z] (m), got {pins.shape}")
            rod_lengths = tuple(numbers(rods, "lengths", cls.kind, 2, positive=True))
        return configured(cls(tuple(lengths), tuple(heights), tuple(links), angle, pins, rod_lengths), table)
