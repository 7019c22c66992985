"""A regular plane frame of any size, as an openseespy model and as sparse K and M over the same DOFs.

The mesh: ``lines`` column lines (``lines - 1`` bays of 6 m) by ``stories`` stories of 3.5 m, one elastic
beam-column element (Euler-Bernoulli, OpenSees' ``elasticBeamColumn`` with a ``Linear`` transformation) per
column and per beam, the base fixed, 3 DOFs (x, y, theta) at every joint above it: 3 lines stories DOFs.
Steel, E = 200 GPa; columns A = 0.02 m^2, I = 8e-4 m^4; beams A = 0.01 m^2, I = 4e-4 m^4.  Every joint
carries 10 t in x and y and a rotational inertia of 10 t x (0.5 m)^2 (so every DOF has mass, which the
explicit model-based schemes need).  Joint tags: ``1 + level lines + line`` (level 0 is the base); DOF
names ``j<tag>x``, ``j<tag>y``, ``j<tag>r``.

:func:`matrices` assembles the same frame's K (with the closed-form element stiffness) and M with SciPy, so
OpenSees is an independent oracle for anything integrated over them.  ``part`` keeps the members of a range
of stories (``lower``: stories 1..split, ``upper``: split+1..stories) for hybrid tests: each part's joints
carry the masses of the joints it alone holds, and the shared floor's mass goes to the lower part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

BAY, STORY, E = 6.0, 3.5, 200e9
COLUMN, BEAM = (0.02, 8e-4), (0.01, 4e-4)
"""(A m^2, I m^4) of the columns and the beams"""
JOINT_MASS, RADIUS = 1.0e4, 0.5
"""kg at every joint in x and y; the rotational inertia is JOINT_MASS RADIUS^2 (kg m^2)"""


@dataclass(frozen=True)
class Frame:
    """The mesh of ``lines`` column lines by ``stories`` stories (see the module's docstring)."""

    lines: int
    stories: int

    def __post_init__(self) -> None:
        if self.lines < 2 or self.stories < 1:
            raise ValueError(f"a frame needs at least 2 column lines and 1 story, got {self.lines} x {self.stories}")

    @property
    def ndof(self) -> int:
        return 3 * self.lines * self.stories

    def joint(self, level: int, line: int) -> int:
        return 1 + level * self.lines + line

    def dof_names(self) -> list[str]:
        return [f"j{self.joint(level, line)}{d}" for level in range(1, self.stories + 1)
                for line in range(self.lines) for d in "xyr"]

    def members(self, first_story: int = 1, last_story: int | None = None) -> list[tuple[int, int, tuple[float, float]]]:
        """(joint i, joint j, (A, I)) of the columns and beams of stories first..last."""
        last = self.stories if last_story is None else last_story
        out = []
        for level in range(first_story, last + 1):
            out += [(self.joint(level - 1, k), self.joint(level, k), COLUMN) for k in range(self.lines)]
            out += [(self.joint(level, k), self.joint(level, k + 1), BEAM) for k in range(self.lines - 1)]
        return out

    def position(self, tag: int) -> tuple[float, float]:
        level, line = divmod(tag - 1, self.lines)
        return line * BAY, level * STORY

    def index(self, tag: int) -> int:
        """The first of the joint's three DOFs in :meth:`dof_names`; -1 for a base joint."""
        return 3 * (tag - 1 - self.lines) if tag > self.lines else -1


def _element(xi: tuple[float, float], xj: tuple[float, float], area: float, inertia: float) -> np.ndarray:
    """The 6 x 6 global stiffness of a 2-D Euler-Bernoulli element (closed form, N/m, N, N m)."""
    dx, dy = xj[0] - xi[0], xj[1] - xi[1]
    length = float(np.hypot(dx, dy))
    c, s = dx / length, dy / length
    a, b = E * area / length, E * inertia / length ** 3
    local = np.array([[a, 0, 0, -a, 0, 0],
                      [0, 12 * b, 6 * b * length, 0, -12 * b, 6 * b * length],
                      [0, 6 * b * length, 4 * b * length ** 2, 0, -6 * b * length, 2 * b * length ** 2],
                      [-a, 0, 0, a, 0, 0],
                      [0, -12 * b, -6 * b * length, 0, 12 * b, -6 * b * length],
                      [0, 6 * b * length, 2 * b * length ** 2, 0, -6 * b * length, 4 * b * length ** 2]])
    rotation = np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]])
    t = np.kron(np.eye(2), rotation)
    return t.T @ local @ t


