"""The average-acceleration scheme in equivalent-force form: identities of section 1, by algebra."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.problems.implicit_rths.methods.equivalent_force import EquivalentForceNewmark

RNG = np.random.default_rng(3)
M = np.diag([100.0, 80.0, 60.0])
C = np.array([[30.0, -10.0, 0.0], [-10.0, 25.0, -5.0], [0.0, -5.0, 12.0]])
K = np.array([[9e4, -4e4, 0.0], [-4e4, 8e4, -4e4], [0.0, -4e4, 4e4]])
DT = 0.01


def test_rates_satisfy_the_newmark_relations() -> None:
    """Eqs. (2) and (3): d_{i+1} = d_i + Dt v_i + Dt^2/4 (a_i + a_{i+1}), v_{i+1} = v_i + Dt/2 (a_i + a_{i+1})."""
    scheme = EquivalentForceNewmark(M, C, DT)
    d, v, a, d_next = (RNG.normal(size=3) for _ in range(4))
    v_next, a_next = scheme.rates(d_next, d, v, a)
    np.testing.assert_allclose(d_next, d + DT * v + DT**2 / 4 * (a + a_next), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(v_next, v + DT / 2 * (a + a_next), rtol=1e-12, atol=1e-14)


def test_solving_the_equivalent_force_equation_satisfies_the_equation_of_motion() -> None:
    """(K_PD + K) d_{i+1} = F_EQ,i+1 gives M a_{i+1} + C v_{i+1} + K d_{i+1} = F_{i+1}, eq. (1)."""
    scheme = EquivalentForceNewmark(M, C, DT)
    d, v, a, load = (RNG.normal(size=3) for _ in range(4))
    np.testing.assert_allclose(scheme.k_pd, 4 * M / DT**2 + 2 * C / DT)
    d_next = np.linalg.solve(scheme.k_pd + K, scheme.equivalent_force(load, d, v, a))
    v_next, a_next = scheme.rates(d_next, d, v, a)
    np.testing.assert_allclose(M @ a_next + C @ v_next + K @ d_next, load, rtol=0, atol=1e-8 * np.abs(load).max())


def test_bad_step_is_refused() -> None:
    with pytest.raises(ValueError):
        EquivalentForceNewmark(M, C, 0.0)
