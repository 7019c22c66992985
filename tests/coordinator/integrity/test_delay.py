"""The online delay estimate against the closed-form least-squares fit of a delayed, scaled sine."""

from __future__ import annotations

import numpy as np

from hybridsim.coordinator.integrity.delay import DelayEstimate


def test_a_delayed_scaled_sine_gives_the_closed_form_fit() -> None:
    """x_m = A sin(theta - phi), x_c = sin(theta), phi = w tau: with basis sin(theta) and
    (sin(theta) - sin(theta - w dt))/dt the fit is exact, b = -A dt sin(phi)/sin(w dt),
    a = A cos(phi) - (b/dt)(1 - cos(w dt)) (matching the sin and cos coefficients)."""
    amplitude, omega, tau, dt = 0.9, 2 * np.pi * 3.5, 1.76e-3, 1 / 1024
    phi, wdt = omega * tau, omega * dt
    b = -amplitude * dt * np.sin(phi) / np.sin(wdt)
    a = amplitude * np.cos(phi) - b / dt * (1 - np.cos(wdt))
    estimate = DelayEstimate(dt)
    for t in np.arange(0.0, 3.0, dt):
        estimate.observe(0.01 * np.sin(omega * t), 0.01 * amplitude * np.sin(omega * (t - tau)))
    assert abs(estimate.amplitude - a) < 1e-6
    assert abs(estimate.delay - (-b / a)) < 1e-6 * tau
    assert abs(-b / a - tau) < 1e-3 * tau  # the closed form is tau (1 + O((w tau)^2, (w dt)^2)): 1.6e-4 here
