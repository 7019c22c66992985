"""A rigid loading body driven by two-point actuators, in the plane or in space: exact kinematics both ways.

The body's control point is at the origin at rest.  Its motion is the
translation u and the rotation R of the body: in the plane u = (ux, uy) and
R = R(theta) about z; in space u = (ux, uy, uz) and R = exp([r]x), the rotation
vector r = (rx, ry, rz) (angle |r| about r / |r|).  Actuator i joins a fixed
reaction point b_i to the body point a_i (both given at rest, relative to the
control point), so its stroke is

    s_i = |u + R a_i - b_i| - |a_i - b_i|

and its row of the Jacobian is e_i . d(u + R a_i)/dq with e_i the unit vector
from b_i to the body point.  A setup controls some of the body's DOFs; the
others are held at zero (the rig or the specimen restrains them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hybridsim.modules.kernels import kernel
from hybridsim.wire.contract import Dof
from hybridsim.modules.config_schema import Integer, Key, Names, Number, Numbers, Text
from hybridsim.modules.experimental.setups.base import (MAX_ITERATIONS, TOLERANCE, Setup, SetupError, UnreachablePose,
                                                        numbers)

PLANE_DOFS = (Dof("ux"), Dof("uy"), Dof("rz", "rotation"))
SPACE_DOFS = (Dof("ux"), Dof("uy"), Dof("uz"), Dof("rx", "rotation"), Dof("ry", "rotation"), Dof("rz", "rotation"))


@kernel
def _sinc_terms(angle: float) -> tuple[float, float, float]:
    """(sin a / a, (1 - cos a) / a^2, (a - sin a) / a^3), by their series below 1e-4 rad."""
    if angle < 1e-4:
        a2 = angle * angle
        return (1.0 - a2 / 6.0 + a2 * a2 / 120.0, 0.5 - a2 / 24.0 + a2 * a2 / 720.0,
                1.0 / 6.0 - a2 / 120.0 + a2 * a2 / 5040.0)
    return (math.sin(angle) / angle, (1.0 - math.cos(angle)) / angle**2, (angle - math.sin(angle)) / angle**3)


@kernel
def _rodrigues(r: np.ndarray, first: float, second: float) -> np.ndarray:
    """I + first [r]x + second [r]x^2 (3 x 3)."""
    k = np.zeros((3, 3))
    k[0, 1], k[0, 2], k[1, 0], k[1, 2], k[2, 0], k[2, 1] = -r[2], r[1], r[2], -r[0], -r[1], r[0]
    out = np.eye(3) + first * k
    for i in range(3):
        for j in range(3):
            for m in range(3):
                out[i, j] += second * k[i, m] * k[m, j]
    return out


@kernel
def rotation(r: np.ndarray) -> np.ndarray:
    """R = exp([r]x) (Rodrigues) of a rotation vector r (rad), 3-D; in the plane r is theta (a 1-vector)."""
    if r.size == 1:
        c, s = math.cos(r[0]), math.sin(r[0])
        out = np.empty((2, 2))
        out[0, 0], out[0, 1], out[1, 0], out[1, 1] = c, -s, s, c
        return out
    sine, versine, _ = _sinc_terms(math.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]))
    return _rodrigues(r, sine, versine)


@kernel
def left_jacobian(r: np.ndarray) -> np.ndarray:
    """J_l(r) of SO(3): d(R a) = (J_l dr) x (R a) for the rotation vector r."""
    _, versine, cubic = _sinc_terms(math.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]))
    return _rodrigues(r, versine, cubic)


@kernel
def link_kinematics(attachments: np.ndarray, bases: np.ndarray, rest: np.ndarray, controlled: np.ndarray,
                full: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(strokes, d strokes / d q over the ``controlled`` DOFs) at the body's ``full`` DOF vector."""
    n, d = attachments.shape
    u, r = full[:d], full[d:]
    turn = rotation(r)
    jl = left_jacobian(r) if d == 3 else np.eye(1)
    strokes = np.empty(n)
    rows = np.zeros((n, full.size))
    for i in range(n):
        rotated = turn @ attachments[i]
        vector = u + rotated - bases[i]
        length = math.sqrt(np.sum(vector * vector))
        e = vector / length
        strokes[i] = length - rest[i]
        rows[i, :d] = e
        if d == 2:
            rows[i, 2] = e[1] * rotated[0] - e[0] * rotated[1]  # e . d(R a)/d theta
        else:  # d(R a)/dr = -[R a]x J_l  ->  e . d(R a)/dr = (R a x e) . J_l
            moment = np.array([rotated[1] * e[2] - rotated[2] * e[1], rotated[2] * e[0] - rotated[0] * e[2],
                               rotated[0] * e[1] - rotated[1] * e[0]])
            rows[i, 3:] = moment @ jl
    jacobian = np.empty((n, controlled.size))
    for j in range(controlled.size):
        jacobian[:, j] = rows[:, controlled[j]]
    return strokes, jacobian


