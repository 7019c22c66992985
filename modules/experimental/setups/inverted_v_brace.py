"""``inverted-v-brace``: the apex of an inverted-V brace (x, y, theta) under a loading beam driven by one
horizontal and two vertical actuators symmetric about the apex (OpenFresco's ESInvertedVBrace2d
kinematics: the three-actuator beam with its vertical actuators ``half_span`` either side)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.config_schema import Key, Number, Schema
from hybridsim.modules.experimental.setups.base import numbers
from hybridsim.modules.experimental.setups.rigid import LENGTHS, OPTIONS, SIDE, configured, side_sign
from hybridsim.modules.experimental.setups.three_actuators_2d import ThreeActuators2d


class InvertedVBrace2d(ThreeActuators2d):
    kind = "inverted-v-brace"
    CONFIG = Schema("setup 'inverted-v-brace'", "The apex of an inverted-V brace under a three-actuator loading "
                    "beam (ESInvertedVBrace2d).", {
                        "lengths": Key(LENGTHS, "[La1, La2, La3] at rest", required=True),
                        "half_span": Key(Number("m", 0, open_minimum=True), "the vertical actuators either side of "
                                         "the apex", required=True),
                        "side": SIDE, **OPTIONS})

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> InvertedVBrace2d:
        """``lengths`` [La1, La2, La3] (m), ``half_span`` (m), optional ``side`` and the rigid-body options."""
        lengths = numbers(table, "lengths", cls.kind, 3, positive=True)
        half = numbers(table, "half_span", cls.kind, 1, positive=True)[0]
        return configured(cls(tuple(lengths), (half, half), side_sign(table, cls.kind)), table)
