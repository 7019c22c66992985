"""The tracking indicator of an actuator (Mercan & Ricles 2007, Earthquake Engng Struct. Dyn. 36(11), "Stability
and accuracy analysis of outer loop dynamics in real-time pseudodynamic testing of SDOF systems"): the area
enclosed by the synchronization subspace plot (measured x_m against commanded x_c), updated in O(1) a step,

    A_n  = A_{n-1}  + 1/2 (x_m,n + x_m,n-1)(x_c,n - x_c,n-1)
    TA_n = TA_{n-1} + 1/2 (x_c,n + x_c,n-1)(x_m,n - x_m,n-1)
    TI_n = 1/2 (TA_n - A_n)                                              [m^2]

signed so that a lag is positive: x_m(t) = x_c(t - tau) with x_c = X sin(w t) encloses pi X^2 sin(w tau) a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TrackingIndicator:
    """One actuator's TI [m^2], accumulated step by step from commanded and measured displacement [m]."""

    value: float = 0.0
    _last: tuple[float, float] | None = None

    def observe(self, command: float, measured: float) -> float:
        """Add one step; returns TI [m^2] (positive and growing while the actuator lags)."""
        if self._last is not None:
            c0, m0 = self._last
            area = 0.5 * (measured + m0) * (command - c0)
            transposed = 0.5 * (command + c0) * (measured - m0)
            self.value += 0.5 * (transposed - area)
        self._last = (command, measured)
        return self.value

    @property
    def command(self) -> float:
        """The last command observed [m] (NaN before any)."""
        return self._last[0] if self._last is not None else float("nan")
