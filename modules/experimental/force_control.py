"""Force control at an experimental site: setup DOFs held at a force by an outer loop around their actuators.

A column's vertical actuator holds the gravity load while the lateral DOFs follow the coordinator
(docs/force_control.md).

The coordinator does not see a force-controlled DOF (the site's interface DOFs are the setup's others).  Each
control sample the site commands the setup pose [interface target, u] (u: the force-controlled DOFs'
displacements) through the setup and the gate like any pose, so the vertical actuator's command meets every limit
of the gate (stroke, increment, velocity) and its load cell the force limit (beyond it the site is held).  After
each sample the loop corrects u by the force error of the DOF forces F = J^T f measured then (a discrete
integral controller, the specimen's declared stiffness K as the loop's plant model):

    u_{k+1} = u_k + g (F*_{k+1} - F_k) / K

For a linear specimen of stiffness K along the DOF and fixed other DOFs the error obeys
e_{k+1} = (1 - g) e_k: g = 1 removes it in one sample; a coupled DOF moving by dx in a sample adds K_c dx to the
next error (K_c the coupling stiffness).  The target is ramped in linearly over ``ramp`` samples when the session
starts (from where the DOFs are; the other DOFs held at rest), then held until the error is within
``tolerance`` (at most ``settle`` more samples, or the site refuses to start); F* stays constant after (a gravity
load, or a declared ``history`` of the step's time) unless a lab protocol's client commands another (OpenFresco's ExpForceControl, a UI-SIMCOR force): the new
F* holds from the step's first sample, so the loop meets it one sample later (a jump dF moves the held actuator
dF/K in that sample, through the gate's increment limit like any command)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Integer, Key, Number, Schema, Table, Text
from hybridsim.modules.experimental.forces import LoadCells
from hybridsim.modules.force_history import FORCE_HISTORY, History, force_at, force_history
from hybridsim.wire.contract import ModuleError

CONFIG = Schema("force_control", "A setup DOF the site holds at a force (docs/force_control.md): not one of the "
                "coordinator's DOFs; an outer loop corrects its displacement command by the measured force error "
                "every control sample, through the gate.", {
                    "dof": Key(Text(), "the setup's DOF (its name in the setup)", required=True),
                    "force": Key(Number("N or N*m"), "the force target held (e.g. the gravity load, negative "
                                 "downwards)"),
                    "history": Key(Table(FORCE_HISTORY), "a force target that changes with the step's time "
                                   "instead (its value at t = 0 ramped in)"),
                    "stiffness": Key(Number("N/m or N*m/rad", 0, open_minimum=True), "the specimen's stiffness "
                                     "along the DOF: the loop corrects the command by the force error over it",
                                     required=True),
                    "gain": Key(Number("", 0, 1, open_minimum=True), "share of the force error corrected per "
                                "control sample", default=1.0),
                    "ramp": Key(Integer(1), "control samples over which the target is ramped in at the session's "
                                "start (the other DOFs at rest)", default=10),
                    "settle": Key(Integer(0), "control samples the target may be held after the ramp until the "
                                  "error is within tolerance; still beyond, the site refuses to start", default=20),
                    "tolerance": Key(Number("N or N*m", 0, open_minimum=True), "the largest force error at the "
                                     "start", default=1.0),
                }, exactly_one=(("force", "history"),))


class ForceControlled:
    """A :class:`LoadCells` force source whose setup DOFs ``held`` (indices) are held at ``targets`` (N, N*m) by
    the loop of the module docstring (``stiffness`` N/m or N*m/rad, ``gain``, per held DOF); the interface is the
    setup's other DOFs."""

    def __init__(self, inner: LoadCells, held: Sequence[int], targets: Sequence[float], stiffness: Sequence[float],
                 gain: Sequence[float], ramp: int, settle: int, tolerance: Sequence[float]) -> None:
        self.inner = inner
        n = len(inner.setup.dofs)
        self.held = np.asarray(held, int)
        self.free = np.setdiff1d(np.arange(n), self.held)
        self.targets = np.asarray(targets, float)
        self.gain_per_stiffness = np.asarray(gain, float) / np.asarray(stiffness, float)
        self.ramp, self.settle = ramp, settle
        self.tolerance = np.asarray(tolerance, float)
        self._pose = np.zeros(n)
        """the setup pose commanded: the interface's target at ``free``, u at ``held`` (m, rad)"""
        self.samples = -1
        """samples measured since the reading at rest (-1: none)"""
        self.error = np.zeros(self.held.size)
        """F* - F of the last measurement (N, N*m)"""
        self.histories: list[History | None] = [None] * self.held.size
        """each held DOF's declared history (None: a constant target)"""

    @classmethod
    def of(cls, tables: Sequence[Mapping[str, Any]], inner: LoadCells) -> ForceControlled:
        """The loop of validated ``force_control`` tables around ``inner``."""
        names = [d.name for d in inner.setup.dofs]
        held = []
        for table in tables:
            if table["dof"] not in names or names.index(table["dof"]) in held:
                raise ModuleError(f"experimental module: force_control dof {table['dof']!r} must be one of the "
                                  f"setup's DOFs ({', '.join(names)}), each once")
            held.append(names.index(table["dof"]))
        if len(held) == len(names):
            raise ModuleError("experimental module: force_control holds every setup DOF: leave the coordinator one")
        first = tables[0]
        histories = [None if "history" not in t else force_history(t["history"], f"experimental module: "
                                                                   f"force_control[{i}].history")
                     for i, t in enumerate(tables)]
        loop = cls(inner, held, [t["force"] if h is None else h[1][0] for t, h in zip(tables, histories)],
                   [t["stiffness"] for t in tables], [t.get("gain", 1.0) for t in tables], int(first.get("ramp", 10)),
                   int(first.get("settle", 20)), [t.get("tolerance", 1.0) for t in tables])
        loop.histories = histories
        return loop

    def target(self, sample: int) -> np.ndarray:
        """F* at control sample ``sample`` after the reading at rest (the ramp, then constant)."""
        return self.targets * min(sample / self.ramp, 1.0)

    def command(self, targets: np.ndarray | None, time: float) -> None:
        """Hold the targets of the step about to be taken, at ``time`` (s), from its first sample on: ``targets``
        (N, N*m; a lab protocol's force command), else each declared history's value at ``time``, else those
        held."""
        if targets is not None:
            self.targets = np.asarray(targets, float).copy()
            return
        for i, history in enumerate(self.histories):
            if history is not None:
                self.targets[i] = force_at(history, time)

    def setup_target(self, target: np.ndarray) -> np.ndarray:
        pose = self._pose
        pose[self.free] = target
        return pose

    def settling(self) -> bool:
        """Whether the site's start goes on: the ramp, then the held target until the error is within tolerance
        (refused past ``settle`` samples)."""
        if self.samples < self.ramp:
            return True
        if np.all(np.abs(self.error) <= self.tolerance):
            return False
        if self.samples >= self.ramp + self.settle:
            i = int(np.flatnonzero(np.abs(self.error) > self.tolerance)[0])
            dof = self.inner.setup.dofs[self.held[i]].name
            raise ModuleError(f"experimental module: force_control of {dof}: {self.targets[i]:.6g} not reached "
                              f"within {self.tolerance[i]:.6g} in {self.ramp} + {self.settle} samples (error "
                              f"{self.error[i]:.6g}): check its stiffness and gain, or raise settle; the site holds "
                              "where it is")
        return True

    def respond(self, strokes: np.ndarray, loads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The free DOFs' pose and forces; the held DOFs' command corrected for the next sample."""
        pose, forces = self.inner.respond(strokes, loads)
        self.samples += 1
        if self.samples == 0:  # the reading at rest: the loop starts where the held DOFs are
            self._pose[self.held] = pose[self.held]
        self.error = self.target(self.samples) - forces[self.held]
        self._pose[self.held] += self.gain_per_stiffness * (self.target(self.samples + 1) - forces[self.held])
        return pose[self.free], forces[self.free]

    def probe(self, command: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A pre-test probe at the free DOFs' ``command``, the held DOFs where the loop holds them; ``initial_
        stiffness`` (over the interface DOFs) answers instead when given."""
        if self.inner.stiffness is not None:
            return self.inner.probe(command)
        pose = self._pose.copy()
        pose[self.free] = command
        displacement, force = self.inner.probe(pose)
        return displacement[self.free], force[self.free]

    def state(self) -> dict[str, Any]:
        return {"pose": self._pose.tolist(), "samples": self.samples, "error": self.error.tolist(),
                "targets": self.targets.tolist()}

    def set_state(self, state: dict[str, Any]) -> None:
        self._pose = np.array(state["pose"], float)
        self.samples = int(state["samples"])
        self.error = np.array(state["error"], float)
        self.targets = np.array(state.get("targets", self.targets), float)  # (a state kept before commands)
