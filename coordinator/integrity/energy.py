"""Energy indicators updated once a step in O(1): a site's energy error and the structure's energy balance.

Energy error (Mosqueda, Stojadinovic & Mahin 2007, J. Struct. Eng. 133(8), "Real-time error monitoring for
hybrid simulation. Part I: Methodology and experimental verification", Part II: "Structural response
modification due to errors"): the work of the measured interface force on the error between measured and
commanded displacement,

    E_err(t) = integral f_m . d(x_m - x_c)                              [J]

positive when the transfer system adds energy to the structure (an actuator lag tau on a spring k driven by
x_c = A sin(w t) adds pi k A^2 sin(w tau) a cycle), reported against the input energy E_in.

Energy balance (Uang & Bertero 1990, relative form) with every integral by the trapezoidal rule, which is the
rule of the average-acceleration (Newmark 1/4, 1/2) integrator, so that for it the balance closes to roundoff:

    E_in = sum 1/2 (p_n + p_{n+1}) . (x_{n+1} - x_n),  p = -M r a_g
    E_k = 1/2 v^T M v,   E_d = sum 1/2 (C v_n + C v_{n+1}) . (x_{n+1} - x_n),
    E_r = sum 1/2 (r_n + r_{n+1}) . (x_{n+1} - x_n)   (elastic + hysteretic)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


def trapezoid_work(force_before: np.ndarray, force_after: np.ndarray, increment: np.ndarray) -> float:
    """The work [J] of a force varying linearly over a displacement increment [m]: 1/2 (f_n + f_n+1) . dx."""
    return 0.5 * float(np.dot(np.asarray(force_before) + np.asarray(force_after), increment))


@dataclass
class EnergyError:
    """One site's energy error (Mosqueda et al. 2007, Part I), accumulated step by step."""

    value: float = 0.0
    """E_err [J]: positive when the transfer system added energy"""
    _force: np.ndarray | None = None
    _error: np.ndarray | None = None

    def observe(self, command: np.ndarray, measured: np.ndarray, force: np.ndarray) -> float:
        """Add one step: commanded and measured displacement [m], measured force [N]; returns E_err [J]."""
        error = np.asarray(measured, float) - np.asarray(command, float)
        force = np.array(force, float)  # (a row of the run's window: kept past its slot's reuse)
        if self._force is not None:
            self.value += trapezoid_work(self._force, force, error - self._error)
        self._force, self._error = force, error
        return self.value

    def relative(self, input_energy: float) -> float:
        """E_err / E_in (1): the indicator compared with a threshold; 0 before any input energy."""
        return self.value / input_energy if input_energy > 0.0 else 0.0


@dataclass
class EnergyBalance:
    """The whole structure's energy [J] by the trapezoidal rule: input, kinetic, damped and restoring work.

    Two products a step (M v, C v; C v_n kept from the step before) and dot products: O(n^2) dense, O(nnz)
    sparse, no history."""

    mass: Any
    damping: Any
    input: float = 0.0
    kinetic: float = 0.0
    damped: float = 0.0
    restoring: float = 0.0
    _last: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def observe(self, x: np.ndarray, v: np.ndarray, load: np.ndarray, restoring: np.ndarray) -> None:
        """Add one committed step: displacement [m], velocity [m/s], load p = -M r a_g [N], restoring force [N]."""
        x, damped = np.array(x, float), self.damping @ v
        if self._last is not None:
            x0, cv0, p0, r0 = self._last
            dx = x - x0
            self.input += 0.5 * float((p0 + load) @ dx)
            self.damped += 0.5 * float((cv0 + damped) @ dx)
            self.restoring += 0.5 * float((r0 + restoring) @ dx)
        self.kinetic = 0.5 * float(v @ (self.mass @ v))
        self._last = (x, damped, np.array(load, float), np.array(restoring, float))
    @property
    def residual(self) -> float:
        """E_in - (E_k + E_d + E_r) [J]: what the integrator (and the transfer system) added."""
        return self.input - (self.kinetic + self.damped + self.restoring)
