"""The sheet's distributions over trials, against the standard library's statistics."""

from __future__ import annotations

import math
import statistics

import pytest

from hybridsim.coordinator.rehearse.sheet import distribution


def test_a_distribution_gives_each_components_statistics_and_every_trial():
    trials = [[1.0, 3.0, math.inf], [2.5, 3.0, 1.0], [4.0, 3.0, 2.0]]
    d = distribution(trials)
    first = [t[0] for t in trials]
    assert d["min"][:2] == [1.0, 3.0] and d["max"][:2] == [4.0, 3.0]
    assert d["mean"][0] == pytest.approx(statistics.fmean(first), rel=1e-15)
    assert d["std"][0] == pytest.approx(statistics.stdev(first), rel=1e-15) and d["std"][1] == 0.0
    assert d["min"][2] is None and d["std"][2] is None  # a trial's value not finite: no statistic
    assert d["trials"] == [[1.0, 3.0, None], [2.5, 3.0, 1.0], [4.0, 3.0, 2.0]]


def test_one_trial_has_no_spread():
    assert distribution([[2.0]])["std"] == [0.0]
