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

Convergence, whichever comes first:

1. the residual: ||R(d)|| <= max(tolerance * s, floor), with s the largest of ||f||, ||M a||, ||C v||,
   ||r|| (a relative test) and the absolute floor

       floor = 4 eps ||K_eff||_F (||d|| + ||d~||)      (N, with eps the float64 rounding unit)

   the force that rounding d and d~ alone puts into R: a(d) multiplies d - d~ by 1 / (beta dt^2), so at
   rest, where every force term vanishes, the relative test would ask R below its own rounding (a
   structure at rest with a permanent offset would never converge);
2. the correction: max |K_eff^{-1} R(d)| <= displacement_tolerance (m; rad for rotations): the next
   trial would move no DOF by more than that, so the step ends at the trial just evaluated, whose forces
   were measured (OpenSees' NormDispIncr test in a hybrid-test form).  The default, 1e-15 m, is the
   rounding of a coordinate of a few metres (eps x 5 m): no correction below it can move a structure;
   a lab sets its actuators' resolution.  A relative residual test alone asks a module for more than it
   resolves: a force-based OpenSees element converges its own iterations to a tolerance of its own, and
   the Steel01 frame at rest (5 s of zero ground motion, displacements of 1e-41 m) took 9 to 11
   evaluations per step to push the relative residual below 1e-10; with the correction test it takes
   one.  0 switches the test off.

``tangent = "broyden" | "bfgs"`` replaces K_I in K_eff (and in the first trial's linearised force) by a
tangent updated from the measured increments of every evaluation, from K_I at each step's start
(``tangent``); K_eff is factored again after each update.  The default, ``initial``, is the scheme above.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg.lapack import dgetrs

from hybridsim.coordinator.integrators import tangent as tangents
from hybridsim.coordinator.integrators.base import Integrator, IntegratorError, factor_once
from hybridsim.modules.config_schema import Integer, Key, Number, Schema


FLOOR_ROUNDING = 4
"""roundings of d (and d~) that the residual's absolute floor allows (see the module docstring)"""


class NewmarkImplicitIntegrator(Integrator):
    """Modified Newton on R(d) = 0; every array of a step is made once (see ``base``)."""

    name = "newmark"
    takes_back_trials = True
    CONFIG = Schema("integrator 'newmark'", "Average acceleration, iterated to equilibrium with K_I.", {
        "tolerance": Key(Number(minimum=0.0, open_minimum=True), "relative residual that ends a step",
                         default=1e-10),
        "displacement_tolerance": Key(Number(minimum=0.0), "correction below which a step ends at its last trial "
                                      "(m for translations, rad for rotations; 0: the residual test alone)",
                                      default=1e-15),
        "max_iterations": Key(Integer(minimum=1), "module evaluations per step before the run stops", default=25),
        **tangents.KEYS})

    def __init__(self, mass: np.ndarray, damping: np.ndarray, initial_stiffness: np.ndarray, dt: float,
                 *, tolerance: float = 1e-10, displacement_tolerance: float = 1e-15, max_iterations: int = 25,
                 tangent: str = "initial", tangent_min_increment: float = 1e-9) -> None:
        self.check_options(tolerance=tolerance, displacement_tolerance=displacement_tolerance,
                           max_iterations=max_iterations, tangent=tangent, tangent_min_increment=tangent_min_increment)
        super().__init__(mass, damping, initial_stiffness, dt)
        self.beta, self.gamma = 0.25, 0.5
        self.tolerance, self.max_iterations = float(tolerance), int(max_iterations)
        self.displacement_tolerance = float(displacement_tolerance)
        self._c_a = 1.0 / (self.beta * dt * dt)
        self._c_v = self.gamma / (self.beta * dt)
        self.tangent = tangents.Tangent(self.initial_stiffness, tangent, tangent_min_increment)
        k_eff = self._effective(self.initial_stiffness)
        self._lu = factor_once(k_eff, self.name)
        self._floor_per_m = FLOOR_ROUNDING * np.finfo(float).eps * float(np.linalg.norm(k_eff))
        """the residual's rounding floor per metre of displacement (N/m; see the module docstring)"""
        n = self.displacement.size
        self._pred_d, self._pred_v, self._trial = np.zeros(n), np.zeros(n), np.zeros(n)
        self._trial_a, self._trial_v = np.zeros(n), np.zeros(n)
        """a(d) and v(d) at the last trial evaluated by :meth:`_residual`"""
        self._inertia, self._damping_force, self._residual_force = np.zeros(n), np.zeros(n), np.zeros(n)
        self._work = np.zeros(n)
        self._iteration = 0
        self.iterations_total = 0
        self.iterations_max = 0
        """module evaluations per step: their sum and maximum over the run"""

    def _effective(self, stiffness: np.ndarray) -> np.ndarray:
        """K_eff of the tangent ``stiffness`` (N/m)."""
        return stiffness + self._c_a * self.mass + self._c_v * self.damping

    def _residual(self, d: np.ndarray, r: np.ndarray) -> float:
        """R(d) into ``_residual_force`` (a(d), v(d) into ``_trial_a``, ``_trial_v``); the size of the largest
        force term in it (for a relative test)."""
        a, v = self._trial_a, self._trial_v
        np.subtract(d, self._pred_d, out=a)
        a *= self._c_a
        inertia = self.mass.dot(a, self._inertia)
        np.add(self._pred_v, np.multiply(a, self.gamma * self.dt, out=v), out=v)
        damping = self.damping.dot(v, self._damping_force)
        scale = max(np.linalg.norm(self._next_load), np.linalg.norm(inertia), np.linalg.norm(damping),
                    np.linalg.norm(r), np.finfo(float).tiny)
        residual = np.subtract(self._next_load, inertia, out=self._residual_force)
        residual -= damping
        residual -= r
        return scale

    def _solve(self) -> np.ndarray:
        """K_eff^{-1} R, in place of R (the LU factors of K_eff, computed once)."""
        return dgetrs(self._lu[0], self._lu[1], self._residual_force, overwrite_b=1)[0]

    def predict(self, load: np.ndarray) -> np.ndarray:
        if self.tangent.begin(self.displacement, self.restoring_force):
            self._lu = factor_once(self._effective(self.tangent.matrix), self.name)
        dt, b, work = self.dt, self.beta, self._work
        np.add(self.displacement, np.multiply(self.velocity, dt, out=self._pred_d), out=self._pred_d)
        self._pred_d += np.multiply(self.acceleration, dt * dt * (0.5 - b), out=work)
        np.add(self.velocity, np.multiply(self.acceleration, dt * (1.0 - self.gamma), out=self._pred_v),
               out=self._pred_v)
        self._take_load(load)
        np.subtract(self._pred_d, self.displacement, out=work)
        linearised = np.add(self.restoring_force, self.tangent.matrix.dot(work, self._inertia),
                            out=work)
        self._residual(self._pred_d, linearised)
        np.add(self._pred_d, self._solve(), out=self._trial)
        self._iteration = 0
        return self._trial

    def correct(self, restoring_force: np.ndarray) -> np.ndarray | None:
        r = np.asarray(restoring_force, float)
        if self.tangent.method != "initial" and self.tangent.observe(self._trial, r):
            self._lu = factor_once(self._effective(self.tangent.matrix), self.name)
        scale = self._residual(self._trial, r)
        size = float(np.linalg.norm(self._residual_force))
        self._iteration += 1
        if not math.isfinite(size):
            raise IntegratorError(f"Newmark implicit: the residual of step {self.step + 1} is not finite "
                                  f"(a module returned inf or NaN)")
        floor = self._floor_per_m * (float(np.linalg.norm(self._trial)) + float(np.linalg.norm(self._pred_d)))
        converged = size <= max(self.tolerance * scale, floor)
        if not converged:
            correction = self._solve()
            largest = float(np.max(np.abs(correction)))
            converged = largest <= self.displacement_tolerance
        if converged:
            self.displacement[...] = self._trial
            self.velocity[...] = self._trial_v
            self.acceleration[...] = self._trial_a
            self.restoring_force[...] = r
            self.iterations_total += self._iteration
            self.iterations_max = max(self.iterations_max, self._iteration)
            self._commit_step()
            return None
        if self._iteration >= self.max_iterations:
            raise IntegratorError(
                f"Newmark implicit did not converge in step {self.step + 1} after {self._iteration} trials "
                f"(relative residual {size / scale:.3g} > {self.tolerance:g}, and {size:.3g} N above the rounding "
                f"floor {floor:.3g} N; its next correction {largest:.3g} m or rad > displacement_tolerance "
                f"{self.displacement_tolerance:g})")
        self._trial += correction
        return self._trial

    def state(self) -> dict[str, np.ndarray]:
        return {**super().state(), **self.tangent.state()}

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        super().set_state(state)
        if "tangent_counts" in state:  # a checkpoint written before tangent updating has none
            self.tangent.set_state(state)
            self._lu = factor_once(self._effective(self.tangent.matrix), self.name)