class RigidBodySetup(Setup):
    """Actuators from ``bases`` to ``attachments`` (actuators x 2 or 3, m, at rest) on one rigid body;
    ``controlled`` picks the body's DOFs that are the setup's (indices into ux, uy, rz in the plane or
    ux, uy, uz, rx, ry, rz in space); ``stroke_range`` (actuators x 2: min, max, m) bounds each stroke."""

    def __init__(self, attachments: Sequence[Sequence[float]], bases: Sequence[Sequence[float]],
                 controlled: Sequence[int], names: Sequence[str] | None = None,
                 stroke_range: Sequence[Sequence[float]] | None = None) -> None:
        super().__init__()
        self.attachments = np.asarray(attachments, float)
        self.bases = np.asarray(bases, float)
        dim = self.attachments.shape[1]
        if dim not in (2, 3) or self.bases.shape != self.attachments.shape:
            raise SetupError(f"setup {self.kind!r}: attachments and bases: one point per actuator, both 2-D or both 3-D")
        self.dimension = dim
        body = PLANE_DOFS if dim == 2 else SPACE_DOFS
        self.controlled = np.asarray(controlled, int)
        chosen = [body[i] for i in self.controlled]
        self.dofs = tuple(chosen if names is None else (Dof(n, d.kind) for n, d in zip(names, chosen)))
        self.actuators = self.attachments.shape[0]
        self.rest_lengths = np.linalg.norm(self.attachments - self.bases, axis=1)
        if not np.all(self.rest_lengths > 0):
            raise SetupError(f"setup {self.kind!r}: every actuator needs a positive length at rest (its base apart from its attachment)")
        self.stroke_range = (np.tile([-np.inf, np.inf], (self.actuators, 1)) if stroke_range is None
                             else np.asarray(stroke_range, float))
        if self.stroke_range.shape != (self.actuators, 2) or np.any(self.stroke_range[:, 0] >= self.stroke_range[:, 1]):
            raise SetupError(f"setup {self.kind!r}: stroke_range: one [min, max] pair (m, min < max) per actuator ({self.actuators})")
        self._full = np.zeros(len(body))

    def _full_dofs(self, q: np.ndarray) -> np.ndarray:
        full = self._full.copy()
        full[self.controlled] = q
        return full

    def strokes(self, q: np.ndarray) -> np.ndarray:
        return self.strokes_and_jacobian(q)[0]

    def checked_strokes(self, q: np.ndarray) -> np.ndarray:
        """:meth:`strokes`, refused when one is beyond its actuator's ``stroke_range``."""
        strokes = self.strokes(q)
        self.check_range(strokes)
        return strokes

    def check_range(self, strokes: np.ndarray) -> None:
        low, high = self.stroke_range.T
        outside = np.flatnonzero((strokes < low) | (strokes > high))
        if outside.size:
            i = int(outside[0])
            raise UnreachablePose(f"setup {self.kind!r}: actuator {i + 1} would need a stroke of "
                                  f"{strokes[i] * 1e3:.4g} mm, beyond its range [{low[i] * 1e3:.4g}, "
                                  f"{high[i] * 1e3:.4g}] mm")

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        return self.strokes_and_jacobian(q)[1]

    def strokes_and_jacobian(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return link_kinematics(self.attachments, self.bases, self.rest_lengths, self.controlled,
                           self._full_dofs(np.asarray(q, float)))

    def pose(self, strokes: np.ndarray) -> np.ndarray:
        strokes = np.asarray(strokes, float)
        self.check_range(strokes)
        return self.newton(strokes)


OPTIONS = {
    "dofs": Key(Names(), "the DOFs' names (default: the kind's)"),
    "stroke_range": Key(Numbers("m", (2,)), "[min, max] stroke of each actuator, min < 0 < max (absent: unbounded)"),
    "tolerance": Key(Number("m, rad", 0, open_minimum=True), "last Newton correction of the inverse",
                     default=TOLERANCE),
    "max_iterations": Key(Integer(1), "Newton iterations of the inverse before a refusal", default=MAX_ITERATIONS),
}
"""keys every rigid-body kind takes besides its geometry"""
SIDE = Key(Text(("left", "right")), "where the reactions are (left: the actuators push +x)", default="left")
LENGTHS = Numbers("m", (1,), Number(minimum=0, open_minimum=True))


def configured(setup: RigidBodySetup, table: Mapping[str, Any]) -> RigidBodySetup:
    """``setup`` with the optional keys of its table: ``dofs`` (names), ``stroke_range`` ([min, max] m per
    actuator), ``tolerance`` (m, rad) and ``max_iterations`` of the Newton inverse."""
    kind = setup.kind
    if "dofs" in table:
        names = table["dofs"]
        if not isinstance(names, list) or len(names) != len(setup.dofs) or not all(isinstance(n, str) for n in names):
            raise SetupError(f"setup {kind!r}: dofs must name its {len(setup.dofs)} DOFs "
                             f"(default {[d.name for d in setup.dofs]})")
        setup.dofs = tuple(Dof(n, d.kind) for n, d in zip(names, setup.dofs))
    if "stroke_range" in table:
        ranges = numbers({"r": np.ravel(np.asarray(table["stroke_range"], float))}, "r", kind, 2 * setup.actuators)
        ranges = ranges.reshape(setup.actuators, 2)
        if np.any(ranges[:, 0] >= 0) or np.any(ranges[:, 1] <= 0):
            raise SetupError(f"setup {kind!r}: stroke_range gives [min, max] (m) per actuator with min < 0 < max")
        setup.stroke_range = ranges
    if "tolerance" in table:
        setup.tolerance = float(numbers(table, "tolerance", kind, 1, positive=True)[0])
    if "max_iterations" in table:
        count = table["max_iterations"]
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise SetupError(f"setup {kind!r}: max_iterations must be a whole number >= 1, not {count!r}")
        setup.max_iterations = count
    return setup


def side_sign(table: Mapping[str, Any], kind: str) -> float:
    """+1 for ``side = "left"`` (the default: reactions on the -x side, actuators push +x), -1 for "right"."""
    side = table.get("side", "left")
    if side not in ("left", "right"):
        raise SetupError(f"setup {kind!r}: side must be 'left' or 'right' (where the reactions are), not {side!r}")
    return 1.0 if side == "left" else -1.0
