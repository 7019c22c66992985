"""Shing et al.'s real-time fixed-number-of-iterations method (as in OpenSees' NewmarkHSFixedNumIter).

N = n iterations per integration step, one per control sample.  Iteration
k (k = 1..N, at sample i n + k - 1) restarts from the point actually
commanded at the previous sample and the force measured after it:

    x^(k-1) = d_c^(k-1),  R^(k-1) = f_m          (k > 1; x^0 = d_i, R^0 = R_E,i)
    d~^(k)  = x^(k-1) + K^^-1 r(x^(k-1), R^(k-1))         trial (Newton) displacement
    d_c^(k) = d_i + (k/N) (d~^(k) - d_i)                  (9) interpolated command, sent

(order 2: Lagrange through d_{i-1}, d_i, d~^(k) at x = -1, 0, 1, x = k/N).
At sample (i+1) n, with (y, f) measured after the N-th command:

    d_{i+1}  = d_c^(N) + K^^-1 r(d_c^(N), f)              (10) one more solve, not sent
    R_E,i+1  = f + rho_E K_E,0 (d_{i+1,e} - y)            (11) force correction

Eq. (10) is not counted as an iteration; its time is charged to the N-th.
"""

from __future__ import annotations

from time import perf_counter_ns

import numpy as np

from hybridsim.coordinator.problems.implicit_rths.methods.base import ImplicitRthsMethod, StepReport
from hybridsim.coordinator.problems.implicit_rths.methods.site import Measurement
from hybridsim.coordinator.problems.implicit_rths.methods.structure import SplitStructure


class ShingMethod(ImplicitRthsMethod):
    name = "shing"

    def __init__(self, structure: SplitStructure, dt: float, samples_per_step: int, *, rho_e: float = 1.0,
                 order: int = 1) -> None:
        super().__init__(structure, dt, samples_per_step, rho_e=rho_e)
        if order not in (1, 2):
            raise ValueError(f"Shing interpolation order must be 1 or 2, got {order}")
        self.order = order
        self._previous = self.displacement
        """d_{i-1} for second-order interpolation (d_{-1} = d_0)"""
        self._command = self.displacement
        """d_c^(k): the last interpolated (commanded) point, all DOFs"""
        self._k = 0
        self._times: list[int] = []

    def start(self, displacement: np.ndarray, velocity: np.ndarray, load: np.ndarray,
              measurement: Measurement) -> None:
        super().start(displacement, velocity, load, measurement)
        self._previous = self.displacement

    def predict(self, load_next: np.ndarray) -> float:
        t0 = perf_counter_ns()
        self._f_eq = self.newmark.equivalent_force(load_next, self.displacement, self.velocity, self.acceleration)
        self._k = 0
        command = self._iterate(self.displacement, self.specimen_force)
        self._times = [perf_counter_ns() - t0]
        return command

    def correct(self, measurement: Measurement) -> float | None:
        t0 = perf_counter_ns()
        if self._k < self.samples_per_step:
            command = self._iterate(self._command, measurement.force)
            self._times.append(perf_counter_ns() - t0)
            return command
        e = self._e
        d_next = self._command + self.k_hat_inv @ self._residual(self._command, measurement.force)
        corrected_force = measurement.force + self.rho_e * self.structure.specimen_stiffness * (
            d_next[e] - measurement.displacement)
        self._previous = self.displacement
        self._close(d_next, corrected_force)
        self._times[-1] += perf_counter_ns() - t0
        self.report = StepReport(self._k, tuple(self._times))
        return None

    def _iterate(self, x: np.ndarray, specimen_force: float) -> float:
        """One Newton trial from (x, R) and the interpolated command it gives; returns its DOF-e value."""
        self._k += 1
        trial = x + self.k_hat_inv @ self._residual(x, specimen_force)
        s = self._k / self.samples_per_step
        d_i = self.displacement
        if self.order == 1:
            self._command = d_i + s * (trial - d_i)
        else:
            self._command = (0.5 * s * (s + 1.0)) * trial - ((s - 1.0) * (s + 1.0)) * d_i \
                + (0.5 * (s - 1.0) * s) * self._previous
        return float(self._command[self._e])
