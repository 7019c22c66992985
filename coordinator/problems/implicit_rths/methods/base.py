"""The shape every implicit RTHS method shares: a state machine driven one control sample at a time.

An integration step Dt spans n control samples dt.  The driver (:func:`run`)
owns the clock; the method only computes::

    command = method.predict(F_{i+1})          # at sample i n, right after step i-1 closed
    while command is not None:
        measurement = site.drive(command)      # hold the command for one sample
        command = method.correct(measurement)  # None once step i+1 is closed

This mirrors the coordinator's ``predict``/``correct`` integrator loop, with
the site's measurement (y, f) in place of a restoring-force vector because
these methods need the measured displacement as well as the force.
``correct`` is called exactly n times per step; the n-th call sees the
measurement at sample (i+1) n and closes the step.

Every method solves the same equivalent-force equation (see
``equivalent_force``) with the same iteration matrix, inverted once

    K^ = K_PD + K_N + rho_E K_E,0 u_e u_e^T

where rho_E says how much of the specimen's initial stiffness the
algorithm is told (1: all of it, 0: none).

Each method times its own computation per iteration (ns, perf_counter):
per-step set-up is charged to the first iteration and the step closing to
the last; the lab and data acquisition are excluded.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

import numpy as np

from hybridsim.coordinator.problems.implicit_rths.methods.equivalent_force import EquivalentForceNewmark
from hybridsim.coordinator.problems.implicit_rths.methods.site import ControlSite, Measurement
from hybridsim.coordinator.problems.implicit_rths.methods.structure import SplitStructure


@dataclass(frozen=True)
class StepReport:
    """How one integration step went."""

    iterations: int
    compute_ns: tuple[int, ...]
    """wall time of each iteration's computation (ns)"""
    converged: bool = True
    safeguard: bool = False
    """NCDC: closed by the two-cycle safeguard"""
    edge_pick: bool = False
    """NCDC: the final force came from the first or last sample of the search window"""
    outside_range: bool = False
    """NCDC: the final target lay outside the displacements measured in the window"""


class ImplicitRthsMethod(abc.ABC):
    """State (d_i, v_i, a_i, R_E,i) at the last closed step, advanced by predict/correct."""

    name: str = ""

    def __init__(self, structure: SplitStructure, dt: float, samples_per_step: int, *, rho_e: float = 1.0) -> None:
        if samples_per_step < 1 or int(samples_per_step) != samples_per_step:
            raise ValueError(f"samples per integration step must be a positive integer, got {samples_per_step}")
        if not 0.0 <= rho_e <= 1.0:
            raise ValueError(f"rho_E (share of the specimen stiffness in the iteration matrix) must be in [0, 1], "
                             f"got {rho_e}")
        self.structure = structure
        self.samples_per_step = int(samples_per_step)
        self.sample_period = dt / self.samples_per_step
        self.rho_e = float(rho_e)
        self.newmark = EquivalentForceNewmark(structure.mass, structure.damping, dt)
        self.k_hat = self.newmark.k_pd + structure.stiffness_with_specimen(self.rho_e * structure.specimen_stiffness)
        """K^: the iteration matrix (N/m)"""
        self.k_hat_inv = np.linalg.inv(self.k_hat)
        """K^^-1, computed once before the test"""
        self._k_lhs = self.newmark.k_pd + structure.stiffness
        """K_PD + K_N: the numerical part of the left-hand side (N/m)"""
        self._e = structure.specimen_dof
        n = structure.ndof
        self.displacement, self.velocity, self.acceleration = np.zeros(n), np.zeros(n), np.zeros(n)
        self.specimen_force = 0.0
        """R_E,i: the specimen force (N) at DOF e that closed the last step"""
        self.step = 0
        self.report = StepReport(0, ())
        """the report of the last closed step"""
        self._f_eq = np.zeros(n)
        """F_EQ,i+1 of the step in progress (N)"""

    def start(self, displacement: np.ndarray, velocity: np.ndarray, load: np.ndarray,
              measurement: Measurement) -> None:
        """Initial state; R_E,0 = f_0 and M a_0 = F_0 - C v_0 - K_N d_0 - R_E,0 u_e."""
        s = self.structure
        self.displacement = np.array(displacement, float)
        self.velocity = np.array(velocity, float)
        self.specimen_force = float(measurement.force)
        rhs = np.asarray(load, float) - s.damping @ self.velocity - s.stiffness @ self.displacement
        rhs[self._e] -= self.specimen_force
        self.acceleration = np.linalg.solve(s.mass, rhs)
        self.step = 0

    @abc.abstractmethod
    def predict(self, load_next: np.ndarray) -> float:
        """Begin step i -> i+1 under F_{i+1} (N); return the actuator command for this sample (m)."""

    @abc.abstractmethod
    def correct(self, measurement: Measurement) -> float | None:
        """Take the measurement of the next sample; return the next command, or None when the step closed."""

    def _residual(self, x: np.ndarray, specimen_force: float) -> np.ndarray:
        """r(x, R) = F_EQ,i+1 - (K_PD + K_N) x - R u_e (N)."""
        r = self._f_eq - self._k_lhs @ x
        r[self._e] -= specimen_force
        return r

    def _close(self, d_next: np.ndarray, specimen_force: float) -> None:
        """Make (d_{i+1}, R_E,i+1) the state; the rates follow from the Newmark relations."""
        self.velocity, self.acceleration = self.newmark.rates(d_next, self.displacement, self.velocity,
                                                              self.acceleration)
        self.displacement = d_next
        self.specimen_force = float(specimen_force)
        self.step += 1


@dataclass(frozen=True)
class RunHistory:
    """Step-end states of a run: arrays over steps 0..N (rows) and DOFs (columns)."""

    displacement: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    specimen_force: np.ndarray
    """R_E,i (N)"""
    reports: tuple[StepReport, ...]
    """one per step 1..N"""

    @property
    def iterations(self) -> np.ndarray:
        return np.array([r.iterations for r in self.reports], int)


def run(method: ImplicitRthsMethod, site: ControlSite, loads: np.ndarray, displacement: np.ndarray,
        velocity: np.ndarray) -> RunHistory:
    """Drive ``method`` through len(loads) - 1 steps on ``site`` from the initial state; loads F_i in N."""
    if abs(site.sample_period - method.sample_period) > 1e-12 * method.sample_period:
        raise ValueError(f"the site samples every {site.sample_period:g} s, the method expects "
                         f"{method.sample_period:g} s (Dt / n)")
    loads = np.asarray(loads, float)
    method.start(displacement, velocity, loads[0], site.reading())
    states = [(method.displacement, method.velocity, method.acceleration, method.specimen_force)]
    reports = []
    for load_next in loads[1:]:
        command = method.predict(load_next)
        while command is not None:
            command = method.correct(site.drive(command))
        states.append((method.displacement, method.velocity, method.acceleration, method.specimen_force))
        reports.append(method.report)
    d, v, a, r = zip(*states)
    return RunHistory(np.array(d), np.array(v), np.array(a), np.array(r), tuple(reports))
