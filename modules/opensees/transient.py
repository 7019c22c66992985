"""A dynamic OpenSees module whose internal DOFs OpenSees itself integrates: a transient analysis, interface imposed.

The coupling is :mod:`hybridsim.modules.dynamic`'s (docs/dynamic_modules.md); what changes is who takes the
sub-steps of the internal DOFs.  Here OpenSees does, in the module's own domain: its ``HHT`` integrator with
alpha_OpenSees = 1 + alpha (Hilber, Hughes & Taylor 1977: M a_{n+1} + C v_{n+a} + K d_{n+a} = f(t_{n+a}), the
same weights as equation (1)'s HHT-alpha for a linear model), ``UniformExcitation`` of the record along
``direction`` on the model's masses (relative coordinates), and the interface DOFs imposed by a
``MultipleSupport`` pattern: per interface DOF an ``imposedMotion`` whose ground motion's displacement, velocity
and acceleration are ``Path`` series through the sub-step's two ends.  OpenSees evaluates them at t_{n+a}
(``ImposedMotionSP::applyConstraint`` sets the node's velocity and acceleration there, the Transformation
handler its displacement), where the linear path gives -alpha x_n + (1 + alpha) x_{n+1}: equation (1)'s
weighting of the interface terms K_ib d_b and C_ib v_b.

Each sub-step starts from the state the coupling hands it (the settled one, or a trial's): every node's
displacement, velocity and acceleration are set and committed (``setNodeDisp ... '-commit'``), which is the
whole state of a linear model.  A path-dependent (yielding) model's state is more than its nodes' and is not
built here (docs/dynamic_modules.md, "Not built").  The interface force G is equation (1)'s over the assembled
M, C, K of the interface rows.  Units: SI.
"""

from __future__ import annotations

import numpy as np

from hybridsim.modules.dynamic import DynamicSubstructure, Record, Scheme, State
from hybridsim.modules.opensees.imposed import RESERVED_TAG
from hybridsim.modules.opensees.lazy import ops
from hybridsim.wire.contract import ModuleError

EXCITATION = RESERVED_TAG + 500_000
"""the UniformExcitation pattern's tag and its record's series tag"""
IMPOSED = EXCITATION + 1
"""the MultipleSupport pattern's tag; its series and ground motions take the tags after it"""


class OpenSeesTransient(DynamicSubstructure):
    """The model in this process's OpenSees domain (held by ``owner``); ``pairs`` the (node, dof) of every DOF of
    M, C, K (interface first); ``direction`` the DOF the record excites; ``rayleigh`` (a, b) with C = a M + b K."""

    def __init__(self, mass: np.ndarray, damping: np.ndarray, stiffness: np.ndarray, interface: int,
                 influence: np.ndarray, ground: Record, scheme: Scheme, pairs: list[tuple[int, int]],
                 direction: int, rayleigh: tuple[float, float], owner: object) -> None:
        super().__init__(mass, damping, stiffness, interface, influence, ground, scheme)
        self.pairs, self.direction, self.rayleigh = pairs, direction, rayleigh
        self.owner = owner
        """the holder of this process's OpenSees domain (:func:`hybridsim.modules.opensees.domain.claim`)"""
        self._excited = False

    def open(self, dt: float) -> None:
        """The coupling's set-up, then OpenSees' transient analysis (HHT, Newton, Transformation handler)."""
        super().open(dt)
        ops.wipeAnalysis()
        for tag in (EXCITATION, IMPOSED):
            ops.remove("loadPattern", tag)
        self._excited = False
        ops.remove("timeSeries", EXCITATION)
        ops.rayleigh(self.rayleigh[0], 0.0, self.rayleigh[1], 0.0)
        ops.timeSeries("Path", EXCITATION, "-dt", float(self.ground.times[1] if self.ground.times.size > 1 else dt),
                       "-values", *self.ground.samples.tolist())
        self._impose(0.0, dt, np.zeros((3, self.nb)), np.zeros((3, self.nb)))
        ops.constraints("Transformation")
        ops.numberer("RCM")
        ops.system("UmfPack")
        ops.test("NormDispIncr", 1e-12, 10)
        ops.algorithm("Newton")
        ops.integrator("HHT", 1.0 + self.scheme.alpha)
        ops.analysis("Transient")

    def _excite(self, on: bool) -> None:
        """Add or remove the record's UniformExcitation (the pre-test's probes run without it)."""
        if on and not self._excited:
            ops.pattern("UniformExcitation", EXCITATION, self.direction, "-accel", EXCITATION)
        elif self._excited and not on:
            ops.remove("loadPattern", EXCITATION)
        self._excited = on

    def _impose(self, start: float, end: float, first: np.ndarray, last: np.ndarray) -> None:
        """The interface's motion over [start, end] s: (d, v, a) x interface DOFs at both ends, linear between."""
        ops.remove("loadPattern", IMPOSED)
        ops.pattern("MultipleSupport", IMPOSED)
        for k, (node, dof) in enumerate(self.pairs[:self.nb]):
            tags = [IMPOSED + 1 + 4 * k + q for q in range(4)]
            for q in range(3):
                ops.remove("timeSeries", tags[q])
                ops.timeSeries("Path", tags[q], "-time", start, end, "-values", float(first[q, k]),
                               float(last[q, k]))
            ops.groundMotion(tags[3], "Plain", "-disp", tags[0], "-vel", tags[1], "-accel", tags[2])
            ops.imposedMotion(node, dof, tags[3])

    def _place(self, state: State) -> None:
        """Every node's d, v, a committed at ``state`` (the whole state of a linear model), its time set."""
        for k, (node, dof) in enumerate(self.pairs):
            ops.setNodeDisp(node, dof, float(state.d[k]), "-commit")
            ops.setNodeVel(node, dof, float(state.v[k]), "-commit")
            ops.setNodeAccel(node, dof, float(state.a[k]), "-commit")
        ops.setTime(state.time)

    def _substep(self, old: State, interface: np.ndarray, time: float, h: float, loaded: bool) -> State:
        """One HHT step of OpenSees from ``old`` to ``time`` with the interface's (d, v, a) reaching ``interface``."""
        self._place(old)
        self._excite(loaded)
        b = self.b
        self._impose(old.time, time, np.array([old.d[b], old.v[b], old.a[b]]), np.asarray(interface))
        if ops.analyze(1, h) != 0:
            raise ModuleError(f"opensees module: OpenSees' transient step to t = {time:.9g} s did not converge")
        new = State(time, *(np.array([read(n, d) for n, d in self.pairs])
                            for read in (ops.nodeDisp, ops.nodeVel, ops.nodeAccel)), old.g)
        new.d[b], new.v[b], new.a[b] = interface
        return new
