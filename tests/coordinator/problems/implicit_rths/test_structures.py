"""The benchmark's structures and ground motion (specification sections 7 and 9.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

from hybridsim.coordinator.problems.implicit_rths.cases import (ELCENTRO, build_case, elcentro_acceleration, five_story_structure,
                                                sdof_structure)

SPEC_K_N = np.array([[60e3, -40e3, 0, 0, 0], [-40e3, 80e3, -40e3, 0, 0], [0, -40e3, 80e3, -40e3, 0],
                     [0, 0, -40e3, 80e3, -40e3], [0, 0, 0, -40e3, 40e3]])


def test_five_story_matrices_are_the_specified_ones() -> None:
    s = five_story_structure()
    np.testing.assert_array_equal(s.stiffness, SPEC_K_N)
    np.testing.assert_array_equal(s.mass, 100.0 * np.eye(5))
    assert (s.specimen_dof, s.specimen_stiffness) == (0, 20e3)


def test_five_story_frequencies_closed_form_and_paper() -> None:
    """Uniform shear building fixed at the base: f_j = (1/pi) sqrt(k/m) sin((2j - 1) pi / 22), j = 1..5."""
    s = five_story_structure()
    eigenvalues = scipy.linalg.eigh(s.stiffness_with_specimen(s.specimen_stiffness), s.mass, eigvals_only=True)
    frequencies = np.sqrt(eigenvalues) / (2 * math.pi)
    closed = [math.sqrt(40e3 / 100.0) / math.pi * math.sin((2 * j - 1) * math.pi / 22) for j in range(1, 6)]
    np.testing.assert_allclose(frequencies, closed, rtol=1e-12)
    assert np.round(frequencies, 2).tolist() == [0.91, 2.64, 4.17, 5.36, 6.11]  # the paper's values


def test_sdof_frequency() -> None:
    s = sdof_structure()
    omega = math.sqrt(s.stiffness_with_specimen(s.specimen_stiffness)[0, 0] / s.mass[0, 0])
    assert omega == pytest.approx(63.2456, abs=1e-4)  # sqrt(4000) rad/s, 10.07 Hz


def test_elcentro_processing() -> None:
    """Trim at the last zero before the motion (file time 4.98 s), scale to 0.2 x 9.81, resample at 0.01 s."""
    raw = np.loadtxt(ELCENTRO, delimiter=",", skiprows=1)
    acc = elcentro_acceleration(0.01)
    assert acc.size == 3621  # T = 36.20 s
    assert acc[0] == 0.0
    assert np.max(np.abs(acc)) == pytest.approx(1.962, rel=1e-12)
    start = int(round(4.98 / 0.02))
    assert raw[start, 1] == 0.0 and raw[start + 1, 1] != 0.0 and np.all(raw[:start, 1] == 0.0)
    factor = 1.962 / np.max(np.abs(raw[:, 1]))
    assert factor == pytest.approx(0.62585, abs=1e-5)
    # every second sample at 0.01 s is a file sample; the ones between are midpoints
    np.testing.assert_allclose(acc[::2], factor * raw[start:, 1], rtol=0, atol=1e-14)
    np.testing.assert_allclose(acc[1::2], factor * 0.5 * (raw[start:-1, 1] + raw[start + 1:, 1]), rtol=0, atol=1e-12)


def test_cases_have_the_specified_clocks_and_loads() -> None:
    s1, s2, m2 = build_case("S1"), build_case("S2"), build_case("M2", short=True)
    assert (s1.dt, s1.sample_period, s1.steps, s1.bandwidth) == (0.04, pytest.approx(0.004), 25, math.inf)
    assert (s2.dt, s2.sample_period, s2.steps, s2.bandwidth) == (0.01, pytest.approx(0.001), 100, 700.0)
    assert m2.steps == 1000 and build_case("M1").steps == 3620
    np.testing.assert_allclose(m2.loads, -100.0 * np.outer(elcentro_acceleration(0.01, 10.0), np.ones(5)))
    with pytest.raises(ValueError, match="unknown case"):
        build_case("S3")
