"""The 2x2 identified plant: zpk data vs the shipped state space, uncertain draws (maRTHS §8.1-8.2, §15)."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.problems.marths import data, parts

TAU = 2 * np.pi


def _ss_response(a: np.ndarray, b: np.ndarray, c: np.ndarray, omega: float) -> np.ndarray:
    return c @ np.linalg.solve(1j * omega * np.eye(a.shape[0]) - a, b)


@pytest.mark.parametrize("omega", [0.01, 3.0, 30.0, 300.0, 3000.0])
def test_zpk_plant_and_its_realisation_match_the_shipped_state_space(omega: float) -> None:
    shipped = _ss_response(*data.nominal_plant_state_space(), omega)
    plant = parts.identified_plant()
    np.testing.assert_allclose(plant.response(omega), shipped, rtol=1e-12)
    np.testing.assert_allclose(_ss_response(*plant.state_space(), omega), shipped, rtol=1e-12)


def test_dc_gains_and_minimal_order() -> None:
    plant = parts.identified_plant()
    np.testing.assert_allclose(plant.dc_gain(), [[0.86381, 0.13107], [0.13961, 0.92579]], atol=6e-6)
    a, b, c = plant.state_space()
    assert a.shape == (8, 8) and b.shape == (8, 2) and c.shape == (2, 8)
    poles = np.sort_complex(np.linalg.eigvals(a))
    expected = np.sort_complex(np.array([-2.65, -40, -3.5, -18.5, -50 + 63j, -50 - 63j, -50 + 63j, -50 - 63j]) * TAU)
    np.testing.assert_allclose(poles, expected, rtol=1e-9)


def test_uncertain_plant_scales_the_roots_in_draw_order_and_keeps_the_dc_gain() -> None:
    n = np.random.default_rng(1003).standard_normal(9)
    plant = parts.uncertain_plant(1003)
    (h11, h12), (h21, h22) = plant.channels
    frame = (-50 - 63j) * TAU * (1 + 0.05 * n[4])
    np.testing.assert_allclose(h11.zeros, [-120 * TAU * (1 + 0.055 * n[0]), -90 * TAU * (1 + 0.055 * n[1])], rtol=1e-13)
    assert h21.zeros == h11.zeros and h21.poles == h11.poles
    np.testing.assert_allclose(sorted(h11.poles, key=lambda p: (p.real, p.imag)), sorted(
        [frame, frame.conjugate(), -2.65 * TAU * (1 + 0.06 * n[2]), -40 * TAU * (1 + 0.06 * n[3])],
        key=lambda p: (p.real, p.imag)), rtol=1e-13)
    np.testing.assert_allclose(h12.zeros, [-3 * TAU * (1 + 0.03 * n[5])], rtol=1e-13)
    np.testing.assert_allclose(h22.zeros, [-5 * TAU * (1 + 0.03 * n[8])], rtol=1e-13)
    assert {-3.5 * TAU * (1 + 0.03 * n[6]), -18.5 * TAU * (1 + 0.03 * n[7])} <= {p.real for p in h22.poles}
    w0 = TAU * 0.01
    nominal = parts.identified_plant()
    np.testing.assert_allclose(np.abs(plant.response(w0)), np.abs(nominal.response(w0)), rtol=1e-13)
    np.testing.assert_allclose(plant.dc_gain(), nominal.dc_gain(), rtol=1e-5)
    np.testing.assert_allclose(_ss_response(*plant.state_space(), 50.0), plant.response(50.0), rtol=1e-12)


def test_uncertain_plants_differ_by_seed_and_repeat_for_one_seed() -> None:
    a = parts.uncertain_plant(1001).channels[0][0]
    assert parts.uncertain_plant(1001).channels[0][0] == a
    assert parts.uncertain_plant(1002).channels[0][0] != a
