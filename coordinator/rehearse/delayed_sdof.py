"""A linear SDOF with a delayed lab spring: the closed-form delay margin a rehearsal's bisection must find.

The numerical part (mass m in kg, damping c in N*s/m, stiffness k_n in N/m) is integrated by the coordinator;
the lab spring k_e (N/m) answers the displacement commanded tau seconds earlier (an actuator delay):

    m x''(t) + c x'(t) + k_n x(t) + k_e x(t - tau) = 0.

Derivation of the margin (e.g. Horiuchi et al. 1999, EESD 28(10); Chen & Ricles 2008, EESD 37(4)).  The
characteristic equation is m s^2 + c s + k_n + k_e exp(-s tau) = 0; at tau = 0 it is a damped oscillator of
stiffness k_n + k_e (stable for c > 0).  Stability is lost when a root crosses the imaginary axis, s = i w:

    k_e exp(-i w tau) = m w^2 - k_n - i c w.

Magnitudes: (m w^2 - k_n)^2 + (c w)^2 = k_e^2, a quadratic in W = w^2,
m^2 W^2 + (c^2 - 2 m k_n) W + k_n^2 - k_e^2 = 0, with exactly one positive root when k_e > k_n (the constant
term is negative); for k_e <= k_n (and c^2 >= 2 m k_n) no crossing exists and any delay is stable.
Phases: -w tau = arg(m w^2 - k_n - i c w) = atan2(-c w, m w^2 - k_n) (mod 2 pi).  As c w > 0,
atan2(-c w, .) = -atan2(c w, .) with atan2(c w, .) in (0, pi), so the smallest positive delay is

    tau* = atan2(c w*, m w*^2 - k_n) / w*   (s),

the first quadrant when the lab spring sees w* above the numerical part's own frequency (m w*^2 > k_n).
The crossing is from stable to unstable (the delayed spring's phase lag feeds energy in), so runs with
tau < tau* decay and those with tau > tau* grow.

:func:`simulate` is a run of that loop in time: the numerical part's exact zero-order-hold map over each step
dt and the lab force held over the step at its midpoint value, -k_e x(t_k + dt/2 - tau), the delayed
displacement linearly interpolated between samples (second order in dt); :func:`decays` says whether the
run's peaks decay.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import expm

from hybridsim.coordinator.errors import UsageError


@dataclass(frozen=True)
class DelayedSpringSdof:
    """m (kg), c (N*s/m), k_n (N/m) integrated numerically; k_e (N/m) the delayed lab spring."""

    m: float
    c: float
    k_n: float
    k_e: float

    def crossing_frequency(self) -> float:
        """w* (rad/s): the positive root of (m w^2 - k_n)^2 + (c w)^2 = k_e^2 (needs k_e > k_n)."""
        if not self.k_e > self.k_n:
            raise UsageError(f"delayed SDOF: a delay margin needs k_e > k_n, got {self.k_e} and {self.k_n}")
        b = self.c ** 2 - 2 * self.m * self.k_n
        big_w = (-b + math.sqrt(b * b - 4 * self.m ** 2 * (self.k_n ** 2 - self.k_e ** 2))) / (2 * self.m ** 2)
        return math.sqrt(big_w)

    def delay_margin(self) -> float:
        """tau* (s): the smallest delay at which the loop is marginally stable."""
        w = self.crossing_frequency()
        return math.atan2(self.c * w, self.m * w * w - self.k_n) / w


def simulate(sdof: DelayedSpringSdof, tau: float, dt: float, duration: float, v0: float = 1.0) -> np.ndarray:
    """x (m) at t = 0, dt, ..., from rest at x = 0 with velocity ``v0`` (m/s), x = 0 before t = 0.

    Needs tau >= dt / 2 (the midpoint of the delayed displacement then lies in the samples already known).
    """
    if not tau >= dt / 2:
        raise UsageError(f"delayed SDOF: the delay {tau} s must be at least half the step {dt} s")
    a = np.array([[0.0, 1.0, 0.0], [-sdof.k_n / sdof.m, -sdof.c / sdof.m, 1.0 / sdof.m], [0.0, 0.0, 0.0]])
    phi = expm(a * dt)
    (p11, p12, g1), (p21, p22, g2) = phi[0].tolist(), phi[1].tolist()
    steps = int(round(duration / dt))
    x = [0.0] * (steps + 1)
    xk, vk = 0.0, v0
    lag = tau / dt - 0.5
    for k in range(steps):
        f = k - lag
        i = math.floor(f)
        delayed = 0.0 if i < 0 else x[i] + (f - i) * (x[i + 1] - x[i]) if i < k else x[k]
        force = -sdof.k_e * delayed
        xk, vk = p11 * xk + p12 * vk + g1 * force, p21 * xk + p22 * vk + g2 * force
        x[k + 1] = xk
    return np.asarray(x)


def decays(x: np.ndarray) -> bool:
    """True when the run's oscillation decays: the peaks of |x| in its last quarter below those of its second."""
    quarter = len(x) // 4
    return float(np.max(np.abs(x[3 * quarter:]))) < float(np.max(np.abs(x[quarter:2 * quarter])))
