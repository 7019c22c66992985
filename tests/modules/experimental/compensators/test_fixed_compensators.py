"""Inverse compensation and polynomial extrapolation against hand-derived plants and polynomials."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from hybridsim.modules.experimental.compensators.fir import TapLine
from hybridsim.modules.experimental.compensators.inverse import InverseCompensation
from hybridsim.modules.experimental.compensators.kinds import build_compensator
from hybridsim.modules.experimental.compensators.polynomial import PolynomialExtrapolation, extrapolation_weights

DT = 1.0 / 1024


def test_inverse_parameters_come_from_the_assumed_delay() -> None:
    ic = InverseCompensation.from_delay(0.040, DT)
    assert ic.a0 == pytest.approx(1 + 0.040 * 1024, rel=1e-15)
    assert ic.a0 + ic.a1 == pytest.approx(1.0, abs=1e-12)
    assert InverseCompensation.from_delay(0.0, DT).parameters().tolist() == [1.0, 0.0]


def test_inverse_compensation_is_the_exact_inverse_of_a_backward_difference_first_order_actuator() -> None:
    """tau x' + x = u by backward differences: x[n] = (tau x[n-1] + dt u[n]) / (tau + dt); IC makes x = target."""
    tau = 0.025
    ic = InverseCompensation.from_delay(tau, DT)
    target = np.cumsum(np.random.default_rng(1).standard_normal(3000)) * 1e-2
    x = 0.0
    reached = []
    for t in target:
        x = (tau * x + DT * ic.command(float(t), x)) / (tau + DT)
        reached.append(x)
    np.testing.assert_allclose(reached, target, rtol=0, atol=1e-12 * np.max(np.abs(target)))


def _through_pure_delay(compensator, target: np.ndarray, delay: int) -> np.ndarray:
    """measured[n] = command[n - delay] (zero before the start)."""
    commands = np.zeros(target.size)
    measured = np.zeros(target.size)
    for n, t in enumerate(target):
        measured[n] = commands[n - delay] if n >= delay else 0.0
        commands[n] = compensator.command(float(t), float(measured[n]))
    return measured


@pytest.mark.parametrize("order", [1, 2, 3])
def test_polynomial_extrapolation_makes_a_pure_delay_exact_for_polynomials_of_its_order(order: int) -> None:
    delay = 7
    n = np.arange(400, dtype=float)
    coefficients = np.random.default_rng(order).standard_normal(order + 1)
    target = np.polyval(coefficients, n / 100.0)
    measured = _through_pure_delay(PolynomialExtrapolation(order, delay * DT, DT), target, delay)
    settled = slice(order + delay, None)
    np.testing.assert_allclose(measured[settled], target[settled], rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_extrapolation_error_of_the_next_power_is_the_nodal_polynomial(order: int) -> None:
    """For f(t) = t^(p+1) the Lagrange remainder at lead s is prod_{m=0..p} (s + m), whatever the sample n."""
    lead = 2.75
    comp = PolynomialExtrapolation(order, lead * DT, DT)
    for n in range(30):
        command = comp.command(float(n) ** (order + 1), 0.0)
    expected_error = math.prod(lead + m for m in range(order + 1))
    assert (n + lead) ** (order + 1) - command == pytest.approx(expected_error, rel=1e-9)


def test_first_order_extrapolation_is_inverse_compensation_of_the_same_delay() -> None:
    np.testing.assert_allclose(PolynomialExtrapolation(1, 0.031, DT).parameters(),
                               InverseCompensation.from_delay(0.031, DT).parameters(), rtol=1e-14)


def test_inverse_compensation_tracks_a_ramp_through_a_pure_delay() -> None:
    delay = 12
    target = 0.5 + 0.01 * np.arange(200.0)
    measured = _through_pure_delay(InverseCompensation.from_delay(delay * DT, DT), target, delay)
    np.testing.assert_allclose(measured[delay + 1:], target[delay + 1:], rtol=1e-12)


def test_extrapolation_weights_sum_to_one_and_reproduce_the_nodes() -> None:
    for order in (1, 2, 3):
        assert extrapolation_weights(order, 3.3).sum() == pytest.approx(1.0, rel=1e-12)
        np.testing.assert_allclose(extrapolation_weights(order, 0.0), np.eye(order + 1)[0], atol=1e-15)


def test_state_round_trip_continues_identically() -> None:
    a, b = PolynomialExtrapolation(3, 0.02, DT), PolynomialExtrapolation(3, 0.02, DT)
    for t in (1.0, 2.0, 4.0):
        a.command(t, 0.0)
    b.set_state(json.loads(json.dumps(a.state())))
    assert [a.command(t, 0.0) for t in (8.0, 3.0)] == [b.command(t, 0.0) for t in (8.0, 3.0)]


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="order"):
        PolynomialExtrapolation(4, 0.01, DT)
    with pytest.raises(ValueError, match="delay"):
        InverseCompensation.from_delay(-0.01, DT)
    with pytest.raises(ValueError, match="taps"):
        TapLine(2).set_state([1.0])


def test_configs_build_the_same_compensators() -> None:
    assert InverseCompensation.from_config({"delay": 0.02, "sample_period": DT}).a0 == pytest.approx(1 + 0.02 * 1024)
    assert InverseCompensation.from_config({"a0": 3.0}).a1 == -2.0
    np.testing.assert_array_equal(
        PolynomialExtrapolation.from_config({"order": 2, "delay": 0.01, "sample_period": DT}).parameters(),
        PolynomialExtrapolation(2, 0.01, DT).parameters())
    assert isinstance(build_compensator({"kind": "inverse", "a0": 2.0}), InverseCompensation)  # a site config's kind
    assert isinstance(build_compensator({"kind": "polynomial", "order": 3, "delay": 0.01, "sample_period": DT}),
                      PolynomialExtrapolation)
    with pytest.raises(ValueError, match="'sample_period'"):
        InverseCompensation.from_config({"delay": 0.02})
