"""J1..J10 and the finddelay semantics of SPEC §14, on hand-made signals."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from hybridsim.coordinator.problems.marths.evaluation import criteria, finddelay, mean_criteria, peak_ratio, std_ratio


def _signal(n: int = 2000) -> np.ndarray:
    t = np.arange(n) / 1024
    return np.sin(2 * np.pi * 2.3 * t) * np.exp(-((t - 1) ** 2))


@pytest.mark.parametrize("delay", [0, 1, 3, 41])
def test_finddelay_positive_when_y_lags_x(delay: int) -> None:
    x = _signal()
    y = np.concatenate([np.zeros(delay), x[: x.size - delay]])
    assert finddelay(x, y) == delay
    assert finddelay(y, x) == -delay


def test_finddelay_pads_the_shorter_vector_and_ignores_sign_and_scale() -> None:
    x = np.random.default_rng(2).standard_normal(2000) * np.exp(-np.arange(2000) / 300)
    assert finddelay(x, -2.5 * np.concatenate([np.zeros(5), x])[:1500]) == 5


def test_finddelay_of_a_zero_vector_is_zero() -> None:
    assert finddelay(np.zeros(10), _signal(10)) == 0


def test_finddelay_ties_prefer_the_smallest_then_the_positive_delay() -> None:
    x = np.zeros(11)
    x[5] = 1.0
    y = np.zeros(11)
    y[3] = y[7] = 1.0  # |c| ties at d = -2 and d = +2
    assert finddelay(x, y) == 2
    y[4] = 1.0  # now d = -1 alone is best
    assert finddelay(x, y) == -1


def test_ratios_are_std_and_peak_percentages() -> None:
    ref = np.array([1.0, -1.0, 1.0, -1.0])
    assert std_ratio(0.1 * ref + 5.0, ref) == pytest.approx(10.0)  # the mean of the error is removed
    assert peak_ratio(np.array([0.0, 0.3, 0.0, -0.2]), 2 * ref) == pytest.approx(15.0)


def test_criteria_of_a_one_sample_late_perfect_actuator() -> None:
    n = 4096
    x = _signal(n)
    target = np.column_stack([1e3 * x, -2e3 * x])
    measured = np.vstack([np.zeros((1, 2)), target[:-1]])
    numerical = np.column_stack([1e3 * x, 1e-2 * x, 1e-2 * x, 1e-2 * x, 1e-2 * x, 1e-2 * x])
    log = SimpleNamespace(target_strokes=target, measured_strokes=measured, estimate=numerical[:, :3].copy(),
                          numerical=numerical, reference=numerical)
    j = criteria(log, 1024.0)
    assert j["J1"] == j["J4"] == [pytest.approx(0.9765625)] * 2
    expected_j2 = 100 * np.std(np.diff(x), ddof=1) / np.std(x, ddof=1)
    assert j["J2"] == pytest.approx([expected_j2, expected_j2], rel=1e-3)
    for name in ("J5", "J6", "J7", "J9"):
        assert j[name] == [0.0, 0.0]
    assert j["J8"] == j["J10"] == [0.0] * 4
    assert mean_criteria([j, j])["J2"] == pytest.approx(j["J2"])
