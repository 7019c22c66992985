"""The monolithic exact reference: V1 of the specification and the scalar specimen solve."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hybridsim.coordinator.problems.implicit_rths.methods.reference import specimen_deformation
from hybridsim.modules.plant.specimens import BilinearSpecimen


def test_v1_first_step_of_the_large_step_free_vibration(free_vibration_reference) -> None:
    """CAA free vibration from rest: d_1 = d_0 (1 - W^2/4) / (1 + W^2/4), W = omega Dt; -0.0023077 m for S1."""
    history = free_vibration_reference(0.04, 25)
    w2 = 4000.0 * 0.04**2
    assert history.displacement[1, 0] == pytest.approx(0.01 * (1 - w2 / 4) / (1 + w2 / 4), rel=1e-14)
    assert history.displacement[1, 0] == pytest.approx(-0.0023077, abs=1e-7)


def test_free_vibration_follows_the_caa_closed_form(free_vibration_reference) -> None:
    """Undamped CAA keeps the amplitude and elongates the period: d_i = d_0 cos(i phi), tan(phi/2) = W/2."""
    dt = 0.01
    history = free_vibration_reference(dt, 100)
    phi = 2.0 * math.atan(math.sqrt(4000.0) * dt / 2.0)
    np.testing.assert_allclose(history.displacement[:, 0], 0.01 * np.cos(phi * np.arange(101)), rtol=0, atol=1e-15)


@pytest.mark.parametrize("b", [-0.05, -0.012, -0.003, 0.0, 0.004, 0.0095, 0.03])
def test_scalar_solve_on_the_bilinear_law(b: float) -> None:
    """g(u) = u + c f(u) - b = 0 from a committed yielded state, against the piecewise-linear closed form."""
    spring = BilinearSpecimen(20e3, 0.008, 0.115)
    spring.update(0.012)  # yielded: committed (0.012, 160 + 2300 * 0.004 = 169.2 N)
    c = 2.5e-7  # m/N, the size of (A^-1)_ee on the building
    u, f, _ = specimen_deformation(spring, c, b, guess=0.012)
    # candidate roots on each branch of the trial law from (0.012, 169.2): elastic f = 169.2 + k0 (u - 0.012),
    # upper bound 2300 u + 141.6, lower bound 2300 u - 141.6; exactly one is consistent
    branches = [(20e3, 169.2 - 20e3 * 0.012), (2300.0, 141.6), (2300.0, -141.6)]
    roots = [(b - c * q) / (1 + c * k) for k, q in branches]
    expected = [r for r, (k, q) in zip(roots, branches) if math.isclose(spring.trial(r)[0], k * r + q, abs_tol=1e-9)]
    assert u == pytest.approx(expected[0], rel=1e-14, abs=1e-18)
    assert u + c * f == pytest.approx(b, rel=1e-14, abs=1e-18)
