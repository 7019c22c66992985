"""A fixed number of iterations per step (Schellenberg, Mahin & Fenves 2009, PEER 2009/104, section 3.3;
OpenSees' ``HHTHSFixedNumIter`` and ``NewmarkHSFixedNumIter``): an implicit step of known cost for a
real-time test, the modules commanded along an interpolated path that ends at the step's target.

The generalized-alpha equation of motion (weights on the new values, as OpenSees writes them):

    R(U) = alpha_f f_{n+1} + (1 - alpha_f) f_n - M [(1 - alpha_i) a_n + alpha_i a(U)]
           - C [(1 - alpha_f) v_n + alpha_f v(U)] - (1 - alpha_f) r_n - alpha_f r(U) = 0
    a(U) = (U - d_n)/(beta dt^2) - v_n/(beta dt) - (1/(2 beta) - 1) a_n,  v(U) = v_n + dt ((1-gamma) a_n + gamma a(U))

Iteration k = 1..N (N = ``iterations``): the Newton target T_k = U_{k-1} + K_eff^{-1} R(U_{k-1}) from
the last evaluated U_{k-1} (U_0 = d_n with the committed r_n), then the command U_k is the Lagrange
polynomial through (x = 1: T_k), (0: d_n), (-1: d_{n-1}), (-2: d_{n-2}) of order ``poly_order``
evaluated at x = k/N (OpenSees' interpolation: the last iteration, x = 1, commands T_N itself), and the
modules answer r(U_k).  After the N-th answer the step ends at d_{n+1} = U_N + K_eff^{-1} R(U_N)
(OpenSees' final update, ``updDomFlag``) with r_{n+1} = r(U_N) + K (d_{n+1} - U_N).

K_eff = alpha_f K + alpha_f gamma/(beta dt) C + alpha_i/(beta dt^2) M with K the pre-test stiffness
K_I, or the tangent updated from the measured increments (``tangent``).  A hybrid test commands U_k and
weights the measured forces; OpenSees evaluates its elements at the weighted displacement
(1 - alpha_f) d_n + alpha_f U_k and its first residual at the elements' last state: on a linear
structure both end every step at the generalized-alpha solution, on a yielding one they differ by the
interpolation (docs/integrators.md).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.lapack import dgetrs

from hybridsim.coordinator.integrators import tangent as tangents
from hybridsim.coordinator.integrators.base import Integrator, factor_once
from hybridsim.modules.config_schema import Integer, Key, Number, Schema


def lagrange_weights(x: float, order: int) -> tuple[float, ...]:
    """Weights of the values at x = 1, 0, -1, -2 (the first order + 1) of the interpolating polynomial at x."""
    if order == 1:
        return x, 1.0 - x
    if order == 2:
        return x * (x + 1.0) / 2.0, -(x - 1.0) * (x + 1.0), (x - 1.0) * x / 2.0
    return (x * (x + 1.0) * (x + 2.0) / 6.0, -(x - 1.0) * (x + 1.0) * (x + 2.0) / 2.0,
            (x - 1.0) * x * (x + 2.0) / 2.0, -(x - 1.0) * x * (x + 1.0) / 6.0)


ITERATION_KEYS = {
    "iterations": Key(Integer(minimum=1), "module evaluations per step (the step's fixed cost)", required=True),
    "poly_order": Key(Integer(minimum=1, maximum=3), "order of the Lagrange interpolation of the commands "
                      "(OpenSees' -polyOrder)", default=2),
    **tangents.KEYS}


class FixedIterationsIntegrator(Integrator):
    """N evaluations per step along the interpolated path; the weights given by the subclass."""

    takes_back_trials = True

    def __init__(self, mass: np.ndarray, damping: np.ndarray, initial_stiffness: np.ndarray, dt: float, *,
                 alpha_i: float, alpha_f: float, beta: float, gamma: float, iterations: int, poly_order: int,
                 tangent: str, tangent_min_increment: float) -> None:
        super().__init__(mass, damping, initial_stiffness, dt)
        self.alpha_i, self.alpha_f, self.beta, self.gamma = alpha_i, alpha_f, beta, gamma
        self.iterations, self.poly_order = int(iterations), int(poly_order)
        self._c_a, self._c_v = 1.0 / (beta * dt * dt), gamma / (beta * dt)
        self.tangent = tangents.Tangent(self.initial_stiffness, tangent, tangent_min_increment)
        self._lu = factor_once(self._effective(self.initial_stiffness), self.name)
        n = self.displacement.size
        self.history = np.zeros((2, n))
        """d_{n-1}, d_{n-2} (m)"""
        self._trial, self._target, self._residual = np.zeros(n), np.zeros(n), np.zeros(n)
        self._a, self._v, self._r = np.zeros(n), np.zeros(n), np.zeros(n)
        self._iteration = 0

    def _effective(self, stiffness: np.ndarray) -> np.ndarray:
        return self.alpha_f * (stiffness + self._c_v * self.damping) + self.alpha_i * self._c_a * self.mass

    def start(self, displacement: np.ndarray, velocity: np.ndarray, load: np.ndarray,
              restoring_force: np.ndarray) -> None:
        super().start(displacement, velocity, load, restoring_force)
        self.history[...] = self.displacement  # OpenSees starts its past displacements at the initial one

    def _kinematics(self, u: np.ndarray) -> None:
        """a(U), v(U) of the Newmark relations into ``_a``, ``_v``."""
        dt = self.dt
        np.subtract(u, self.displacement, out=self._a)
        self._a *= self._c_a
        self._a -= self.velocity / (self.beta * dt)
        self._a -= (0.5 / self.beta - 1.0) * self.acceleration
        np.add(self.velocity, dt * ((1.0 - self.gamma) * self.acceleration + self.gamma * self._a), out=self._v)

    def _correction(self, u: np.ndarray, r: np.ndarray) -> np.ndarray:
        """K_eff^{-1} R(U) (m) for the modules' answer r at U."""
        ai, af = self.alpha_i, self.alpha_f
        self._kinematics(u)
        m, c = self.mass, self.damping
        rhs = self._residual
        rhs[...] = af * self._next_load + (1.0 - af) * self.load
        rhs -= m @ ((1.0 - ai) * self.acceleration + ai * self._a)
        rhs -= c @ ((1.0 - af) * self.velocity + af * self._v)
        rhs -= (1.0 - af) * self.restoring_force + af * r
        return dgetrs(self._lu[0], self._lu[1], rhs, overwrite_b=1)[0]

    def _command(self) -> np.ndarray:
        """U_k: the interpolation of the target at x = k/N."""
        weights = lagrange_weights(self._iteration / self.iterations, self.poly_order)
        points = (self._target, self.displacement, self.history[0], self.history[1])
        self._trial[...] = 0.0
        for w, p in zip(weights, points):
            self._trial += w * p
        return self._trial

    def predict(self, load: np.ndarray) -> np.ndarray:
        self._take_load(load)
        if self.tangent.begin(self.displacement, self.restoring_force):
            self._lu = factor_once(self._effective(self.tangent.matrix), self.name)
        np.add(self.displacement, self._correction(self.displacement, self.restoring_force), out=self._target)
        self._iteration = 1
        return self._command()

    def correct(self, restoring_force: np.ndarray) -> np.ndarray | None:
        r = np.asarray(restoring_force, float)
        if self.tangent.method != "initial" and self.tangent.observe(self._trial, r):
            self._lu = factor_once(self._effective(self.tangent.matrix), self.name)
        step = self._correction(self._trial, r)
        if self._iteration < self.iterations:
            np.add(self._trial, step, out=self._target)
            self._iteration += 1
            return self._command()
        final = self._trial + step
        self._kinematics(final)
        self.history[1] = self.history[0]
        self.history[0] = self.displacement
        self.restoring_force[...] = r + self.tangent.matrix @ step
        self.displacement[...] = final
        self.velocity[...] = self._v
        self.acceleration[...] = self._a
        self._commit_step()
        return None

    def state(self) -> dict[str, np.ndarray]:
        return {**super().state(), "history": self.history.copy(), **self.tangent.state()}

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        super().set_state(state)
        self.history = np.array(state["history"], float)
        self.tangent.set_state(state)
        self._lu = factor_once(self._effective(self.tangent.matrix), self.name)


