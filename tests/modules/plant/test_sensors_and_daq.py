"""Sensor noise with the spec's random-number convention (§9, §15) and the command DAQ (§9)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hybridsim.coordinator.problems.marths import parts
from hybridsim.modules.plant.daq import CommandDaq
from hybridsim.modules.plant.sensors import SensorNoise


def test_noise_sigma_is_sqrt_power_over_sample_time() -> None:
    assert parts.noise_sigma_mm() == pytest.approx(0.0123935, abs=5e-8)
    assert parts.noise_sigma_mm() == pytest.approx(math.sqrt(1.5e-7 * 1024), rel=1e-15)


def test_shared_noise_follows_the_convention_sample_by_sample() -> None:
    sigma, n = 0.0123935, 10_000
    noise = SensorNoise(sigma, 123)
    expected = sigma * np.random.default_rng(123).standard_normal(n)
    got = np.array([noise.sample(k) for k in range(n)])
    np.testing.assert_array_equal(got[:, 0], expected)
    np.testing.assert_array_equal(got[:, 1], expected)
    np.testing.assert_array_equal(noise.sample(17), [expected[17]] * 2)  # by tick, repeatable


def test_independent_noise_channels_are_separate_seeded_streams() -> None:
    noise = SensorNoise(1.0, 2001, shared=False)
    got = np.array([noise.sample(k) for k in range(20_000)])
    again = SensorNoise(1.0, 2001, shared=False)
    np.testing.assert_array_equal(got[5], again.sample(5))
    assert abs(np.corrcoef(got.T)[0, 1]) < 0.03
    np.testing.assert_allclose(got.std(axis=0), [1.0, 1.0], rtol=0.03)


def test_zero_sigma_is_silent() -> None:
    np.testing.assert_array_equal(SensorNoise(0.0, 1).sample(99), [0.0, 0.0])


def test_command_volts_and_the_realizability_rule() -> None:
    daq = parts.daq()
    g, c, cg = np.array([7.4921, 7.3907]), np.array([0.0092, -0.0059]), np.array([1.053, 1.055])
    u = cg * (g * 1.5 + c)  # 1.5 V on each channel by V = u/(cg g) - c/g
    np.testing.assert_allclose(daq.volts(u), [1.5, 1.5], rtol=1e-14)
    np.testing.assert_array_equal(daq.applied(u), u)  # logged only: the plant gets the mm command
    assert daq.realizable([3.9, 1.0]) and daq.realizable([3.0, 3.0]) and not daq.realizable([3.9, 3.81])


def test_daq_in_the_loop_saturates_and_quantizes_the_volts() -> None:
    daq = CommandDaq((7.4921, 7.3907), (0.0092, -0.0059), (1.053, 1.055), 3.8, 2.0**-18, in_loop=True)
    applied = daq.applied(np.array([100.0, 1.0]))
    volts = daq.volts(applied)
    assert volts[0] == pytest.approx(3.8, abs=2.0**-18)
    assert abs(volts[1] - daq.volts(np.array([0.0, 1.0]))[1]) <= 2.0**-19 + 1e-12
    assert volts[1] / 2.0**-18 == pytest.approx(round(volts[1] / 2.0**-18), abs=1e-6)
