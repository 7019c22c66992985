"""Online delay and amplitude estimate of an actuator: recursive least squares with forgetting (Ljung 1999,
System Identification, Sec. 11.2) of the first-order model of a delayed, scaled response,

    x_m,n = a x_c,n + b (x_c,n - x_c,n-1)/dt        (x_m(t) ~ A x_c(t - tau) ~ A x_c - A tau dx_c/dt)

amplitude A ~ a (1), delay tau ~ -b/a [s]; two parameters, so O(1) a step (a 2 x 2 covariance update).
"""

from __future__ import annotations

import numpy as np


class DelayEstimate:
    """One actuator's online delay [s] and amplitude factor (1) from commanded and measured displacement [m]."""

    def __init__(self, dt: float, forgetting: float = 0.999, covariance: float = 1e6) -> None:
        """``dt``: the step [s]; ``forgetting``: lambda in (0, 1], memory ~ 1/(1 - lambda) steps."""
        if not 0.0 < forgetting <= 1.0:
            raise ValueError(f"forgetting {forgetting} is outside (0, 1]: give a value such as 0.999")
        self.dt, self.forgetting = dt, forgetting
        self.theta = np.array([1.0, 0.0])
        self._p = covariance * np.eye(2)
        self._command: float | None = None

    def observe(self, command: float, measured: float) -> None:
        """Add one step's commanded and measured displacement [m]."""
        if self._command is not None:
            phi = np.array([command, (command - self._command) / self.dt])
            p_phi = self._p @ phi
            gain = p_phi / (self.forgetting + phi @ p_phi)
            self.theta = self.theta + gain * (measured - phi @ self.theta)
            self._p = (self._p - np.outer(gain, p_phi)) / self.forgetting
        self._command = command

    @property
    def amplitude(self) -> float:
        """A (1): measured over commanded amplitude."""
        return float(self.theta[0])

    @property
    def delay(self) -> float:
        """tau [s]: positive for a lag; 0 when the amplitude estimate is 0."""
        return float(-self.theta[1] / self.theta[0]) if self.theta[0] else 0.0
