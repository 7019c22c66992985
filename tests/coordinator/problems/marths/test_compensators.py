"""The benchmark's compensator choices and its runaway guard.

Inverse compensation assumes the delay J1 measures without compensation; ``narx`` is the NARX study's best
case; the 3.8 V guard stops a run at the first command the DAQ would saturate; without the guard a loop
that diverges stops instead of reporting NaN criteria.
"""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.problems.marths import loop, parts
from hybridsim.coordinator.problems.narx import study as narx_study
from hybridsim.coordinator.problems.marths.evaluation import criteria
from hybridsim.modules.experimental.compensators.kinds import build_compensator
from hybridsim.modules.experimental.compensators.polynomial import PolynomialExtrapolation
from hybridsim.modules.experimental.guards import RunawayStopped

SHORT = 8.0
"""s: the 5 s rest of El Centro and 3 s of shaking (J1 of the first 6.5 s is still 0 / 0 ms)"""


def test_inverse_compensation_assumes_the_delay_measured_without_compensation() -> None:
    """a0 = 1 + tau / dt with tau = J1 of the uncompensated nominal run, a whole number of samples (finddelay)."""
    uncompensated = criteria(loop.run(loop.RunSpec(compensator="none", duration=SHORT)), 1024.0)["J1"]
    spec = loop.RunSpec(compensator="inverse", plant="uncertain", plant_seed=1001, noise_seed=2001,
                          duration=SHORT)
    tables = loop.site_config(spec)["compensators"]
    assert [t["delay"] for t in tables] == [j / 1000.0 for j in uncompensated]
    a0 = [build_compensator(t).parameters()[0] for t in tables]
    samples = [round(j * 1.024) for j in uncompensated]
    assert a0 == pytest.approx([1.0 + s for s in samples], abs=1e-9) and min(samples) > 10


def test_benchmark_inverse_is_the_study_good_estimate_case_bit_for_bit() -> None:
    study = narx_study.run_study(["ic-good"], duration=SHORT)
    ic_good = study.results[-1]
    benchmark = criteria(loop.run(loop.RunSpec(compensator="inverse", duration=SHORT)), 1024.0)
    assert ic_good.case.name == "ic-good" and not ic_good.unstable
    assert benchmark == ic_good.criteria


def test_benchmark_narx_is_the_best_case_of_the_study_with_its_definition_parameters() -> None:
    case = next(c for c in narx_study.cases() if c.name == "narx4-L1024-ridge1e-07-fg")
    tables = parts.compensator_tables("narx")
    assert tables == [case.narx.table()] * 2
    table = tables[0]
    assert (table["order"], table["window"], table["ridge"], table["products"]) == (4, 1024, 1e-7, [])
    assert table["filter_command"] is True and table["excitation"] == pytest.approx(10 * 0.0123935, rel=1e-5)
    assert len(table["filter_b"]) == 6  # the definition's 5th-order Butterworth


def test_the_guard_stops_at_the_first_command_beyond_the_saturation() -> None:
    """Uncompensated El Centro x 3: the first sample whose logged command volts pass 3.8 V is where it stops."""
    free = loop.run(loop.RunSpec(compensator="none", scale=3.0, duration=8.0, guard=False))
    over = np.abs(free.command_volts) > 3.8
    first = int(np.flatnonzero(over.any(axis=1))[0])
    actuator = int(np.flatnonzero(over[first])[0]) + 1
    with pytest.raises(RunawayStopped) as stop:
        loop.run(loop.RunSpec(compensator="none", scale=3.0, duration=8.0))
    assert (stop.value.sample, stop.value.actuator) == (first, f"actuator {actuator}")
    assert stop.value.time == pytest.approx(first / 1024.0)
    assert "saturates the servo input" in stop.value.reason


def test_without_the_guard_a_diverging_loop_stops_instead_of_reporting_nan() -> None:
    """Cubic extrapolation by 40 ms at 1 kHz (weights ~1.3e4) is unstable in the loop as soon as the ground
    moves (at 5 s); the guard-off run names the first non-finite tick."""
    spec = loop.RunSpec(compensator="none", noise=False, duration=5.5, guard=False)
    cubic = [PolynomialExtrapolation(3, 0.04, parts.DT) for _ in range(2)]
    with np.errstate(all="ignore"), pytest.raises(RunStopped, match=r"diverged.* from t = 5\.0\d+ s"):
        loop.run(spec, cubic)
