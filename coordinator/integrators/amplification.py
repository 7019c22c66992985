"""Amplification matrices of the schemes on a linear SDOF, with an experimental error in the loop.

For m = 1, k = Omega^2, c = 2 xi Omega and dt = 1 (so Omega = omega dt), one step maps the state
x_n = (d_n, v_n, a_n, r_n, c_n, c_{n-1}, ...) linearly onto x_{n+1} = A x_n, where r is the committed
restoring force and c the commands sent to the actuator (kept while a delay needs them).  A is built
column by column from the step's own equations, written here from the papers (not from the integrator
classes): :func:`newmark_family_matrix` (alpha-OS, generalized-alpha-OS, HHT and Newmark explicit,
central difference; and, with K_I = K, Newmark implicit and the fixed-iteration schemes, whose
iterations converge in one step on a linear structure) and :func:`kr_alpha_matrix` (KR-alpha, CR).

The measured force is r = k d_m with d_m = (1 - undershoot) c(t - delay): the command delayed by
``delay`` steps (linear interpolation between the commands sent, as a constant actuator delay of
delay x dt seconds), then through a first-order actuator of time constant ``lag`` steps (the command held
over the step: x_m <- e^{-1/lag} x_m + (1 - e^{-1/lag}) c) and reduced by ``undershoot`` (a fraction).
Without error d_m = c.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Error:
    """An actuator error in the loop: a constant delay (in steps of dt), a first-order lag (its time constant in
    steps of dt; the command held over each step) and an undershoot (a fraction)."""

    delay: float = 0.0
    undershoot: float = 0.0
    lag: float = 0.0

    @property
    def history(self) -> int:
        """commands kept besides the current one"""
        return math.ceil(self.delay)

    @property
    def size(self) -> int:
        """entries of the error's own state: the earlier commands, then the lagging actuator's position"""
        return self.history + (1 if self.lag else 0)

    def advance(self, command: float, state: np.ndarray) -> tuple[float, np.ndarray]:
        """The displacement measured when ``command`` is sent, and the error's next state."""
        past = state[:self.history]
        whole, part = divmod(self.delay, 1.0)
        sent = np.concatenate([[command], past])
        i = int(whole)
        reached = sent[i] if part == 0.0 else (1.0 - part) * sent[i] + part * sent[i + 1]
        tail = []
        if self.lag:
            decay = math.exp(-1.0 / self.lag)
            reached = decay * state[self.history] + (1.0 - decay) * reached
            tail = [reached]
        return (1.0 - self.undershoot) * float(reached), np.concatenate([sent[:self.history], tail])


NO_ERROR = Error()


def _matrix(step: Callable[[np.ndarray], np.ndarray], size: int) -> np.ndarray:
    """The matrix of a linear ``step`` on states of ``size`` entries (its columns: the unit states' images)."""
    return np.column_stack([step(np.eye(size)[j]) for j in range(size)])


def newmark_family_matrix(omega_dt: float, *, alpha: float = 0.0, alpha_m: float = 0.0, beta: float,
                          gamma: float, xi: float = 0.0, error: Error = NO_ERROR) -> np.ndarray:
    """A of the one-pass Newmark family (``newmark_family``: predictor d~, v~; force measured at d~;
    [(1+alpha_m) M + (1+alpha) gamma C + (1+alpha) beta K_I] a = ...; r = r~ + K_I beta a) with K_I = k."""
    k, c = omega_dt ** 2, 2.0 * xi * omega_dt

    def step(x: np.ndarray) -> np.ndarray:
        d, v, a, r, past = x[0], x[1], x[2], x[3], x[4:]
        pd, pv = d + v + (0.5 - beta) * a, v + (1.0 - gamma) * a
        reached, after = error.advance(pd, past)
        measured = k * reached
        rhs = -(1.0 + alpha) * (c * pv + measured) + alpha * (c * v + r) + alpha_m * a
        a1 = rhs / ((1.0 + alpha_m) + (1.0 + alpha) * (gamma * c + beta * k))
        return np.concatenate([[pd + beta * a1, pv + gamma * a1, a1, measured + k * beta * a1], after])

    return _matrix(step, 4 + error.size)


def rho_inf_weights(rho_inf: float) -> tuple[float, float, float, float]:
    """alpha_m, alpha_f (weights on step n), beta, gamma of the generalized-alpha method from its spectral
    radius at infinity (Chung & Hulbert 1993), which KR-alpha takes (Kolay & Ricles 2014)."""
    alpha_m, alpha_f = (2.0 * rho_inf - 1.0) / (rho_inf + 1.0), rho_inf / (rho_inf + 1.0)
    gamma = 0.5 - alpha_m + alpha_f
    return alpha_m, alpha_f, 0.25 * (1.0 - alpha_m + alpha_f) ** 2, gamma


def kr_alpha_matrix(omega_dt: float, *, rho_inf: float, xi: float = 0.0, error: Error = NO_ERROR) -> np.ndarray:
    """A of KR-alpha: d_{n+1} = d + v + alpha2 a, v_{n+1} = v + alpha1 a (commanded), then
    (1 - alpha3) a_{n+1} + alpha3 a_n + C v_{n+1-af} + r_{n+1-af} = 0, with the scalar integration
    parameters alpha1, alpha2 = (1/2 + gamma) alpha1, alpha3 of the pre-test k and the declared c."""
    k, c = omega_dt ** 2, 2.0 * xi * omega_dt
    alpha_m, alpha_f, beta, gamma = rho_inf_weights(rho_inf)
    denominator = 1.0 + gamma * c + beta * k
    alpha1 = 1.0 / denominator
    alpha2 = (0.5 + gamma) * alpha1
    alpha3 = (alpha_m + alpha_f * (gamma * c + beta * k)) / denominator

    def step(x: np.ndarray) -> np.ndarray:
        d, v, a, r, past = x[0], x[1], x[2], x[3], x[4:]
        d1, v1 = d + v + alpha2 * a, v + alpha1 * a
        reached, after = error.advance(d1, past)
        r1 = k * reached
        rhs = -(1.0 - alpha_f) * (c * v1 + r1) - alpha_f * (c * v + r) - alpha3 * a
        return np.concatenate([[d1, v1, rhs / (1.0 - alpha3), r1], after])

    return _matrix(step, 4 + error.size)


def spectral_radius(matrix: np.ndarray) -> float:
    """The largest modulus of the eigenvalues."""
    return float(np.max(np.abs(np.linalg.eigvals(matrix))))


def critical_omega_dt(matrix: Callable[[float], np.ndarray], upper: float = 1e3, tolerance: float = 1e-9) -> float:
    """The smallest omega dt at which the spectral radius of ``matrix(omega dt)`` exceeds 1 (inf when none
    below ``upper``): scanned on a logarithmic grid, then bisected."""
    grid = np.geomspace(1e-3, upper, 400)
    unstable = [w for w in grid if spectral_radius(matrix(float(w))) > 1.0 + tolerance]
    if not unstable:
        return math.inf
    high = float(unstable[0])
    low = float(grid[max(np.searchsorted(grid, high) - 1, 0)])
    for _ in range(60):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if spectral_radius(matrix(middle)) <= 1.0 + tolerance else (low, middle)
    return low
