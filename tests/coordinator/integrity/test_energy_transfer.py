"""The hysteretic energy is the specimens': a linear spring behind a lagging actuator dissipates none, though the
restoring work it returns to the structure is less than its strain energy by all the lag added.

The lagging SDOF of test_hold (3.5 Hz, a first-order actuator 125/(s + 125), no compensation, a velocity pulse),
watched with a threshold never crossed, under alpha-OS (alpha = 0, beta = 1/4). With u the measured displacement,
c the command, x = c + e the committed displacement (e = beta dt^2 a_n+1, the scheme's correction) and the
integrator's force r = k u + K_I e (K_I = k), the trapezoidal sums telescope (sum mean(a) db + mean(b) da = ab) to

    E_h = W_r + T - r^2 / (2k) = -k sum mean(e) d(u - c)

and in the free vibration a = -w^2 x, so e = -beta (w dt)^2 x and E_h = beta (w dt)^2 T: 3.02e-3 T here, where
W_r - E_s,el is -T. The neglected terms are second order, (w tau)^2 = 2.7e-2 and zeta_eff^2 = 4e-3: the first-order
ones (the lag's u - c, the damping's share of a) are in quadrature with x and average out over a cycle.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridsim.coordinator.simulation import run_experiment
from tests.coordinator.integrity.test_hold import DT, W, lagging_sdof


def test_a_linear_specimen_behind_a_lag_dissipates_only_the_schemes_share_of_the_energy_error(tmp_path: Path) -> None:
    result = run_experiment(lagging_sdof(tmp_path, "lag", {"kind": "none"}, {"energy_error": 1e9, "action": "warn"}))
    figures = result.summary["integrity"]
    balance, added = figures["balance_j"], figures["modules"]["column"]["energy_error_j"]
    predicted = 0.25 * (W * DT) ** 2 * added
    print(f"T = {added:.3f} J over E_in = {balance['input']:.3f} J; E_h = {balance['hysteretic']:.4g} J, "
          f"beta (w dt)^2 T = {predicted:.4g} J; W_r - E_s,el = {balance['restoring'] - balance['elastic']:.4g} J")
    assert added > 20 * balance["input"]  # the lag added far more than the pulse put in
    assert balance["hysteretic"] == pytest.approx(predicted, rel=0.05)  # (the neglected: 2.7e-2 at most)
