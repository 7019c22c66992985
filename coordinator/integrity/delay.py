"""Online delay and amplitude estimate of an actuator: recursive least squares with forgetting (Ljung 1999,
System Identification, Sec. 11.2) of the first-order model of a delayed, scaled response,

    x_m,n = a x_c,n + b (x_c,n - x_c,n-1)/dt        (x_m(t) ~ A x_c(t - tau) ~ A x_c - A tau dx_c/dt)

amplitude A ~ a (1), delay tau ~ -b/a [s]; two parameters, so O(1) a step (a 2 x 2 covariance update).
"""

from __future__ import annotations


STATE = 6
"""floats in :meth:`DelayEstimate.state`"""


class DelayEstimate:
    """One actuator's online delay [s] and amplitude factor (1) from commanded and measured displacement [m].

    The 2 x 2 update is written out in floats (numpy's small-array calls cost 20 us a step, this about 2)."""

    def __init__(self, dt: float, forgetting: float = 0.999, covariance: float = 1e6) -> None:
        """``dt``: the step [s]; ``forgetting``: lambda in (0, 1], memory ~ 1/(1 - lambda) steps."""
        if not 0.0 < forgetting <= 1.0:
            raise ValueError(f"forgetting {forgetting} is outside (0, 1]: give a value such as 0.999")
        self.dt, self.forgetting = dt, forgetting
        self.a, self.b = 1.0, 0.0
        """theta = (a, b) of the model above"""
        self._p = [covariance, 0.0, covariance]
        """the covariance P, symmetric: P00, P01, P11"""
        self._command: float | None = None

    def observe(self, command: float, measured: float) -> None:
        """Add one step's commanded and measured displacement [m]: theta += g e, P = (P - g (P phi)^T) / lambda,
        g = P phi / (lambda + phi^T P phi)."""
        if self._command is not None:
            f0, f1 = command, (command - self._command) / self.dt
            p00, p01, p11 = self._p
            q0, q1 = p00 * f0 + p01 * f1, p01 * f0 + p11 * f1
            denominator = self.forgetting + f0 * q0 + f1 * q1
            g0, g1 = q0 / denominator, q1 / denominator
            error = measured - (self.a * f0 + self.b * f1)
            self.a, self.b = self.a + g0 * error, self.b + g1 * error
            lam = self.forgetting
            self._p = [(p00 - g0 * q0) / lam, (p01 - g0 * q1) / lam, (p11 - g1 * q1) / lam]
        self._command = command

    def state(self) -> list[float]:
        """What a checkpoint keeps (:data:`STATE` floats): a, b, P00, P01, P11 and the last command [m]."""
        return [self.a, self.b, *self._p, self._command if self._command is not None else float("nan")]

    def restore(self, state: list[float]) -> None:
        """Continue from :meth:`state` (a NaN command: none observed yet)."""
        self.a, self.b, *p, command = state
        self._p = list(p)
        self._command = None if command != command else command

    @property
    def amplitude(self) -> float:
        """A (1): measured over commanded amplitude."""
        return self.a

    @property
    def delay(self) -> float:
        """tau [s]: positive for a lag; 0 when the amplitude estimate is 0."""
        return -self.b / self.a if self.a else 0.0
