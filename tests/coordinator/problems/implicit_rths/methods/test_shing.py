"""Shing et al.'s fixed-iteration method: identity V3 and the force correction of eq. (11)."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.problems.implicit_rths.methods import ShingMethod

K_E = 2e3


@pytest.mark.parametrize("dt", [0.04, 0.01, 0.1])
def test_v3_rho_one_linear_ideal_actuator_equals_the_exact_reference(sdof, free_vibration, free_vibration_reference,
                                                                      dt: float) -> None:
    """Every trial is one exact Newton step on a linear equation, so d_c^(N) = d* and eq. (10) changes nothing."""
    history, _ = free_vibration(ShingMethod(sdof, dt, 10, rho_e=1.0), steps=30)
    reference = free_vibration_reference(dt, 30)
    np.testing.assert_allclose(history.displacement, reference.displacement, rtol=0, atol=1e-14)
    assert set(history.iterations) == {10}


def test_commands_are_interpolated_towards_the_trial(sdof, free_vibration, free_vibration_reference) -> None:
    """With rho_E = 1 and the ideal actuator, the k-th command of step i is d_i + (k/N)(d*_{i+1} - d_i)."""
    _, lab = free_vibration(ShingMethod(sdof, 0.01, 10), steps=5)
    d = free_vibration_reference(0.01, 5).displacement[:, 0]
    expected = [d[i] + k / 10 * (d[i + 1] - d[i]) for i in range(5) for k in range(1, 11)]
    np.testing.assert_allclose(lab.commands, expected, rtol=0, atol=1e-15)


def test_force_correction_makes_the_force_consistent_with_the_step_end_displacement(sdof, free_vibration) -> None:
    """Eq. (11) with rho_E = 1 on a linear specimen: f + K_E (d_e - y) = K_E y + K_E (d_e - y) = K_E d_e."""
    history, lab = free_vibration(ShingMethod(sdof, 0.01, 10), steps=50, bandwidth=700.0)
    assert not np.allclose(lab.positions[10::10], history.displacement[1:, 0], atol=1e-6)  # the actuator lags
    np.testing.assert_allclose(history.specimen_force, K_E * history.displacement[:, 0], rtol=1e-12, atol=1e-14)


def test_second_order_interpolation_passes_through_its_three_points(sdof, free_vibration) -> None:
    """The last command (x = 1) is the trial itself, so the order changes nothing in the V3 setting."""
    first, _ = free_vibration(ShingMethod(sdof, 0.04, 10, order=1), steps=10)
    second, _ = free_vibration(ShingMethod(sdof, 0.04, 10, order=2), steps=10)
    np.testing.assert_allclose(second.displacement, first.displacement, rtol=0, atol=1e-14)


def test_bad_options_are_refused(sdof) -> None:
    with pytest.raises(ValueError):
        ShingMethod(sdof, 0.01, 10, order=3)
    with pytest.raises(ValueError):
        ShingMethod(sdof, 0.01, 10, rho_e=1.5)
