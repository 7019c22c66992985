"""A first-order actuator G(s) = omega_a / (s + omega_a), sampled at the control rate.

The command u is held constant over each control sample (zero-order hold),
so the exact discretisation of dy/dt = omega_a (u - y) is

    y_{m+1} = alpha y_m + (1 - alpha) u_m,    alpha = exp(-omega_a dt)

Relative to the ideal actuator (alpha = 0: the command of sample m is
reached at m + 1, the one-sample delay every sampled loop has) it lags by
alpha dt / (1 - alpha) at low frequency: 0.99 ms for omega_a = 700 rad/s,
dt = 1 ms.  Positions in m.
"""

from __future__ import annotations

import math


class FirstOrderActuator:
    """An actuator whose position follows the held command with time constant 1/omega_a."""

    def __init__(self, bandwidth: float, sample_period: float, position: float = 0.0) -> None:
        """``bandwidth`` omega_a in rad/s (``math.inf`` for the ideal actuator); ``sample_period`` in s."""
        if not (bandwidth > 0):
            raise ValueError(f"actuator bandwidth must be positive (rad/s, inf for ideal), got {bandwidth}")
        if not (sample_period > 0 and math.isfinite(sample_period)):
            raise ValueError(f"control sample period must be a positive number of seconds, got {sample_period}")
        self.bandwidth = float(bandwidth)
        self.sample_period = float(sample_period)
        self.alpha = math.exp(-self.bandwidth * self.sample_period)
        self.position = float(position)

    @classmethod
    def ideal(cls, sample_period: float, position: float = 0.0) -> "FirstOrderActuator":
        """alpha = 0: every command is reached exactly one sample later."""
        return cls(math.inf, sample_period, position)

    @property
    def lag(self) -> float:
        """Low-frequency delay beyond the one-sample loop delay (s): alpha dt / (1 - alpha)."""
        return self.alpha * self.sample_period / (1.0 - self.alpha)

    def advance(self, command: float) -> float:
        """Hold ``command`` (m) for one sample; return the position at the next sample (m)."""
        self.position = self.alpha * self.position + (1.0 - self.alpha) * command
        return self.position
