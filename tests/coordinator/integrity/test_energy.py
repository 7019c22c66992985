"""The energy indicators against closed forms: a lagged spring's energy error, a linear SDOF's balance."""

from __future__ import annotations

import numpy as np

from hybridsim.coordinator.integrity.energy import EnergyBalance, EnergyError


def test_a_lagged_spring_adds_pi_k_a2_sin_omega_tau_a_cycle() -> None:
    """x_m(t) = x_c(t - tau) on a spring k: E_err over one cycle = pi k A^2 sin(omega tau) (closed form of
    integral k x_m d(x_m - x_c) over a period); trapezoidal error O(dt^2)."""
    k, amplitude, omega, tau, cycles, per_cycle = 2.0e6, 0.01, 2 * np.pi * 3.5, 1.76e-3, 4, 4000
    indicator = EnergyError()
    for t in np.linspace(0.0, cycles * 2 * np.pi / omega, cycles * per_cycle + 1):
        measured = amplitude * np.sin(omega * (t - tau))
        indicator.observe(np.array([amplitude * np.sin(omega * t)]), np.array([measured]), np.array([k * measured]))
    expected = cycles * np.pi * k * amplitude**2 * np.sin(omega * tau)
    assert abs(indicator.value - expected) < 1e-5 * expected


def test_a_linear_sdof_under_average_acceleration_closes_its_balance() -> None:
    """Newmark average acceleration (Chopra, Table 5.4.2) is the trapezoidal rule on v and a, so the
    trapezoidal balance E_in = E_k + E_d + E_r closes to roundoff; the bound is 1e-6 of E_in (the issue's)."""
    m, k, zeta, dt = 1.0e3, 4.0e5, 0.05, 0.005
    c = 2 * zeta * np.sqrt(k * m)
    t = np.arange(0.0, 10.0, dt)
    ground = 3.0 * np.sin(2 * np.pi * 1.3 * t) * np.exp(-0.2 * t)
    balance = EnergyBalance(mass=np.array([[m]]), damping=np.array([[c]]))
    x = v = 0.0
    a = -ground[0]
    k_hat = k + 2 * c / dt + 4 * m / dt**2
    for n, ag in enumerate(ground):
        if n:
            p = -m * ag + m * (4 * x / dt**2 + 4 * v / dt + a) + c * (2 * x / dt + v)
            x_new = p / k_hat
            v_new = 2 * (x_new - x) / dt - v
            a = 4 * (x_new - x) / dt**2 - 4 * v / dt - a
            x, v = x_new, v_new
        balance.observe(np.array([x]), np.array([v]), np.array([-m * ag]), np.array([k * x]))
    assert balance.input > 0.0
    assert abs(balance.restoring - 0.5 * k * x**2) < 1e-9 * balance.input
    assert abs(balance.residual) < 1e-6 * balance.input
