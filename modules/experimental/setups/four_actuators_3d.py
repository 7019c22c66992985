"""``four-actuators-3d``: two translations and two rotations (ux, uy, rx, ry) of a column's loading head by four
horizontal actuators, two along x and two along y at different heights (after OpenFresco's ESFourActuators3d,
without its spreader beam and rods).

Actuators 1 and 2 push along +x at ``heights`` h1, h2 above the control point, actuators 3 and 4
along +y at h3, h4 (reactions at -x, -y, ``lengths`` away at rest).  uz and rz are held at zero;
rotations are the rotation vector's components.  Exact kinematics; the inverse is Newton's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.config_schema import Key, Numbers, Schema
from hybridsim.modules.experimental.setups.base import SetupError, numbers
from hybridsim.modules.experimental.setups.rigid import LENGTHS, OPTIONS, RigidBodySetup, configured


class FourActuators3d(RigidBodySetup):
    kind = "four-actuators-3d"
    CONFIG = Schema("setup 'four-actuators-3d'", "ux, uy, rx, ry of a loading head: two actuators along x, two "
                    "along y.", {"lengths": Key(LENGTHS, "the four actuators' lengths at rest", required=True),
                                 "heights": Key(Numbers("m"), "their heights above the control point", required=True),
                                 **OPTIONS})

    def __init__(self, lengths: tuple[float, ...], heights: tuple[float, ...]) -> None:
        (l1, l2, l3, l4), (h1, h2, h3, h4) = lengths, heights
        super().__init__(attachments=[[0, 0, h1], [0, 0, h2], [0, 0, h3], [0, 0, h4]],
                         bases=[[-l1, 0, h1], [-l2, 0, h2], [0, -l3, h3], [0, -l4, h4]],
                         controlled=(0, 1, 3, 4), names=("ux", "uy", "rx", "ry"))

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> FourActuators3d:
        """``lengths`` (4, m), ``heights`` (4, m; h1 != h2 and h3 != h4) and the rigid-body options."""
        lengths = numbers(table, "lengths", cls.kind, 4, positive=True)
        heights = numbers(table, "heights", cls.kind, 4)
        if heights[0] == heights[1] or heights[2] == heights[3]:
            raise SetupError(f"setup {cls.kind!r}: heights: each pair of actuators (1, 2 along x; 3, 4 along y) needs "
                             "two different heights, or the rotations cannot be told apart")
        return configured(cls(tuple(lengths), tuple(heights)), table)
