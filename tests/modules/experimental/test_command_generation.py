"""Command generation of a multi-rate site against hand-derived cases.

OpenFresco's predictP_p / correctD_p formulas written out, polynomial targets followed exactly, a
sinusoid within the Lagrange remainder, and m = 1 as lockstep.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hybridsim.modules.experimental.command_generation import CommandGenerator

DT_STEP = 10 / 1024
"""s: a coordinator step of ten benchmark control samples"""


def _predict(p: int, d: np.ndarray, x: float) -> float:
    """OpenFresco's predictP1..3 (d[0] = d_n, d[1] = d_{n-1}, ...) at x = tau."""
    if p == 1:
        return d[0] * (1 + x) - d[1] * x
    if p == 2:
        return d[0] * (1 + x) * (2 + x) / 2 - d[1] * x * (2 + x) + d[2] * x * (1 + x) / 2
    return (d[0] * (1 + x) * (2 + x) * (3 + x) / 6 - d[1] * x * (2 + x) * (3 + x) / 2
            + d[2] * x * (1 + x) * (3 + x) / 2 - d[3] * x * (1 + x) * (2 + x) / 6)


def _correct(p: int, new: float, at_xi: float, d: np.ndarray, x: float, xi: float) -> float:
    """OpenFresco's correctD1..3: through (1, d_{n+1}), (xi, command at xi), (0, d_n), (-1, d_{n-1})."""
    if p == 1:
        return new * (x - xi) / (1 - xi) + at_xi * (x - 1) / (xi - 1)
    if p == 2:
        return (new * x * (x - xi) / (1 - xi) + at_xi * (x - 1) * x / ((xi - 1) * xi)
                + d[0] * (x - 1) * (x - xi) / xi)
    return (new * x * (1 + x) * (x - xi) / (2 * (1 - xi)) + at_xi * (x - 1) * x * (1 + x) / ((xi - 1) * xi * (1 + xi))
            + d[0] * (x - 1) * (1 + x) * (x - xi) / xi - d[1] * (x - 1) * x * (x - xi) / (2 * (1 + xi)))


@pytest.mark.parametrize("order", [1, 2, 3])
def test_predictor_and_corrector_are_openfresco_formulas(order: int) -> None:
    """m = 10, arrival 0.3: samples 1-3 predicted from d_n .. d_{n-p}, 4-10 corrected from the command at 0.3."""
    generator = CommandGenerator("predictor-corrector", 10, order, arrival=0.3)
    assert generator.predicted == 3
    rng = np.random.default_rng(7)
    new, history = rng.standard_normal(), rng.standard_normal(order + 1)
    got = generator.commands(np.array([new]), history[:, None])[:, 0]
    expected = [_predict(order, history, j / 10) for j in range(1, 4)]
    expected += [_correct(order, new, expected[2], history, j / 10, 0.3) for j in range(4, 11)]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert got[-1] == new  # the step ends exactly at the coordinator's target


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("arrival", [0.0, 0.5, 0.95])
def test_a_polynomial_target_of_degree_up_to_the_order_is_followed_exactly(order: int, arrival: float) -> None:
    """d(t) of degree p sampled at t_n = n Dt: every control sample lies on d once p + 1 targets are known."""
    m = 10
    coefficients = np.array([0.8, -2.0, 3.0, 1.5])[: order + 1]  # d(t) = 0.8 - 2 t + 3 t^2 + 1.5 t^3, truncated

    def d(t: np.ndarray | float) -> np.ndarray:
        return np.polynomial.polynomial.polyval(np.asarray(t) / DT_STEP, coefficients)

    generator = CommandGenerator("predictor-corrector", m, order, arrival)
    for n in range(order, order + 4):
        history = np.array([d((n - i) * DT_STEP) for i in range(order + 1)])[:, None]
        got = generator.commands(np.array([d((n + 1) * DT_STEP)]), history)[:, 0]
        truth = d((n + np.arange(1, m + 1) / m) * DT_STEP)
        np.testing.assert_allclose(got, truth, rtol=1e-12, atol=1e-12)


