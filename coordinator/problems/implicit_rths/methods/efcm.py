"""The equivalent force control method (EFCM) of Wu et al.: the implicit equation solved by a force loop.

The left-hand side of K_PD d + R_N(d) + R_E(d) = F_EQ is three springs in
parallel sharing one displacement.  An integral controller drives the
equivalent-force (EF) error to zero at the control rate, and the
force-to-displacement conversion C_F = K^^-1 turns its output into
displacement commands; the numerical DOFs are "virtual actuators" that
reach their command at once.  At sample m = i n + j - 1, j = 1..n:

    d_m = d_c with its DOF-e entry replaced by the measured y_m
    F_f = K_PD d_m + K_N d_m + f_m u_e                       EF feedback
    F_c = F_EQ,i + (j/n) (F_EQ,i+1 - F_EQ,i)                 EF command for m + 1 (lead)
    u   = u + K_I dt (F_c - F_f)                             integral control
    d_c = C_F u;  command d_c,e

and at sample (i+1) n the displacement is corrected from the measured force

    (K_PD + K_N) d_{i+1} = F_EQ,i+1 - f u_e,   R_E,i+1 = f

Without lead the command is F_EQ,i + ((j-1)/n)(F_EQ,i+1 - F_EQ,i).  The loop
state (u, d_c) carries over step boundaries.  For a linear specimen and an
ideal actuator the loop error obeys e_{m+1} = (1 - K_I dt kappa) e_m with
kappa = K_true / K^: stable iff 0 < K_I dt kappa < 2; K_I dt = 1 with lead
and rho_E = 1 solves each step exactly (deadbeat).
"""

from __future__ import annotations

from time import perf_counter_ns

import numpy as np

from hybridsim.coordinator.problems.implicit_rths.methods.base import ImplicitRthsMethod, StepReport
from hybridsim.coordinator.problems.implicit_rths.methods.site import Measurement
from hybridsim.coordinator.problems.implicit_rths.methods.structure import SplitStructure

PAPER_GAIN = 400.0
"""K_I of the source paper (1/s)"""


class EfcmMethod(ImplicitRthsMethod):
    name = "efcm"

    def __init__(self, structure: SplitStructure, dt: float, samples_per_step: int, *, rho_e: float = 1.0,
                 gain: float = PAPER_GAIN, lead: bool = True) -> None:
        """``gain`` K_I in 1/s, applied as u += K_I dt e."""
        super().__init__(structure, dt, samples_per_step, rho_e=rho_e)
        if not gain > 0:
            raise ValueError(f"EFCM integral gain K_I must be positive (1/s), got {gain}")
        self.gain = float(gain)
        self.lead = bool(lead)
        self._gain_dt = self.gain * self.sample_period
        self._correction = np.linalg.inv(self._k_lhs)
        """(K_PD + K_N)^-1, computed once"""
        n = structure.ndof
        self._loop_displacement = np.zeros(n)
        """d_c (m)"""
        self._integrator = np.zeros(n)
        """u (N)"""
        self._f_eq_now = np.zeros(n)
        """F_EQ,i (N): where this step's EF command ramp starts"""
        self._last = Measurement(0.0, 0.0)
        self._j = 0
        self._times: list[int] = []

    @classmethod
    def deadbeat(cls, structure: SplitStructure, dt: float, samples_per_step: int, *, rho_e: float = 1.0,
                 lead: bool = True) -> "EfcmMethod":
        """EFCM with K_I dt = 1."""
        return cls(structure, dt, samples_per_step, rho_e=rho_e, gain=samples_per_step / dt, lead=lead)

    def start(self, displacement: np.ndarray, velocity: np.ndarray, load: np.ndarray,
              measurement: Measurement) -> None:
        super().start(displacement, velocity, load, measurement)
        self._loop_displacement = self.displacement.copy()
        self._integrator = self.k_hat @ self.displacement
        self._f_eq_now = self._k_lhs @ self.displacement
        self._f_eq_now[self._e] += self.specimen_force
        self._last = measurement

    def predict(self, load_next: np.ndarray) -> float:
        t0 = perf_counter_ns()
        self._f_eq = self.newmark.equivalent_force(load_next, self.displacement, self.velocity, self.acceleration)
        self._j = 0
        command = self._update(self._last)
        self._times = [perf_counter_ns() - t0]
        return command

    def correct(self, measurement: Measurement) -> float | None:
        t0 = perf_counter_ns()
        if self._j < self.samples_per_step:
            command = self._update(measurement)
            self._times.append(perf_counter_ns() - t0)
            return command
        rhs = self._f_eq.copy()
        rhs[self._e] -= measurement.force
        self._close(self._correction @ rhs, measurement.force)
        self._f_eq_now = self._f_eq
        self._last = measurement
        self._times[-1] += perf_counter_ns() - t0
        self.report = StepReport(self._j, tuple(self._times))
        return None

    def _update(self, measurement: Measurement) -> float:
        """One sample of the force loop; returns the DOF-e displacement command (m)."""
        self._j += 1
        e = self._e
        d_m = self._loop_displacement.copy()
        d_m[e] = measurement.displacement
        feedback = self._k_lhs @ d_m
        feedback[e] += measurement.force
        ramp = (self._j if self.lead else self._j - 1) / self.samples_per_step
        command = self._f_eq_now + ramp * (self._f_eq - self._f_eq_now)
        self._integrator = self._integrator + self._gain_dt * (command - feedback)
        self._loop_displacement = self.k_hat_inv @ self._integrator
        return float(self._loop_displacement[e])
