"""``two-actuators-2d``: translation x and rotation theta of a specimen's top by two horizontal actuators
(OpenFresco's ESTwoActuators2d, nonlinear geometry).

Actuator 1 (length ``lengths[0]`` at rest) is attached at the control point, actuator 2
(``lengths[1]``) on a rigid arm ``height`` above it; both horizontal at rest with their
reactions on ``side`` (left: they push +x).  The vertical displacement is held at zero.
The inverse is closed form: x = +-s1, and with w = +-x + La2, c = La2 + s2 the second
actuator's length gives  w^2 + 2 L^2 - c^2 = 2 L (+-w sin theta + L cos theta).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Key, Number, Schema
from hybridsim.modules.experimental.setups.base import UnreachablePose, numbers
from hybridsim.modules.experimental.setups.rigid import (LENGTHS, OPTIONS, SIDE, RigidBodySetup, configured,
                                                         side_sign)


class TwoActuators2d(RigidBodySetup):
    kind = "two-actuators-2d"
    CONFIG = Schema("setup 'two-actuators-2d'", "x and theta by two horizontal actuators (ESTwoActuators2d).", {
        "lengths": Key(LENGTHS, "[La1, La2]: the actuators' lengths at rest", required=True),
        "height": Key(Number("m", 0, open_minimum=True), "L: actuator 2 above the control point", required=True),
        "side": SIDE, **OPTIONS})

    def __init__(self, lengths: tuple[float, float], height: float, sign: float = 1.0) -> None:
        self.lengths = tuple(float(v) for v in lengths)
        self.height = float(height)
        self.sign = float(sign)
        la1, la2 = self.lengths
        super().__init__(attachments=[[0.0, 0.0], [0.0, height]],
                         bases=[[-sign * la1, 0.0], [-sign * la2, height]], controlled=(0, 2), names=("x", "theta"))

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> TwoActuators2d:
        """``lengths`` [La1, La2] (m), ``height`` L (m), optional ``side`` and the rigid-body options."""
        lengths = numbers(table, "lengths", cls.kind, 2, positive=True)
        height = numbers(table, "height", cls.kind, 1, positive=True)[0]
        return configured(cls((lengths[0], lengths[1]), height, side_sign(table, cls.kind)), table)

    def pose(self, strokes: np.ndarray) -> np.ndarray:
        strokes = np.asarray(strokes, float)
        self.check_range(strokes)
        sign, (_, la2), h = self.sign, self.lengths, self.height
        x = sign * strokes[0]
        w, c = sign * x + la2, la2 + strokes[1]
        rho, phi = np.hypot(w, h), np.arctan2(sign * w, h)
        ratio = (w * w + 2 * h * h - c * c) / (2 * h * rho)
        if not (abs(ratio) <= 1.0 and w > 0 and c > 0):
            raise UnreachablePose(f"setup {self.kind!r}: no rotation gives actuator 2 the stroke "
                                  f"{strokes[1] * 1e3:.4g} mm with actuator 1 at {strokes[0] * 1e3:.4g} mm")
        self.iterations = 0
        return np.array([x, phi - sign * np.arccos(ratio)])
