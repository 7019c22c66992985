"""Constant-average-acceleration Newmark (gamma = 1/2, beta = 1/4) in equivalent-force form.

With the new-step rates written in terms of d_{i+1},

    a_{i+1} = (4/Dt^2)(d_{i+1} - d_i) - (4/Dt) v_i - a_i
    v_{i+1} = (2/Dt)(d_{i+1} - d_i) - v_i

the equation of motion at t_{i+1} becomes the equivalent-force equation

    K_PD d_{i+1} + R_N(d_{i+1}) + R_E(d_{i+1}) = F_EQ,i+1
    K_PD     = 4 M / Dt^2 + 2 C / Dt
    F_EQ,i+1 = F_{i+1} + M (4 d_i / Dt^2 + 4 v_i / Dt + a_i) + C (2 d_i / Dt + v_i)

Units: m, m/s, m/s^2, N, s.
"""

from __future__ import annotations

import numpy as np


class EquivalentForceNewmark:
    """K_PD, F_EQ and the rate update of the average-acceleration scheme over a fixed step Dt."""

    def __init__(self, mass: np.ndarray, damping: np.ndarray, dt: float) -> None:
        if not (dt > 0 and np.isfinite(dt)):
            raise ValueError(f"integration step must be a positive number of seconds, got {dt}")
        self.mass = np.asarray(mass, float)
        self.damping = np.asarray(damping, float)
        self.dt = float(dt)
        self.k_pd = 4.0 * self.mass / dt**2 + 2.0 * self.damping / dt
        """the pseudo-dynamic stiffness K_PD (N/m)"""

    def equivalent_force(self, load_next: np.ndarray, d: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """F_EQ,i+1 (N) from the load F_{i+1} and the state (d_i, v_i, a_i)."""
        dt = self.dt
        return (load_next + self.mass @ (4.0 / dt**2 * d + 4.0 / dt * v + a)
                + self.damping @ (2.0 / dt * d + v))

    def rates(self, d_next: np.ndarray, d: np.ndarray, v: np.ndarray,
              a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(v_{i+1}, a_{i+1}) from d_{i+1} and the state of step i."""
        dt = self.dt
        increment = d_next - d
        return 2.0 / dt * increment - v, 4.0 / dt**2 * increment - 4.0 / dt * v - a