def _stories(frame: Frame, part: str, split: int) -> tuple[int, int]:
    if part == "whole":
        return 1, frame.stories
    if not 1 <= split < frame.stories:
        raise ValueError(f"split must be a story in 1..{frame.stories - 1}, got {split}")
    return {"lower": (1, split), "upper": (split + 1, frame.stories)}[part]


def matrices(frame: Frame, part: str = "whole", split: int = 0) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """K (from the members of ``part``) and the lumped M of its joints, over all of ``frame.dof_names()``."""
    first, last = _stories(frame, part, split)
    rows, cols, values = [], [], []
    for i, j, (area, inertia) in frame.members(first, last):
        k = _element(frame.position(i), frame.position(j), area, inertia)
        index = np.array([frame.index(i) + d if frame.index(i) >= 0 else -1 for d in range(3)]
                         + [frame.index(j) + d for d in range(3)])
        keep = index >= 0
        r, c = np.meshgrid(index[keep], index[keep], indexing="ij")
        rows.append(r.ravel()), cols.append(c.ravel()), values.append(k[np.ix_(keep, keep)].ravel())
    n = frame.ndof
    stiffness = sp.coo_matrix((np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))),
                              shape=(n, n)).tocsr()
    low = first if part != "upper" else first + 1  # the shared floor's mass is the lower part's
    massive = np.zeros(n)
    massive[3 * frame.lines * (low - 1):3 * frame.lines * last] = 1.0
    diagonal = massive * np.tile([JOINT_MASS, JOINT_MASS, JOINT_MASS * RADIUS ** 2], frame.ndof // 3)
    return stiffness, sp.diags(diagonal).tocsr()


def build(ops: Any, lines: int = 10, stories: int = 10, part: str = "whole", split: int = 0) -> None:
    """The frame (or ``part`` of it) in the OpenSees domain: nodes, fixities, masses, elements."""
    frame = Frame(lines, stories)
    first, last = _stories(frame, part, split)
    ops.model("basic", "-ndm", 2, "-ndf", 3)
    low = first if part != "upper" else first + 1
    for level in range(first - 1, last + 1):
        for line in range(lines):
            tag = frame.joint(level, line)
            ops.node(tag, *frame.position(tag))
            if level == 0:
                ops.fix(tag, 1, 1, 1)
            elif level >= low:
                ops.mass(tag, JOINT_MASS, JOINT_MASS, JOINT_MASS * RADIUS ** 2)
    ops.geomTransf("Linear", 1)
    for tag, (i, j, (area, inertia)) in enumerate(frame.members(first, last), start=1):
        ops.element("elasticBeamColumn", tag, i, j, area, E, inertia, 1)


def opensees_response(frame: Frame, integrator: Sequence[object], ground_acceleration: np.ndarray, dt: float,
                      rayleigh: tuple[float, float], record: Sequence[int],
                      algorithm: Sequence[object] = ("Linear", "-initial", "-factorOnce")) -> np.ndarray:
    """Displacements (m, rad; one row per sample of ``ground_acceleration``, m/s^2, the first at rest) at the
    DOFs ``record`` (indices into :meth:`Frame.dof_names`) of the whole frame under OpenSees' own
    ``ops.integrator(*integrator)`` and ``ops.algorithm(*algorithm)`` (the oracle); C = a M + b K."""
    from hybridsim.modules.opensees import domain
    from hybridsim.modules.opensees.lazy import ops

    values = np.asarray(ground_acceleration, float)
    nodes = [(frame.lines + 1 + i // 3, i % 3 + 1) for i in record]
    out = np.zeros((values.size, len(nodes)))
    with domain.held(f"OpenSees {integrator[0]} reference of a {frame.lines} x {frame.stories} frame"):
        ops.wipe()
        build(ops, frame.lines, frame.stories)
        ops.rayleigh(rayleigh[0], 0.0, rayleigh[1], 0.0)
        ops.timeSeries("Path", 1, "-dt", dt, "-values", *values)
        ops.pattern("UniformExcitation", 1, 1, "-accel", 1)
        ops.constraints("Plain")
        ops.numberer("RCM")
        ops.system("UmfPack")
        ops.algorithm(*algorithm)
        ops.integrator(*integrator)
        ops.analysis("Transient")
        for n in range(1, values.size):
            if ops.analyze(1, dt) < 0:
                raise RuntimeError(f"OpenSees {integrator[0]} failed at step {n}")
            out[n] = [ops.nodeDisp(node, dof) for node, dof in nodes]
        ops.wipe()
    return out
