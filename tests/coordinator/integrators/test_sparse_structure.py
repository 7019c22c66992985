"""The integrators over sparse M, C and K_I (SuperLU factors) against OpenSees and the dense path.

The oracle: a 300-DOF plane frame (10 column lines x 10 stories, ``frame2d``) assembled by SciPy from the
closed-form element stiffness, integrated by the coordinator's alpha-OS over the sparse matrices, and the
same frame as an OpenSees model of elasticBeamColumn elements under OpenSees' own AlphaOS.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from hybridsim.coordinator.integrators import IntegratorError, integrator_class
from hybridsim.modules.opensees.models.frame2d import Frame, matrices, opensees_response

DT, RAYLEIGH, STEPS = 1.0 / 1024.0, (0.2, 0.002), 400
FRAME = Frame(10, 10)


@pytest.fixture(scope="module")
def structure():
    stiffness, mass = matrices(FRAME)
    damping = RAYLEIGH[0] * mass + RAYLEIGH[1] * stiffness
    ground = 3.0 * np.sin(2 * np.pi * 2.0 * np.arange(STEPS) * DT)  # m/s^2, 2 Hz
    return mass, damping, stiffness, ground


def integrate(kind, options, mass, damping, stiffness, ground):
    """Displacement histories (STEPS x ndof) of the frame on its own K under ``kind`` (from rest)."""
    n = mass.shape[0]
    integrator = integrator_class(kind)(mass, damping, stiffness, DT, **options)
    integrator.start(np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n))
    influence = np.tile([1.0, 0.0, 0.0], n // 3)
    out = np.zeros((ground.size, n))
    for k in range(1, ground.size):
        trial = integrator.predict(-(mass @ influence) * ground[k])
        integrator.correct(stiffness @ trial)
        out[k] = integrator.displacement
    return out


def test_sparse_alpha_os_matches_opensees_alpha_os_on_a_300_dof_frame(structure):
    mass, damping, stiffness, ground = structure
    assert sp.issparse(stiffness) and stiffness.nnz < 0.05 * FRAME.ndof ** 2
    ours = integrate("alpha-os", {"alpha": -0.05}, mass, damping, stiffness, ground)
    record = list(range(0, FRAME.ndof, 7)) + [FRAME.ndof - 3]
    reference = opensees_response(FRAME, ("AlphaOS", 0.95), ground, DT, RAYLEIGH, record)
    difference = np.max(np.abs(ours[:, record] - reference)) / np.max(np.abs(reference))
    print(f"sparse alpha-OS vs OpenSees AlphaOS, 300 DOFs: {difference:.1e}")
    assert np.max(np.abs(reference)) > 0.05  # the roof moves about 0.1 m
    assert difference < 1e-8


def test_sparse_kr_alpha_equals_the_dense_scheme_checked_against_opensees(structure):
    """KR-alpha's sparse step (three solves, never alpha_1 or alpha_3) against its dense form, which
    test_schemes_vs_opensees checks against OpenSees' KRAlphaExplicit."""
    mass, damping, stiffness, ground = structure
    sparse = integrate("kr-alpha", {"rho_inf": 0.5}, mass, damping, stiffness, ground[:150])
    dense = integrate("kr-alpha", {"rho_inf": 0.5}, *(m.toarray() for m in (mass, damping, stiffness)), ground[:150])
    assert np.max(np.abs(dense)) > 1e-3
    assert np.max(np.abs(sparse - dense)) / np.max(np.abs(dense)) < 1e-12


def test_a_scheme_without_a_sparse_path_refuses_sparse_matrices_naming_those_that_take_them(structure):
    mass, damping, stiffness, _ = structure
    with pytest.raises(IntegratorError, match="newmark takes dense matrices only; .*alpha-os"):
        integrator_class("newmark")(mass, damping, stiffness, DT)


def test_a_singular_sparse_effective_matrix_is_refused(structure):
    mass, damping, stiffness, _ = structure
    with pytest.raises(IntegratorError, match="kr-alpha: an explicit scheme needs mass at every DOF"):
        integrator_class("kr-alpha")(0 * mass, damping, stiffness, DT)
    with pytest.raises(IntegratorError, match="alpha-os: the effective matrix is singular"):
        integrator_class("alpha-os")(sp.csr_matrix(mass.shape), 0 * damping, 0 * stiffness, DT)
