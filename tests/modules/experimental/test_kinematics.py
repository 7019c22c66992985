"""Coupler kinematics of the maRTHS transfer system (§7)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hybridsim.coordinator.problems.marths import parts


def test_lever_arms_and_angles() -> None:
    coupler = parts.coupler()
    # sqrt(0.2667^2 + 0.127^2) = 0.29539447 m (the data's dv_m; SPEC §7 prints 0.2953939)
    assert coupler.arms == pytest.approx((0.29539446508017037,) * 2, rel=1e-15)
    assert coupler.arms[0] == pytest.approx(0.2953939, rel=2e-6)
    assert math.degrees(coupler.angles[1]) == pytest.approx(25.4633, abs=1e-12)
    assert math.degrees(math.atan2(0.127, 0.2667)) == pytest.approx(25.4633, abs=1e-4)


def test_small_rotations_lengthen_one_actuator_and_shorten_the_other() -> None:
    coupler = parts.coupler()
    a1, a2 = coupler.strokes(0.002, 1e-5)
    assert a1 == pytest.approx(0.002 + 0.127 * 1e-5, rel=1e-6)
    assert a2 == pytest.approx(0.002 - 0.127 * 1e-5, rel=1e-6)
    np.testing.assert_array_equal(coupler.strokes(0.003, 0.0), [0.003, 0.003])


@pytest.mark.parametrize("theta", [-0.01, 0.003, 0.01])
def test_inverse_is_exact_in_theta_and_third_order_in_x(theta: float) -> None:
    coupler = parts.coupler()
    x = 0.004
    x_hat, theta_hat = coupler.frame(*coupler.strokes(x, theta))
    assert theta_hat == pytest.approx(theta, rel=1e-12)
    error = abs(x_hat - x)
    assert error == pytest.approx(2e-8 * abs(theta / 0.01) ** 3, rel=0.5)  # the spec: about 2e-8 m at 0.01 rad


def test_vectorised_and_scalar_kinematics_agree() -> None:
    coupler = parts.coupler()
    x, theta = np.linspace(-4e-3, 4e-3, 7), np.linspace(-0.01, 0.01, 7)
    strokes = coupler.strokes(x, theta)
    for i in range(7):
        np.testing.assert_array_equal(strokes[:, i], coupler.strokes(x[i], theta[i]))
