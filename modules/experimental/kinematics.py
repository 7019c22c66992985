"""Transfer-system kinematics of the maRTHS coupler: frame (x, theta) <-> two actuator strokes (§7).

Both actuators act on one rigid coupler at the interface node.  Actuator i is
attached at lever arm d_i from the node, at angle alpha_i, so a rotation theta
(frame sign, counter-clockwise positive) lengthens it by
d_i (cos(theta + alpha_i) - cos alpha_i) on top of the lateral motion x.
Lengths in m, angles in rad.  The functions take floats or numpy arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hybridsim.modules.config_schema import Key, Number, Numbers, Schema
from hybridsim.modules.kernels import kernel

CONFIG = Schema("coupler", "The maRTHS coupler: two actuators attached to one node (x, theta).", {
    "offset": Key(Number("m"), "horizontal offset x_v of the attachment points", required=True),
    "heights": Key(Numbers("m", (1,)), "heights y_v of the two attachment points", required=True),
    "angles_deg": Key(Numbers("deg", (1,)), "the two actuators' angles", required=True),
})


@dataclass(frozen=True)
class Coupler:
    """Lever arms d1, d2 (m) and attachment angles alpha1, alpha2 (rad) of the two actuators."""

    arms: tuple[float, float]
    angles: tuple[float, float]

    @classmethod
    def from_attachments(cls, offset: float, heights: tuple[float, float],
                         angles_deg: tuple[float, float]) -> "Coupler":
        """Arms from the attachment points (x_v = ``offset``, y_v,i = ``heights``, m); angles as given (deg).

        The benchmark uses its rounded angles (+-25.4633 deg) rather than
        atan(y_v / x_v); the two agree on every J to 4 decimals.
        """
        arms = (math.hypot(offset, heights[0]), math.hypot(offset, heights[1]))
        return cls(arms, (math.radians(angles_deg[0]), math.radians(angles_deg[1])))

    def strokes(self, x, theta) -> np.ndarray:
        """Actuator strokes [a1, a2] (m) that put the node at x (m) and theta (rad): the targets
        (:func:`coupler_strokes`)."""
        return np.array(coupler_strokes(*self.arms, *self.angles, x, theta))

    def frame(self, stroke1, stroke2) -> tuple:
        """(x, theta) estimated from measured strokes (m), as the benchmark's block computes it.

        s = (a1 - a2) / (2 d2 sin alpha2), theta = asin(s) (exact inverse),
        x = a1 - d1 (cos(alpha1 + s) - cos alpha1): s, not theta, inside the
        cosine, which leaves an O(theta^3) error in x (2e-8 m at 0.01 rad).
        """
        return coupler_frame(*self.arms, *self.angles, stroke1, stroke2)


@kernel
def coupler_strokes(d1: float, d2: float, a1: float, a2: float, x, theta) -> tuple:
    """s_i = x + d_i (cos(theta + alpha_i) - cos alpha_i) (m) for floats or arrays x, theta (:meth:`Coupler.strokes`)."""
    return x + d1 * (np.cos(theta + a1) - np.cos(a1)), x + d2 * (np.cos(theta + a2) - np.cos(a2))


@kernel
def coupler_frame(d1: float, d2: float, a1: float, a2: float, stroke1, stroke2) -> tuple:
    """The benchmark's (x, theta) of two measured strokes (:meth:`Coupler.frame`)."""
    s = (stroke1 - stroke2) / (2 * d2 * np.sin(a2))
    return stroke1 - d1 * (np.cos(a1 + s) - np.cos(a1)), np.arcsin(s)