def test_linear_interpolation_follows_a_ramp_and_is_the_order_1_corrector_without_prediction() -> None:
    interpolation = CommandGenerator("interpolate", 8)
    got = interpolation.commands(np.array([3.0]), np.array([[1.0]]))[:, 0]
    np.testing.assert_allclose(got, 1.0 + 2.0 * np.arange(1, 9) / 8, rtol=1e-15)
    corrector = CommandGenerator("predictor-corrector", 8, 1, arrival=0.0)
    np.testing.assert_array_equal(corrector.weights[:, :2], interpolation.weights)
    assert not corrector.weights[:, 2].any()


@pytest.mark.parametrize("order", [1, 2, 3])
def test_a_sinusoid_stays_within_the_lagrange_remainder(order: int) -> None:
    """A sin(w t) at the structure's 2.29 Hz, Dt = 10/1024 s, the target arriving 0.4 Dt into the step.

    Prediction (nodes 0, -1, .., -p): |e(tau)| <= A (w Dt)^(p+1) / (p+1)! prod_i |tau + i|.
    Correction: the remainder over its nodes plus |l_xi(tau)| times the prediction error at xi.
    """
    amplitude, omega, m, xi = 3.0, 2 * math.pi * 2.29, 10, 0.4
    generator = CommandGenerator("predictor-corrector", m, order, arrival=xi)
    scale = amplitude * (omega * DT_STEP) ** (order + 1) / math.factorial(order + 1)
    past = -np.arange(order + 1.0)
    nodes = np.array([1.0, xi, 0.0, -1.0])[: order + 1]
    taus = np.arange(1, m + 1) / m
    bound = np.empty(m)
    for j, tau in enumerate(taus):
        if tau <= xi + 1e-12:
            bound[j] = scale * np.prod(np.abs(tau - past))
        else:
            at_xi = scale * np.prod(np.abs(xi - past))
            others = nodes[nodes != xi]
            l_xi = np.prod((tau - others) / (xi - others))
            bound[j] = scale * np.prod(np.abs(tau - nodes)) + abs(l_xi) * at_xi
    worst = 0.0
    for n in range(order, 200):
        t_n = n * DT_STEP
        history = amplitude * np.sin(omega * (t_n - np.arange(order + 1) * DT_STEP))[:, None]
        got = generator.commands(np.array([amplitude * np.sin(omega * (t_n + DT_STEP))]), history)[:, 0]
        error = np.abs(got - amplitude * np.sin(omega * (t_n + taus * DT_STEP)))
        assert np.all(error <= bound * (1 + 1e-9) + 1e-15)
        worst = max(worst, float(np.max(error[:-1] / bound[:-1])))
    assert worst > 0.9  # the bound is nearly reached: a predictor that peeked at d_{n+1} would sit far below


def test_with_one_sample_per_step_every_scheme_is_lockstep() -> None:
    for generator in (CommandGenerator("interpolate", 1), CommandGenerator("predictor-corrector", 1, 3, 0.7)):
        assert generator.weights.shape[0] == 1 and generator.weights[0, 0] == 1.0 and not generator.weights[0, 1:].any()


@pytest.mark.parametrize("value, message", [
    ("extrapolate", "command_generation must be one of 'interpolate' or a table"),
    ({"scheme": "predictor-corrector", "order": 2}, "needs arrival"),
    ({"scheme": "predictor-corrector", "order": 4, "arrival": 0.2}, "order must be an integer >= 1 and <= 3"),
    ({"scheme": "predictor-corrector", "arrival": 1.0}, r"arrival must be a number >= 0 and < 1"),
    ({"scheme": "predictor-corrector", "arrival": 0.2, "lead": 1}, "unknown key command_generation.lead"),
    (3, "a table"),
])
def test_bad_configurations_name_the_key(value, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CommandGenerator.from_config(value, 10)
