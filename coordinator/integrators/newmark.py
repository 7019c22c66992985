"""Newmark implicit, constant average acceleration (beta = 1/4, gamma = 1/2), iterated to equilibrium.

Unknown d = d_{n+1}; with the Newmark predictor d~, v~ of ``newmark_family``,
a(d) = (d - d~) / (beta dt^2) and v(d) = v~ + gamma dt a(d).  Equilibrium
R(d) = f_{n+1} - M a(d) - C v(d) - r(d) = 0 is solved by modified Newton
with the initial stiffness (factored once):

    K_eff = K_I + M / (beta dt^2) + gamma / (beta dt) C,   d <- d + K_eff^{-1} R(d)

The first trial assumes r(d) = r_n + K_I (d - d_n), so a linear structure
with K_I = K converges with one module evaluation per step: this is the
linear reference solution.  A nonlinear structure takes more trials; every
trial is a new (uncommitted) step at the modules.  Unconditionally stable
for linear systems; no numerical damping.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from coordinator.integrators.base import Integrator, IntegratorError, factor_once


class NewmarkImplicitIntegrator(Integrator):
    name = "newmark"

    def __init__(self, mass: np.ndarray, damping: np.ndarray, initial_stiffness: np.ndarray, dt: float,
                 *, tolerance: float = 1e-10, max_iterations: int = 25) -> None:
        super().__init__(mass, damping, initial_stiffness, dt)
        self.beta, self.gamma = 0.25, 0.5
        self.tolerance, self.max_iterations = float(tolerance), int(max_iterations)
        self._c_a = 1.0 / (self.beta * dt * dt)
        self._c_v = self.gamma / (self.beta * dt)
        k_eff = self.initial_stiffness + self._c_a * self.mass + self._c_v * self.damping
        self._lu = factor_once(k_eff, self.name)
        self._pred_d = np.zeros_like(self.displacement)
        self._pred_v = np.zeros_like(self.displacement)
        self._trial = np.zeros_like(self.displacement)
        self._next_load = np.zeros_like(self.displacement)
        self._iteration = 0
        self.iterations_total = 0
        self.iterations_max = 0
        """module evaluations per step: their sum and maximum over the run"""

    def _residual(self, d: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, float]:
        """R(d) and the size of the largest force term in it (for a relative test)."""
        a = self._c_a * (d - self._pred_d)
        inertia, damping = self.mass @ a, self.damping @ (self._pred_v + self.gamma * self.dt * a)
        scale = max(np.linalg.norm(self._next_load), np.linalg.norm(inertia), np.linalg.norm(damping),
                    np.linalg.norm(r), np.finfo(float).tiny)
        return self._next_load - inertia - damping - r, scale

    def predict(self, load: np.ndarray) -> np.ndarray:
        dt, b = self.dt, self.beta
        self._pred_d = self.displacement + dt * self.velocity + dt * dt * (0.5 - b) * self.acceleration
        self._pred_v = self.velocity + dt * (1.0 - self.gamma) * self.acceleration
        self._next_load = np.asarray(load, float)
        linearised = self.restoring_force + self.initial_stiffness @ (self._pred_d - self.displacement)
        self._trial = self._pred_d + scipy.linalg.lu_solve(self._lu, self._residual(self._pred_d, linearised)[0])
        self._iteration = 0
        return self._trial.copy()

    def correct(self, restoring_force: np.ndarray) -> np.ndarray | None:
        r = np.asarray(restoring_force, float)
        residual, scale = self._residual(self._trial, r)
        self._iteration += 1
        if np.linalg.norm(residual) <= self.tolerance * scale:
            a = self._c_a * (self._trial - self._pred_d)
            self.displacement, self.acceleration = self._trial.copy(), a
            self.velocity = self._pred_v + self.gamma * self.dt * a
            self.restoring_force, self.load = r.copy(), self._next_load
            self.iterations_total += self._iteration
            self.iterations_max = max(self.iterations_max, self._iteration)
            self.step += 1
            return None
        if self._iteration >= self.max_iterations:
            raise IntegratorError(
                f"Newmark implicit did not converge in step {self.step + 1} after {self._iteration} trials "
                f"(relative residual {np.linalg.norm(residual) / scale:.3g} > {self.tolerance:g})")
        self._trial = self._trial + scipy.linalg.lu_solve(self._lu, residual)
        return self._trial.copy()
