"""The tracking indicator against the closed-form area of a lagged sine's synchronization subspace ellipse."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.integrity.tracking import TrackingIndicator


@pytest.mark.parametrize("tau", [1.76e-3, -1.0e-3])
def test_a_lag_encloses_pi_x2_sin_omega_tau_a_cycle(tau: float) -> None:
    """x_m = X sin(w (t - tau)): integral over a cycle of x_c dx_m - x_m dx_c = 2 pi X^2 sin(w tau), half of it
    the TI; a lead (tau < 0) is negative. Trapezoidal error O(dt^2)."""
    amplitude, omega, cycles, per_cycle = 0.01, 2 * np.pi * 3.5, 3, 4000
    indicator = TrackingIndicator()
    for t in np.linspace(0.0, cycles * 2 * np.pi / omega, cycles * per_cycle + 1):
        indicator.observe(amplitude * np.sin(omega * t), amplitude * np.sin(omega * (t - tau)))
    expected = cycles * np.pi * amplitude**2 * np.sin(omega * tau)
    assert abs(indicator.value - expected) < 1e-5 * abs(expected)
