"""The first-order actuator 700/(700+s) under a zero-order hold, against closed forms and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.signal

from hybridsim.modules.plant.first_order import FirstOrderActuator


def test_pole_matches_scipy_zero_order_hold_discretisation() -> None:
    actuator = FirstOrderActuator(700.0, 1e-3)
    ad, bd, *_ = scipy.signal.cont2discrete(
        tuple(np.array([[v]]) for v in (-700.0, 700.0, 1.0, 0.0)), 1e-3, method="zoh")
    assert actuator.alpha == pytest.approx(ad[0, 0], rel=1e-14)
    assert 1.0 - actuator.alpha == pytest.approx(bd[0, 0], rel=1e-12)
    assert actuator.alpha == pytest.approx(0.4966, abs=5e-5)  # the specification's value


def test_step_response_equals_the_sampled_continuous_response() -> None:
    """A held unit step is reached as 1 - exp(-omega t) at every sample (exact under ZOH)."""
    actuator = FirstOrderActuator(700.0, 1e-3)
    reached = [actuator.advance(1.0) for _ in range(10)]
    expected = [1.0 - math.exp(-700.0 * 1e-3 * m) for m in range(1, 11)]
    assert reached == pytest.approx(expected, rel=1e-13)


def test_low_frequency_lag_beyond_one_sample_is_about_one_millisecond() -> None:
    """Group delay of (1 - alpha) z^-1 / (1 - alpha z^-1) at 1 Hz, minus the one-sample loop delay."""
    actuator = FirstOrderActuator(700.0, 1e-3)
    a = actuator.alpha
    _, delay = scipy.signal.group_delay(([0.0, 1.0 - a], [1.0, -a]), w=[2 * math.pi * 1.0 * 1e-3])
    assert (delay[0] - 1.0) * 1e-3 == pytest.approx(actuator.lag, rel=5e-4)  # the low-frequency limit
    assert actuator.lag == pytest.approx(0.99e-3, abs=0.01e-3)


def test_ideal_actuator_reaches_each_command_one_sample_later() -> None:
    actuator = FirstOrderActuator.ideal(1e-3, position=0.01)
    assert actuator.alpha == 0.0 and actuator.position == 0.01
    commands = np.linspace(-0.02, 0.03, 7)
    assert [actuator.advance(u) for u in commands] == list(commands)


@pytest.mark.parametrize("bandwidth, period", [(0.0, 1e-3), (-5.0, 1e-3), (700.0, 0.0), (700.0, math.nan)])
def test_bad_parameters_are_refused(bandwidth: float, period: float) -> None:
    with pytest.raises(ValueError):
        FirstOrderActuator(bandwidth, period)
