"""Structural core: Rayleigh damping, Guyan condensation, frequencies of the maRTHS frame."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.model import GuyanCondensation, StructuralModel, natural_frequencies, rayleigh_coefficients
from tests.conftest import MARTHS_DATA


def test_rayleigh_coefficients_match_the_benchmark_figures():
    # maRTHS SPEC section 4: 5 % at 13.493 and 165.125 rad/s gives a = 1.247372 1/s, b = 5.598540e-4 s
    a, b = rayleigh_coefficients(13.493, 165.125, 0.05)
    assert a == pytest.approx(1.247372, rel=1e-6)
    assert b == pytest.approx(5.598540e-4, rel=1e-6)


def test_rayleigh_gives_the_damping_ratio_at_both_frequencies():
    a, b = rayleigh_coefficients(2.0, 30.0, 0.03)
    for w in (2.0, 30.0):
        assert (a / (2 * w) + b * w / 2) == pytest.approx(0.03, rel=1e-12)


def test_maRTHS_frame_frequencies_after_condensing_massless_dofs():
    k = np.loadtxt(MARTHS_DATA / "K_matrix.csv", delimiter=",")
    m = np.loadtxt(MARTHS_DATA / "M_matrix.csv", delimiter=",")
    f = natural_frequencies(k, m)
    # published (SPEC 17.1, reference 29-DOF CSV)
    np.testing.assert_allclose(f[:5], [2.2913, 12.7480, 26.2803, 26.5352, 29.9124], rtol=5e-5)


def test_guyan_recovery_leaves_no_force_on_condensed_dofs():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(6, 6))
    k = a @ a.T + 6 * np.eye(6)
    g = GuyanCondensation(k, [0, 2])
    u_r = np.array([0.3, -0.2])
    u = g.recover(u_r)
    force = k @ u
    np.testing.assert_allclose(u[[0, 2]], u_r)
    np.testing.assert_allclose(force[g.condensed], 0.0, atol=1e-12)
    # the condensed stiffness gives the same force at the retained DOFs
    np.testing.assert_allclose(g.stiffness @ u_r, force[[0, 2]], rtol=1e-12)


def test_structural_model_refuses_a_dof_named_twice():
    with pytest.raises(ValueError, match="DOF named twice: x"):
        StructuralModel(("x", "y", "x"), np.eye(3), np.zeros((3, 3)), np.ones(3))


def test_ground_load_is_minus_m_r_ag():
    model = StructuralModel(("a", "b"), np.diag([2.0, 3.0]), np.zeros((2, 2)), np.array([1.0, 0.0]))
    np.testing.assert_allclose(model.ground_load(0.5), [-1.0, 0.0])
