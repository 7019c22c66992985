"""Back-search of a trial displacement in the measured window: picks, ties, interpolation, fallback."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.problems.implicit_rths.methods.back_search import bracketing_pair, nearest_sample, search_force

Y = np.array([0.0, 1.0, 2.0, 3.0, 2.0, 1.0])  # mm-sized numbers; the functions are unit-free
F = 10.0 * Y + np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5])  # a force that remembers its path


def test_nearest_takes_the_latest_of_equally_close_samples() -> None:
    assert nearest_sample(Y, 1.0) == 5
    assert nearest_sample(Y, 2.9) == 3
    assert nearest_sample(Y, 1.5) == 5  # 1.5 is as close to y = 1 and y = 2 (samples 1, 2, 4, 5)
    assert search_force(Y, F, 2.9, "nearest") == (pytest.approx(30.3), ("sample", 3))


def test_interp_uses_the_latest_bracketing_pair() -> None:
    assert bracketing_pair(Y, 1.5) == 4  # pairs (0,1)..: 1.5 lies in (1,2) and in (4,5); the latest is (4,5)
    force, pick = search_force(Y, F, 1.5, "interp")
    assert pick == ("pair", 4)
    assert force == pytest.approx(0.5 * (F[4] + F[5]))


def test_interp_is_exact_for_a_linear_spring() -> None:
    y = np.linspace(0.0, 2e-3, 11)
    force, _ = search_force(y, 2e4 * y, 1.234e-3, "interp")
    assert force == pytest.approx(2e4 * 1.234e-3, rel=1e-13)


def test_interp_falls_back_to_nearest_outside_the_measured_range() -> None:
    assert bracketing_pair(Y, 3.5) is None
    assert search_force(Y, F, 3.5, "interp") == (pytest.approx(F[3]), ("sample", 3))
    assert search_force(Y, F, -1.0, "interp") == (pytest.approx(F[0]), ("sample", 0))
