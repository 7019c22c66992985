"""`hybridsim bench` pieces: the power-law fit on known data, the TCP floor and the DOF sweep run."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.bench import dof_scaling, power_law_exponent, tcp_echo_us


@pytest.mark.parametrize("exponent", [1.0, 2.0, 2.7])
def test_the_fitted_exponent_of_an_exact_power_law(exponent):
    x = np.array([10.0, 30.0, 100.0, 300.0, 1000.0])
    assert power_law_exponent(x, 3.5 * x**exponent) == pytest.approx(exponent, rel=1e-12)


def test_the_raw_tcp_echo_floor_is_a_positive_round_trip():
    assert 0 < tcp_echo_us(50) < 1e6


def test_dof_scaling_times_every_size():
    scaling = dof_scaling((10, 40), steps=50)
    assert scaling["dofs"] == [10, 40] and len(scaling["step_us"]) == 2 and min(scaling["step_us"]) > 0


@pytest.mark.parametrize("round_trip_s, jitter_s, samples", [(0.0, 0.0, 20), (0.005, 0.0005, 20), (0.020, 0.002, 48),
                                                             (0.060, 0.006, 130)])
def test_the_step_a_path_meets_is_its_round_trip_and_work_over_the_slow_share(round_trip_s, jitter_s, samples):
    """M = ceil((R + 2 J + 4 ms) / (0.6 / 1024 s)), at least OpenFresco's 20 samples: e.g. 28 ms / 0.5859 ms = 47.8."""
    from hybridsim.coordinator.bench_wan import samples_per_step

    assert samples_per_step(round_trip_s, jitter_s) == samples


def test_the_json_of_the_figures_is_strict_json_with_null_for_a_figure_that_is_not_finite():
    """`hybridsim bench --quick --json` printed ``"J7": [Infinity, Infinity]`` (its wan runs take 1 s of maRTHS,
    inside the record's rest), which json.loads(..., parse_constant=refuse) and every strict parser refuse."""
    import json
    import math

    from hybridsim.coordinator.cli.bench import as_json

    def refuse(constant):
        raise ValueError(constant)

    text = as_json({"wan": {"J7": [math.inf, 7.7], "J2": (math.nan, 3.2)}, "samples": 5324})
    assert json.loads(text, parse_constant=refuse) == {"wan": {"J7": [None, 7.7], "J2": [None, 3.2]}, "samples": 5324}


def test_a_failed_bench_section_is_named_and_the_others_are_kept():
    from hybridsim.coordinator.bench import Sections
    from hybridsim.coordinator.cli.bench import format_table

    section = Sections()
    kept = section("dof_scaling", lambda: {"dofs": [10], "step_us": [12.0], "exponent": 1.0})
    lost = section("wan", lambda: 1 / 0)
    assert lost is None and kept["dofs"] == [10]
    assert section.failed == {"wan": "ZeroDivisionError: division by zero"}
    table = format_table({"machine": {"platform": "p", "cpus": 2, "load_average": (1.0, 1.0, 1.0)},
                          "dof_scaling": kept, "details": {}, "failed": section.failed})
    assert "in-process alpha-OS step: 10 DOFs 12 us" in table
    assert table.splitlines()[-1] == "FAILED wan: ZeroDivisionError: division by zero"


@pytest.mark.parametrize("calls", ["0", "-1"])
def test_a_count_of_calls_below_one_is_one_line_before_anything_is_timed(capsys, calls):
    from hybridsim.coordinator.cli import main

    assert main(["bench", "--calls", calls]) == 2
    assert capsys.readouterr().err == f"hybridsim bench: error: --calls: give 1 or more timed round trips, not {calls}\n"
