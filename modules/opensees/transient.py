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

from typing import Any

import numpy as np

from hybridsim.modules.dynamic import DynamicSubstructure, State
from hybridsim.modules.opensees.imposed import RESERVED_TAG
from hybridsim.modules.opensees.lazy import ops
from hybridsim.wire.contract import ModuleError

EXCITATION = RESERVED_TAG + 500_000
"""the UniformExcitation pattern's tag and its record's series tag"""
IMPOSED = EXCITATION + 1
"""the MultipleSupport pattern's tag; its series and ground motions take the tags after it"""


class Stepper:
    """OpenSees' side, in the process that holds the model: ``pairs`` the (node, dof) of every DOF (interface
    first, ``interface`` of them); ``direction`` the DOF the record (``record_dt`` s, ``samples`` m/s^2)
    excites; ``rayleigh`` (a, b) with C = a M + b K_initial; ``alpha`` the scheme's.  ``forces``: also answer the
    interface's M a + C v + R(d) - f (N), OpenSees' dynamic reactions there (at the end time: alpha = 0).
    ``newton``: NormDispIncr's tolerance (m) and whether a step still above it after 50 iterations is taken."""

    def __init__(self, pairs: list[tuple[int, int]], interface: int, direction: int, rayleigh: tuple[float, float],
                 record_dt: float, samples: list[float], alpha: float, forces: bool,
                 newton: tuple[float, bool] = (1e-12, False)) -> None:
        self.pairs, self.nb, self.direction, self.forces = pairs, interface, direction, forces
        self._setting = (rayleigh, record_dt, samples, alpha, newton)
        self._excited = False

    def open(self) -> None:
        """Set up the transient analysis (again: a session's start)."""
        rayleigh, record_dt, samples, alpha, (tolerance, stalled) = self._setting
        ops.wipeAnalysis()
        for tag in (EXCITATION, IMPOSED):
            ops.remove("loadPattern", tag)
        ops.remove("timeSeries", EXCITATION)
        self._excited = False
        ops.rayleigh(rayleigh[0], 0.0, rayleigh[1], 0.0)
        ops.timeSeries("Path", EXCITATION, "-dt", record_dt, "-values", *samples)
        self._impose(0.0, 1.0, np.zeros((3, self.nb)), np.zeros((3, self.nb)))
        ops.constraints("Transformation")
        ops.numberer("RCM")
        ops.system("UmfPack")
        ops.test("NormDispIncr", tolerance, 50, 5 if stalled else 0)  # 5: a stalled step is taken
        ops.algorithm("Newton")
        ops.integrator("HHT", 1.0 + alpha)
        ops.analysis("Transient")

    def _excite(self, on: bool) -> None:
        """Add or remove the record's UniformExcitation (the pre-test's probes run without it)."""
        if on and not self._excited:
            ops.pattern("UniformExcitation", EXCITATION, self.direction, "-accel", EXCITATION)
        elif self._excited and not on:
            ops.remove("loadPattern", EXCITATION)
        self._excited = on

    def _impose(self, start: float, end: float, first: np.ndarray, last: np.ndarray) -> None:
        """The interface's motion over [start, end] s: (d, v, a) x interface DOFs at both ends, linear between
        (and on past the end: with alpha = 0 OpenSees evaluates it at its own sum of the sub-steps, which may pass
        ``end`` by an ulp, where a Path series would answer 0)."""
        ops.remove("loadPattern", IMPOSED)
        ops.pattern("MultipleSupport", IMPOSED)
        for k, (node, dof) in enumerate(self.pairs[:self.nb]):
            tags = [IMPOSED + 1 + 4 * k + q for q in range(4)]
            for q in range(3):
                ops.remove("timeSeries", tags[q])
                x0, x1 = float(first[q, k]), float(last[q, k])
                ops.timeSeries("Path", tags[q], "-time", start, end, 2 * end - start, "-values", x0, x1, 2 * x1 - x0)
            ops.groundMotion(tags[3], "Plain", "-disp", tags[0], "-vel", tags[1], "-accel", tags[2])
            ops.imposedMotion(node, dof, tags[3])

    def _place(self, time: float, d: np.ndarray, v: np.ndarray, a: np.ndarray) -> None:
        """Every node's d, v, a committed (the whole state of a linear model; a yielding one's elements are
        already at it), the time set."""
        for k, (node, dof) in enumerate(self.pairs):
            ops.setNodeDisp(node, dof, float(d[k]), "-commit")
            ops.setNodeVel(node, dof, float(v[k]), "-commit")
            ops.setNodeAccel(node, dof, float(a[k]), "-commit")
        ops.setTime(time)

    def run(self, base: tuple[float, np.ndarray, np.ndarray, np.ndarray], path: np.ndarray, h: float,
            loaded: bool, keep: bool = True) -> tuple[np.ndarray, ...]:
        """HHT steps of ``h`` s from ``base`` = (time, d, v, a) with the interface's (d, v, a) reaching
        ``path[j]`` (substeps, 3, nb) at the j-th: the end's d, v, a over every DOF (and the interface's
        resisting force with ``forces``); ``keep`` is the worker's (this process's model is linear)."""
        time, d, v, a = base
        self._place(time, d, v, a)
        self._excite(loaded)
        first = np.array([d[:self.nb], v[:self.nb], a[:self.nb]])
        for j, last in enumerate(path):
            self._impose(time + j * h, time + (j + 1) * h, first, last)
            if ops.analyze(1, h) != 0:
                raise ModuleError(f"opensees module: OpenSees' transient step to t = {time + (j + 1) * h:.9g} s "
                                  "did not converge")
            first = last
        out = [np.array([read(n, k) for n, k in self.pairs]) for read in (ops.nodeDisp, ops.nodeVel, ops.nodeAccel)]
        for q in range(3):
            out[q][:self.nb] = path[-1][q]
        if self.forces:
            ops.reactions("-dynamic")
            out.append(np.array([ops.nodeReaction(n, k) for n, k in self.pairs[:self.nb]]))
        return tuple(out)


