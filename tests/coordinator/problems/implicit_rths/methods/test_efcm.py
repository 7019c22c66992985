"""EFCM: the deadbeat identity V4 and the loop pole of V6."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.problems.implicit_rths.methods import EfcmMethod


@pytest.mark.parametrize("dt", [0.04, 0.01])
def test_v4_deadbeat_gain_with_lead_equals_the_exact_reference(sdof, free_vibration, free_vibration_reference,
                                                               dt: float) -> None:
    """K_I dt = 1: the feedback at sample m + 1 equals the integrator at m, which equals the command."""
    method = EfcmMethod.deadbeat(sdof, dt, 10, rho_e=1.0)
    assert method.gain * method.sample_period == pytest.approx(1.0)
    history, _ = free_vibration(method, steps=30)
    np.testing.assert_allclose(history.displacement, free_vibration_reference(dt, 30).displacement, rtol=0,
                               atol=1e-14)


def test_v6_loop_diverges_at_the_pole_one_minus_gain_times_kappa(sdof, free_vibration) -> None:
    """S1 with rho_E = 0: K_I dt = 400 * 0.004 = 1.6, kappa = K_true / K^ = 6500 / 4500, pole -1.311."""
    _, lab = free_vibration(EfcmMethod(sdof, 0.04, 10, rho_e=0.0), steps=25)
    y = np.abs(np.array(lab.positions))
    growth = np.exp(np.polyfit(np.arange(150, 251), np.log(y[150:251]), 1)[0])
    assert growth == pytest.approx(abs(1.0 - 1.6 * 6500.0 / 4500.0), rel=0.01)
    assert y[-1] > 1e20 * 0.01


def test_paper_gain_is_stable_when_the_matrix_knows_the_specimen(sdof, free_vibration) -> None:
    """S1 with rho_E = 1: kappa = 1, pole 1 - 1.6 = -0.6, the response stays bounded."""
    history, _ = free_vibration(EfcmMethod(sdof, 0.04, 10, rho_e=1.0), steps=25)
    assert np.max(np.abs(history.displacement)) < 0.02


def test_bad_gain_is_refused(sdof) -> None:
    with pytest.raises(ValueError):
        EfcmMethod(sdof, 0.01, 10, gain=0.0)
