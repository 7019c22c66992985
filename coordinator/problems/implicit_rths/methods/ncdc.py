"""Implicit RTHS on nearly-complete delay compensation (Wang, Liu, Wu, Xu 2015).

The actuator is driven ahead of the numerical substructure, smoothly and
independently of the iterates; the implicit equation is solved at the end
of each step by simplified Newton on the displacements already measured.

1. Over-prediction at sample i n, tau_p = tau_a + Delta_tau:
       p_{i+1} = d_{i,e} + v_{i,e} (Dt + tau_p) + 1/2 a_{i,e} (Dt + tau_p)^2
2. Commands at samples i n + j - 1, j = 1..n: u = p_i + (j/n)(p_{i+1} - p_i).
3. Acquisition of (y_m, f_m), m = i n .. (i+1) n (the window; optionally
   also the previous steps' samples).
4. At sample (i+1) n, from x^0 = d_i, R^0 = R_E,i, for k = 1..k_max:
       x^(k) = x^(k-1) + K^^-1 r(x^(k-1), R^(k-1))
       R^(k) = back-search of x_e^(k) in the window (see ``back_search``)
       stop when max_j |x_j^(k) - x_j^(k-1)| < tol
   Safeguard: if the pick of iteration k equals that of k - 2 and differs
   from that of k - 1 (tested after the tolerance), stop with the mean of
   the last two iterates and of their two forces.  After k_max, keep the
   last iterate.  d_{i+1} = x^(k), R_E,i+1 = R^(k).

The iteration count is the number of solves in the step, including the one
that meets the tolerance.  Prediction and command generation are charged
to the first iteration, the state update to the last.
"""

from __future__ import annotations

from collections import deque
from time import perf_counter_ns

import numpy as np

from hybridsim.coordinator.problems.implicit_rths.methods.back_search import SEARCH_MODES, Pick, SearchMode, search_force
from hybridsim.coordinator.problems.implicit_rths.methods.base import ImplicitRthsMethod, StepReport
from hybridsim.coordinator.problems.implicit_rths.methods.site import Measurement
from hybridsim.coordinator.problems.implicit_rths.methods.structure import SplitStructure


class NcdcMethod(ImplicitRthsMethod):
    name = "ncdc"

    def __init__(self, structure: SplitStructure, dt: float, samples_per_step: int, *, rho_e: float = 1.0,
                 search: SearchMode = "nearest", delay_estimate: float = 0.0, over_prediction_samples: float = 2.0,
                 tolerance: float = 1e-7, max_iterations: int = 50, window_steps: int = 1) -> None:
        """``delay_estimate`` tau_a (s); over-prediction span Delta_tau = ``over_prediction_samples`` dt;
        ``tolerance`` in m; the window holds the samples of the last ``window_steps`` steps."""
        super().__init__(structure, dt, samples_per_step, rho_e=rho_e)
        if search not in SEARCH_MODES:
            raise ValueError(f"back-search mode must be one of {', '.join(SEARCH_MODES)}, got {search!r}")
        if not (delay_estimate >= 0 and over_prediction_samples >= 0):
            raise ValueError("the delay estimate and the over-prediction span must be >= 0")
        if not (tolerance > 0 and max_iterations >= 1 and window_steps >= 1):
            raise ValueError("tolerance must be > 0 m, max_iterations and window_steps >= 1")
        self.search: SearchMode = search
        self.horizon = dt + delay_estimate + over_prediction_samples * self.sample_period
        """Dt + tau_p (s): how far ahead of t_i the step-end command is predicted"""
        self.tolerance = float(tolerance)
        self.max_iterations = int(max_iterations)
        self._window: deque[Measurement] = deque(maxlen=window_steps * self.samples_per_step + 1)
        self._command_start = 0.0
        """p_i (m)"""
        self._command_end = 0.0
        """p_{i+1} (m)"""
        self._j = 0
        self._setup_ns = 0

    def start(self, displacement: np.ndarray, velocity: np.ndarray, load: np.ndarray,
              measurement: Measurement) -> None:
        super().start(displacement, velocity, load, measurement)
        self._command_end = float(self.displacement[self._e])
        self._window.clear()
        self._window.append(measurement)

    def predict(self, load_next: np.ndarray) -> float:
        t0 = perf_counter_ns()
        e, h = self._e, self.horizon
        self._f_eq = self.newmark.equivalent_force(load_next, self.displacement, self.velocity, self.acceleration)
        self._command_start = self._command_end
        self._command_end = float(self.displacement[e] + self.velocity[e] * h + 0.5 * self.acceleration[e] * h * h)
        self._j = 1
        command = self._command()
        self._setup_ns = perf_counter_ns() - t0
        return command

    def correct(self, measurement: Measurement) -> float | None:
        self._window.append(measurement)
        if self._j < self.samples_per_step:
            t0 = perf_counter_ns()
            self._j += 1
            command = self._command()
            self._setup_ns += perf_counter_ns() - t0
            return command
        positions = np.fromiter((s.displacement for s in self._window), float, len(self._window))
        forces = np.fromiter((s.force for s in self._window), float, len(self._window))
        self._solve(positions, forces)
        return None

    def _command(self) -> float:
        """The interpolated command of the j-th sample of the step (m)."""
        return self._command_start + (self._j / self.samples_per_step) * (self._command_end - self._command_start)

    def _solve(self, positions: np.ndarray, forces: np.ndarray) -> None:
        """Simplified Newton with back-search over the window; closes the step."""
        e = self._e
        times: list[int] = []
        x_prev, r_prev = self.displacement, self.specimen_force
        picks: list[Pick] = []
        converged = safeguard = False
        for k in range(1, self.max_iterations + 1):
            t0 = perf_counter_ns()
            x = x_prev + self.k_hat_inv @ self._residual(x_prev, r_prev)
            target = float(x[e])
            r, pick = search_force(positions, forces, target, self.search)
            if np.max(np.abs(x - x_prev)) < self.tolerance:
                converged = True
            elif len(picks) >= 2 and pick == picks[-2] and pick != picks[-1]:
                x, r = 0.5 * (x + x_prev), 0.5 * (r + r_prev)
                safeguard = True
            times.append(perf_counter_ns() - t0)
            if converged or safeguard:
                break
            picks.append(pick)
            x_prev, r_prev = x, r
        t0 = perf_counter_ns()
        self._close(x, r)
        times[0] += self._setup_ns
        times[-1] += perf_counter_ns() - t0
        kind, index = pick
        self.report = StepReport(
            iterations=k, compute_ns=tuple(times), converged=converged or safeguard, safeguard=safeguard,
            edge_pick=kind == "sample" and index in (0, positions.size - 1),
            outside_range=not positions.min() <= target <= positions.max())
