"""``three-actuators-2d``: x, y and theta of a rigid loading beam driven by one horizontal and two vertical
actuators (OpenFresco's ESThreeActuators2d; with ``joint_offsets``, ESThreeActuatorsJntOff2d).

The beam runs along x through the control point.  The vertical actuators (lengths La2, La3
at rest) are attached ``spacing`` = [L1, L2] to the left and right of the control point,
with their reactions below (they push +y); the horizontal actuator (La1) is attached at the
joint of the vertical actuator on its ``side`` (reaction beyond it: left pushes +x).  Joint
offsets move the joints off the beam axis: ``joint_offsets = {horizontal = e, vertical =
[e1, e2]}`` puts the horizontal actuator's joint e farther out along the beam and the
vertical actuators' joints e1, e2 below its axis.  Exact kinematics; the inverse is Newton's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.config_schema import Key, Number, Numbers, Schema, Table
from hybridsim.modules.experimental.setups.base import numbers
from hybridsim.modules.experimental.setups.rigid import (LENGTHS, OPTIONS, SIDE, RigidBodySetup, configured,
                                                         side_sign)

JOINT_OFFSETS = Schema("joint offsets", "Where the joints sit off the beam's axis (ESThreeActuatorsJntOff2d).", {
    "horizontal": Key(Number("m"), "the horizontal actuator's joint this far beyond the vertical one's", default=0.0),
    "vertical": Key(Numbers("m"), "[e1, e2]: the vertical actuators' joints below the beam's axis",
                    default=[0.0, 0.0])})


class ThreeActuators2d(RigidBodySetup):
    kind = "three-actuators-2d"
    CONFIG = Schema("setup 'three-actuators-2d'", "x, y, theta of a loading beam: one horizontal and two "
                    "vertical actuators (ESThreeActuators2d, with joint offsets ESThreeActuatorsJntOff2d).", {
                        "lengths": Key(LENGTHS, "[La1, La2, La3]: horizontal, left and right vertical at rest",
                                       required=True),
                        "spacing": Key(LENGTHS, "[L1, L2]: the vertical actuators left and right of the control "
                                       "point", required=True),
                        "side": SIDE, "joint_offsets": Key(Table(JOINT_OFFSETS), "joints off the beam's axis"),
                        **OPTIONS})

    def __init__(self, lengths: tuple[float, float, float], spacing: tuple[float, float], sign: float = 1.0,
                 horizontal_offset: float = 0.0, vertical_offsets: tuple[float, float] = (0.0, 0.0)) -> None:
        la1, la2, la3 = lengths
        left, right = spacing
        e1, e2 = vertical_offsets
        joint = -left - horizontal_offset if sign > 0 else right + horizontal_offset
        super().__init__(attachments=[[joint, 0.0], [-left, -e1], [right, -e2]],
                         bases=[[joint - sign * la1, 0.0], [-left, -e1 - la2], [right, -e2 - la3]],
                         controlled=(0, 1, 2), names=("x", "y", "theta"))

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> ThreeActuators2d:
        """``lengths`` [La1, La2, La3], ``spacing`` [L1, L2] (m); optional ``side``, ``joint_offsets`` and the
        rigid-body options."""
        lengths = numbers(table, "lengths", cls.kind, 3, positive=True)
        spacing = numbers(table, "spacing", cls.kind, 2, positive=True)
        offsets = table.get("joint_offsets", {})
        horizontal = numbers(offsets, "horizontal", cls.kind, 1)[0] if "horizontal" in offsets else 0.0
        vertical = numbers(offsets, "vertical", cls.kind, 2) if "vertical" in offsets else (0.0, 0.0)
        return configured(cls(tuple(lengths), tuple(spacing), side_sign(table, cls.kind), horizontal,
                              tuple(vertical)), table)
