"""The rehearsal's delay margin by bisection of real time-domain runs against the closed-form margin of a linear
SDOF with a delayed lab spring (derivation in coordinator/rehearse/delayed_sdof.py)."""

from __future__ import annotations

import math

import pytest

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.rehearse.bisection import largest_stable
from hybridsim.coordinator.rehearse.delayed_sdof import DelayedSpringSdof, decays, simulate


def closed_form(m: float, c: float, k_n: float, k_e: float) -> float:
    """tau* written out independently: W = w^2 from the quadratic m^2 W^2 + (c^2 - 2 m k_n) W + k_n^2 - k_e^2 = 0,
    and the phase of m w^2 - k_n - i c w taken by quadrant (not through atan2)."""
    b = c * c - 2 * m * k_n
    w = math.sqrt((-b + math.sqrt(b * b + 4 * m * m * (k_e * k_e - k_n * k_n))) / (2 * m * m))
    real, imag = m * w * w - k_n, c * w
    phase = math.atan(imag / real) if real > 0 else math.pi - math.atan(imag / -real)
    return phase / w


# (m kg, c N*s/m, k_n N/m, k_e N/m, dt s, duration s): a lightly damped loop whose lab spring sees w* above the
# numerical part's frequency (first quadrant, tau* = 6.7 ms), and a heavily damped one below it (second
# quadrant, tau* = 0.39 s: a first-quadrant atan(c w / (m w^2 - k_n)) would give a negative delay there)
CASES = [(1.0, 0.4, 40.0, 60.0, 1e-4, 10.0), (1.0, 12.0, 40.0, 60.0, 1e-3, 40.0)]


@pytest.mark.parametrize(("m", "c", "k_n", "k_e", "dt", "duration"), CASES)
def test_bisection_of_runs_finds_the_closed_form_delay_margin(m, c, k_n, k_e, dt, duration):
    expected = closed_form(m, c, k_n, k_e)
    sdof = DelayedSpringSdof(m, c, k_n, k_e)
    assert sdof.delay_margin() == pytest.approx(expected, rel=1e-12)
    tolerance = 0.002 * expected
    found = largest_stable(lambda tau: decays(simulate(sdof, tau, dt, duration)), 0.5 * expected, 2 * expected,
                           tolerance)
    assert expected - tolerance <= found <= expected


def test_runs_either_side_of_the_margin_decay_and_grow():
    sdof = DelayedSpringSdof(1.0, 0.4, 40.0, 60.0)
    tau = sdof.delay_margin()
    assert decays(simulate(sdof, 0.98 * tau, 1e-4, 10.0))
    assert not decays(simulate(sdof, 1.02 * tau, 1e-4, 10.0))


def test_a_bracket_that_holds_no_margin_is_refused_in_one_line():
    sdof = DelayedSpringSdof(1.0, 0.4, 40.0, 60.0)
    stable = lambda tau: decays(simulate(sdof, tau, 1e-4, 10.0))  # noqa: E731
    with pytest.raises(UsageError, match="still stable at"):
        largest_stable(stable, 0.001, 0.002, 1e-5)
    with pytest.raises(UsageError, match="k_e > k_n"):
        DelayedSpringSdof(1.0, 0.4, 60.0, 40.0).delay_margin()
