"""``inverted-v-brace``: the apex of an inverted-V brace (x, y, theta) under a loading beam driven by one
horizontal and two vertical actuators symmetric about the apex (OpenFresco's ESInvertedVBrace2d
kinematics: the three-actuator beam with its vertical actuators ``half_span`` either side)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.experimental.setups.base import check_keys, numbers
from hybridsim.modules.experimental.setups.rigid import OPTIONS, configured, side_sign
from hybridsim.modules.experimental.setups.three_actuators_2d import ThreeActuators2d


class InvertedVBrace2d(ThreeActuators2d):
    kind = "inverted-v-brace"

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> InvertedVBrace2d:
        """``lengths`` [La1, La2, La3] (m), ``half_span`` (m), optional ``side`` and the rigid-body options."""
        check_keys(table, cls.kind, ("lengths", "half_span"), ("side", *OPTIONS))
        lengths = numbers(table, "lengths", cls.kind, 3, positive=True)
        half = numbers(table, "half_span", cls.kind, 1, positive=True)[0]
        return configured(cls(tuple(lengths), (half, half), side_sign(table, cls.kind)), table)
