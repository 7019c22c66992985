"""The tracking indicator of an actuator (Mercan & Ricles 2007, Earthquake Engng Struct. Dyn. 36(11), "Stability
and accuracy analysis of outer loop dynamics in real-time pseudodynamic testing of SDOF systems"): the area
enclosed by the synchronization subspace plot (measured x_m against commanded x_c), updated in O(1) a step,

    A_n  = A_{n-1}  + 1/2 (x_m,n + x_m,n-1)(x_c,n - x_c,n-1)
    TA_n = TA_{n-1} + 1/2 (x_c,n + x_c,n-1)(x_m,n - x_m,n-1)
    TI_n = 1/2 (TA_n - A_n)                                              [m^2]

signed so that a lag is positive: x_m(t) = x_c(t - tau) with x_c = X sin(w t) encloses pi X^2 sin(w tau) a cycle.
"""

from __future__ import annotations

import numpy as np

from hybridsim.modules.kernels import inlined

STATE = 3
"""floats of an indicator's state: TI [m^2], the last command and measurement [m] (NaN before any)"""


@inlined
def tracking_step(state: np.ndarray, command: float, measured: float) -> float:
    """Add one step to ``state`` (:data:`STATE`, in place): the update above; returns TI [m^2]."""
    c0, m0 = state[1], state[2]
    if c0 == c0:  # (not NaN: a step observed before)
        area = 0.5 * (measured + m0) * (command - c0)
        transposed = 0.5 * (command + c0) * (measured - m0)
        state[0] += 0.5 * (transposed - area)
    state[1], state[2] = command, measured
    return state[0]


class TrackingIndicator:
    """One actuator's TI [m^2], accumulated step by step from commanded and measured displacement [m]."""

    def __init__(self, value: float = 0.0, last: tuple[float, float] | None = None,
                 state: np.ndarray | None = None) -> None:
        """From TI [m^2] and the last (command, measurement) [m] (None: none yet), kept in ``state`` (a row of
        a site's array of :data:`STATE` columns, updated in place by its kernel) or an array of its own."""
        self.state = np.empty(STATE) if state is None else state
        self.state[:] = (value, *(last if last is not None else (np.nan, np.nan)))

    def observe(self, command: float, measured: float) -> float:
        """Add one step; returns TI [m^2] (positive and growing while the actuator lags)."""
        return tracking_step(self.state, command, measured)

    @property
    def value(self) -> float:
        """TI [m^2]."""
        return float(self.state[0])

    @property
    def command(self) -> float:
        """The last command observed [m] (NaN before any)."""
        return float(self.state[1])
