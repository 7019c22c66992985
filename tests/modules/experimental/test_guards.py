"""Runaway guards: each check fires at the sample a hand calculation predicts, with its reason."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from hybridsim.wire.contract import ModuleError
from hybridsim.modules.experimental.compensators.fir import FixedFir
from hybridsim.modules.experimental.compensators.none import NoCompensation
from hybridsim.modules.experimental.guards import GuardedCompensator, Limits, RunawayStopped

DT = 1.0 / 1024


def _run(guarded: GuardedCompensator, targets, measured) -> list[float]:
    return [guarded.command(float(t), float(m)) for t, m in zip(targets, measured)]


def test_divergence_of_measured_from_target_stops_at_the_first_sample_beyond_the_bound() -> None:
    """measured = 1.1^n - 1 against a zero target: |error| > 2 first at n = ceil(log 3 / log 1.1) = 12."""
    n = np.arange(40)
    guarded = GuardedCompensator(NoCompensation(), Limits(tracking=2.0), "actuator 1", DT)
    with pytest.raises(RunawayStopped) as stop:
        _run(guarded, np.zeros(40), 1.1 ** n - 1.0)
    assert stop.value.sample == math.ceil(math.log(3) / math.log(1.1)) == 12
    assert stop.value.time == pytest.approx(12 * DT)
    assert stop.value.actuator == "actuator 1"
    assert "actuator 1: measured" in stop.value.reason and "diverged" in stop.value.reason
    assert isinstance(stop.value, ModuleError)


def test_command_bound_stops_before_the_command_is_returned() -> None:
    """A gain of 2 on the ramp t = 0.5 n passes 30 at n = 31 (command 31 > 30); 30 at n = 30 is allowed."""
    guarded = GuardedCompensator(FixedFir([2.0]), Limits(command=30.0), "A2", DT)
    sent = []
    with pytest.raises(RunawayStopped, match=r"A2: command 31 beyond the bound 30 at t = 0\.0303 s \(sample 31\)"):
        for n in range(100):
            sent.append(guarded.command(0.5 * n, 0.5 * n))
    assert len(sent) == 31 and sent[-1] == 30.0


def test_saturation_uses_the_daq_volts() -> None:
    """volts = u / (cg g) - c / g with the benchmark's actuator-1 DAQ: 3.8 V is reached at u = 3.8 cg g + cg c."""
    g, c, cg = 7.4921, 0.0092, 1.053
    limits = Limits(volts=3.8, volts_per_unit=1 / (cg * g), volts_offset=-c / g)
    saturating = 3.8 * cg * g + cg * c
    guarded = GuardedCompensator(NoCompensation(), limits, "actuator 1", DT)
    assert guarded.command(saturating - 1e-9, saturating) == pytest.approx(saturating)
    with pytest.raises(RunawayStopped, match="saturates the servo input"):
        guarded.command(saturating + 1e-6, saturating)


def test_an_unstable_hybrid_loop_is_stopped_when_its_growing_mode_passes_the_bound() -> None:
    """A static numerical part t[n] = f[n] - 0.5 m[n], a one-sample actuator m[n] = c[n-1], IC with a0 = 3.

    For n >= 2: c[n] = -1.5 c[n-1] + c[n-2], roots 0.5 and -2; with f an impulse, c[n] = -0.2 (0.5)^n
    + 3.2 (-2)^n: 3, -6.5, 12.75, -25.625, 51.19, -102.41, ... so a bound of 100 trips at sample 5.
    """
    guarded = GuardedCompensator(FixedFir([3.0, -2.0]), Limits(command=100.0), "actuator 1", DT)
    sent = [0.0]
    with pytest.raises(RunawayStopped) as stop:
        for n in range(50):
            measured = sent[-1]
            sent.append(guarded.command((1.0 if n == 0 else 0.0) - 0.5 * measured, measured))
    closed_form = [-0.2 * 0.5**n + 3.2 * (-2.0) ** n for n in range(1, 5)]
    np.testing.assert_allclose(sent[2:], closed_form, rtol=1e-12)
    assert stop.value.sample == 5 and "command -102.4 beyond the bound 100" in stop.value.reason


def test_a_non_finite_command_is_a_runaway_even_without_bounds() -> None:
    guarded = GuardedCompensator(FixedFir([1e300]), Limits(), "a", DT)
    with np.errstate(over="ignore"), pytest.raises(RunawayStopped, match=r"command is not a finite number \(inf\)"):
        guarded.command(1e10, 0.0)


def test_state_round_trip_and_parameters_pass_through() -> None:
    a = GuardedCompensator(FixedFir([1.5, -0.5]), Limits(command=10.0), "a", DT)
    _run(a, [1.0, 2.0, 3.0], [0.0] * 3)
    b = GuardedCompensator(FixedFir([1.5, -0.5]), Limits(command=10.0), "a", DT)
    b.set_state(json.loads(json.dumps(a.state())))
    assert b.sample == 3 and b.command(4.0, 0.0) == a.command(4.0, 0.0) == 4.5
    np.testing.assert_array_equal(b.parameters(), [1.5, -0.5])


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        Limits(tracking=0.0)
    with pytest.raises(ValueError, match="volts_per_unit"):
        Limits(volts=3.8)


def test_a_stop_pickles_with_every_field() -> None:
    """Process pools and Dask send the exception back pickled."""
    import pickle

    stop = pickle.loads(pickle.dumps(RunawayStopped("actuator 2: saturates", "actuator 2", 7426, 7.252)))
    assert (stop.reason, stop.actuator, stop.sample, stop.time) == ("actuator 2: saturates", "actuator 2", 7426, 7.252)
    assert str(stop) == "actuator 2: saturates"
