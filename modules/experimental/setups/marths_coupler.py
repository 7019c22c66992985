"""``marths-coupler``: the maRTHS benchmark's coupler, frame (x, theta) <-> two actuator strokes (§7).

The forward map is the benchmark's: s_i = x + d_i (cos(theta + alpha_i) - cos alpha_i)
(:class:`~hybridsim.modules.experimental.kinematics.Coupler`).  ``inverse = "exact"`` (the default)
inverts it exactly: s1 - s2 + c0 = A cos theta + B sin theta with A = d1 cos a1 - d2 cos a2,
B = d2 sin a2 - d1 sin a1 and c0 = A, solved for the root nearest zero, then x from s1.
``inverse = "benchmark"`` keeps the benchmark's estimate (exact in theta only when the coupler
is symmetric, O(theta^3) in x), which the maRTHS J values are computed with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.wire.contract import Dof
from hybridsim.modules.experimental.kinematics import Coupler
from hybridsim.modules.config_schema import Key, Number, Numbers, Schema, Text
from hybridsim.modules.experimental.setups.base import Setup, SetupError, UnreachablePose, numbers

INVERSES = ("exact", "benchmark")


class MarthsCoupler(Setup):
    kind = "marths-coupler"
    actuators = 2
    dofs = (Dof("x"), Dof("theta", "rotation"))
    CONFIG = Schema("setup 'marths-coupler'", "The maRTHS benchmark's coupler.", {
        "offset": Key(Number("m"), "x_v of the attachments", required=True),
        "heights": Key(Numbers("m"), "[y_v1, y_v2]", required=True),
        "angles_deg": Key(Numbers("deg"), "[alpha1, alpha2]", required=True),
        "inverse": Key(Text(INVERSES), "exact, or the benchmark's estimate", default="exact")})

    def __init__(self, coupler: Coupler, inverse: str = "exact") -> None:
        super().__init__()
        if inverse not in INVERSES:
            raise SetupError(f"setup {self.kind!r}: inverse must be one of {', '.join(INVERSES)}, not {inverse!r}")
        self.coupler = coupler
        self.inverse = inverse
        (d1, d2), (a1, a2) = coupler.arms, coupler.angles
        self._a = d1 * np.cos(a1) - d2 * np.cos(a2)
        self._b = d2 * np.sin(a2) - d1 * np.sin(a1)

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> MarthsCoupler:
        """``offset`` (m), ``heights`` [y1, y2] (m), ``angles_deg`` [a1, a2], optional ``inverse``."""
        heights = numbers(table, "heights", cls.kind, 2)
        angles = numbers(table, "angles_deg", cls.kind, 2)
        offset = numbers(table, "offset", cls.kind, 1)[0]
        return cls(Coupler.from_attachments(offset, (heights[0], heights[1]), (angles[0], angles[1])),
                   str(table.get("inverse", "exact")))

    def strokes(self, q: np.ndarray) -> np.ndarray:
        return self.coupler.strokes(q[0], q[1])

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        (d1, d2), (a1, a2) = self.coupler.arms, self.coupler.angles
        return np.array([[1.0, -d1 * np.sin(q[1] + a1)], [1.0, -d2 * np.sin(q[1] + a2)]])

    def pose(self, strokes: np.ndarray) -> np.ndarray:
        s1, s2 = float(strokes[0]), float(strokes[1])
        self.iterations = 0
        if self.inverse == "benchmark":
            return np.array(self.coupler.frame(s1, s2), float)
        rho, phi = np.hypot(self._a, self._b), np.arctan2(self._b, self._a)
        ratio = (s1 - s2 + self._a) / rho
        if not abs(ratio) <= 1.0:
            raise UnreachablePose(f"setup {self.kind!r}: no rotation gives the stroke difference "
                                  f"{(s1 - s2) * 1e3:.4g} mm (at most {2e3 * rho:.4g} mm)")
        roots = phi + np.array([1.0, -1.0]) * np.arccos(ratio)
        roots = (roots + np.pi) % (2 * np.pi) - np.pi
        theta = float(roots[np.argmin(np.abs(roots))])
        (d1, _), (a1, _) = self.coupler.arms, self.coupler.angles
        return np.array([s1 - d1 * (np.cos(theta + a1) - np.cos(a1)), theta])


def coupler_setup(coupler: Mapping[str, Any]) -> dict[str, Any]:
    """The setup table of a site's maRTHS ``coupler`` table: this setup with the benchmark's inverse estimate."""
    return {"kind": "marths-coupler", "inverse": "benchmark", **coupler}
