"""`hybridsim bench` pieces run and give sane figures (the figures themselves belong to the bench, not to tests)."""

from __future__ import annotations

import math

from coordinator.bench import dof_scaling, tcp_echo_us


def test_the_raw_tcp_echo_floor_is_a_positive_round_trip():
    assert 0 < tcp_echo_us(50) < 1e6


def test_dof_scaling_fits_an_exponent_over_its_sizes():
    scaling = dof_scaling((10, 40), steps=50)
    assert scaling["dofs"] == [10, 40] and all(t > 0 for t in scaling["step_us"])
    assert math.isfinite(scaling["exponent"])