class OpenSeesTransient(DynamicSubstructure):
    """:class:`DynamicSubstructure` whose sub-steps OpenSees takes: ``stepper`` a :class:`Stepper` in this
    process (a linear model: every step starts from the state it is handed) or a
    :class:`hybridsim.modules.opensees.transient_worker.WorkerStepper` (a yielding one); ``owner`` holds this
    process's domain while the model is in it."""

    def __init__(self, matrices: tuple, stepper: Any, owner: object = None) -> None:
        super().__init__(*matrices)
        self.stepper, self.owner = stepper, owner
        self._settling = False
        self.history: list[list] = []
        """a yielding model's settled interface motion, [t, d, v, a] a step from t = 0: what a restore replays"""

    def open(self, dt: float) -> None:
        super().open(dt)
        self.stepper.open()
        self.history = []

    def commit(self, time: float, command: np.ndarray, step: int) -> None:
        super().commit(time, command, step)
        st, b = self.settled, self.b
        if self.stepper.forces and self.pending is not None and (not self.history or self.history[-1][0] < st.time):
            self.history.append([st.time, st.d[b].tolist(), st.v[b].tolist(), st.a[b].tolist()])

    def save(self) -> dict[str, object]:
        """The base's state, and a yielding model's settled interface motion (its materials' state is replayed)."""
        return {**super().save(), "history": self.history} if self.stepper.forces else super().save()

    def load(self, data: dict) -> None:
        """The base's :meth:`load`; a yielding model replays its settled steps in a fresh worker first, and a
        replay that does not reach the checkpoint's state bit for bit is refused."""
        if self.stepper.forces:
            history = data.get("history") if isinstance(data, dict) else None
            if not isinstance(history, list):
                raise ModuleError("opensees module: the checkpoint has no settled history of the yielding model")
            self.stepper.open()
            self._settling, self.settled = True, self._rest(0.0)
            try:
                state = self._at_rest(np.array(history[0][3], float)) if history else self.settled
                for time, *end in history[1:]:
                    state = self._advance(state, tuple(np.array(x, float) for x in end), float(time))
            finally:
                self._settling = False
            super().load(data)
            if state.time != self.settled.time or any(np.any(x != y) for x, y in
                                                      ((state.d, self.settled.d), (state.a, self.settled.a))):
                raise ModuleError("opensees module: replaying the yielding model's settled steps did not reach the "
                                  "checkpoint's state; resume from a checkpoint of this model")
            self.history = history
            return
        super().load(data)

    def _settled_by(self, time: float, command: np.ndarray, step: int) -> State:
        """The settled step (a yielding model's worker keeps it; a trial's runs in a fork)."""
        self._settling = True
        try:
            return super()._settled_by(time, command, step)
        finally:
            self._settling = False

    def _integrate(self, base: State, path: np.ndarray, h: float, loaded: bool) -> State:
        out = self.stepper.run((base.time, base.d, base.v, base.a), path, h, loaded, keep=self._settling)
        return State(base.time + h * len(path), *out[:3], base.g, out[3] if len(out) > 3 else None)

    def _static(self, state: State, loaded: bool) -> np.ndarray:
        """(C v + R(d) - f) at the interface rows (N): for a yielding model OpenSees' dynamic reactions less the
        inertia M a (the mass stays as assembled); 0 at rest."""
        if not self.stepper.forces:
            return super()._static(state, loaded)
        if state.resisting is None:
            return np.zeros(self.nb)
        return state.resisting - self.m[self.b] @ state.a
