"""Online delay and amplitude estimate of an actuator: recursive least squares with forgetting (Ljung 1999,
System Identification, Sec. 11.2) of the first-order model of a delayed, scaled response,

    x_m,n = a x_c,n + b (x_c,n - x_c,n-1)/dt        (x_m(t) ~ A x_c(t - tau) ~ A x_c - A tau dx_c/dt)

amplitude A ~ a (1), delay tau ~ -b/a [s]; two parameters, so O(1) a step (a 2 x 2 covariance update).
"""

from __future__ import annotations

import numpy as np

from hybridsim.modules.kernels import inlined

STATE = 6
"""floats in :meth:`DelayEstimate.state`: a, b, P00, P01, P11 and the last command [m] (NaN before any)"""


@inlined
def delay_step(state: np.ndarray, dt: float, forgetting: float, command: float, measured: float) -> None:
    """Add one step to ``state`` (:data:`STATE`, in place): theta += g e, P = (P - g (P phi)^T) / lambda,
    g = P phi / (lambda + phi^T P phi), phi = (x_c,n, (x_c,n - x_c,n-1)/dt); ``dt`` [s], ``forgetting`` lambda."""
    if state[5] == state[5]:  # (not NaN: a command observed before)
        f0, f1 = command, (command - state[5]) / dt
        p00, p01, p11 = state[2], state[3], state[4]
        q0, q1 = p00 * f0 + p01 * f1, p01 * f0 + p11 * f1
        denominator = forgetting + f0 * q0 + f1 * q1
        g0, g1 = q0 / denominator, q1 / denominator
        error = measured - (state[0] * f0 + state[1] * f1)
        state[0], state[1] = state[0] + g0 * error, state[1] + g1 * error
        state[2], state[3], state[4] = (p00 - g0 * q0) / forgetting, (p01 - g0 * q1) / forgetting, \
            (p11 - g1 * q1) / forgetting
    state[5] = command


@inlined
def delay_of(state: np.ndarray) -> float:
    """tau = -b / a [s] of ``state`` (:data:`STATE`): positive for a lag; 0 when the amplitude estimate is 0."""
    return -state[1] / state[0] if state[0] else 0.0


class DelayEstimate:
    """One actuator's online delay [s] and amplitude factor (1) from commanded and measured displacement [m]."""

    def __init__(self, dt: float, forgetting: float = 0.999, covariance: float = 1e6,
                 state: np.ndarray | None = None) -> None:
        """``dt``: the step [s]; ``forgetting``: lambda in (0, 1], memory ~ 1/(1 - lambda) steps; ``state``: where
        its :data:`STATE` floats live (a row of a site's array, updated in place by its kernel; default its own)."""
        if not 0.0 < forgetting <= 1.0:
            raise ValueError(f"forgetting {forgetting} is outside (0, 1]: give a value such as 0.999")
        self.dt, self.forgetting = dt, forgetting
        self._state = np.empty(STATE) if state is None else state
        self._state[:] = (1.0, 0.0, covariance, 0.0, covariance, np.nan)
        """theta = (a, b) of the model above, the covariance P (symmetric: P00, P01, P11), the last command"""

    def observe(self, command: float, measured: float) -> None:
        """Add one step's commanded and measured displacement [m] (:func:`delay_step`)."""
        delay_step(self._state, self.dt, self.forgetting, command, measured)

    def state(self) -> list[float]:
        """What a checkpoint keeps (:data:`STATE` floats): a, b, P00, P01, P11 and the last command [m]."""
        return [float(v) for v in self._state]

    def restore(self, state: list[float]) -> None:
        """Continue from :meth:`state` (a NaN command: none observed yet)."""
        self._state[:] = state

    @property
    def a(self) -> float:
        """a (1) of the model above."""
        return float(self._state[0])

    @property
    def b(self) -> float:
        """b [s] of the model above."""
        return float(self._state[1])

    @property
    def amplitude(self) -> float:
        """A (1): measured over commanded amplitude."""
        return self.a

    @property
    def delay(self) -> float:
        """tau [s]: positive for a lag; 0 when the amplitude estimate is 0."""
        return delay_of(self._state)