class HHTFixedIterationsIntegrator(FixedIterationsIntegrator):
    """HHTHSFixedNumIter: generalized-alpha weights from rho_inf (Chung & Hulbert 1993)."""

    name = "hht-fixed-iterations"
    CONFIG = Schema("integrator 'hht-fixed-iterations'", "Generalized-alpha with a fixed number of iterations "
                    "(OpenSees' HHTHSFixedNumIter).", {
                        "rho_inf": Key(Number(minimum=0.0, maximum=1.0),
                                       "spectral radius at infinite omega dt, in [0, 1]", default=1.0),
                        **ITERATION_KEYS})

    def __init__(self, mass: np.ndarray, damping: np.ndarray, initial_stiffness: np.ndarray, dt: float, *,
                 iterations: int, rho_inf: float = 1.0, poly_order: int = 2, tangent: str = "initial",
                 tangent_min_increment: float = 1e-9) -> None:
        self.check_options(rho_inf=rho_inf, iterations=iterations, poly_order=poly_order, tangent=tangent,
                           tangent_min_increment=tangent_min_increment)
        super().__init__(mass, damping, initial_stiffness, dt, alpha_i=(2.0 - rho_inf) / (1.0 + rho_inf),
                         alpha_f=1.0 / (1.0 + rho_inf), beta=1.0 / (1.0 + rho_inf) ** 2,
                         gamma=(3.0 - rho_inf) / (2.0 * (1.0 + rho_inf)), iterations=iterations,
                         poly_order=poly_order, tangent=tangent, tangent_min_increment=tangent_min_increment)


class NewmarkFixedIterationsIntegrator(FixedIterationsIntegrator):
    """NewmarkHSFixedNumIter: Newmark's beta and gamma, no weights (alpha_i = alpha_f = 1)."""

    name = "newmark-fixed-iterations"
    CONFIG = Schema("integrator 'newmark-fixed-iterations'", "Newmark with a fixed number of iterations "
                    "(OpenSees' NewmarkHSFixedNumIter).", {
                        "beta": Key(Number(minimum=0.0, open_minimum=True, maximum=0.5), "Newmark's beta",
                                    default=0.25),
                        "gamma": Key(Number(minimum=0.5, maximum=1.0), "Newmark's gamma", default=0.5),
                        **ITERATION_KEYS})

    def __init__(self, mass: np.ndarray, damping: np.ndarray, initial_stiffness: np.ndarray, dt: float, *,
                 iterations: int, beta: float = 0.25, gamma: float = 0.5, poly_order: int = 2,
                 tangent: str = "initial", tangent_min_increment: float = 1e-9) -> None:
        self.check_options(beta=beta, gamma=gamma, iterations=iterations, poly_order=poly_order, tangent=tangent,
                           tangent_min_increment=tangent_min_increment)
        super().__init__(mass, damping, initial_stiffness, dt, alpha_i=1.0, alpha_f=1.0, beta=beta, gamma=gamma,
                         iterations=iterations, poly_order=poly_order, tangent=tangent,
                         tangent_min_increment=tangent_min_increment)
