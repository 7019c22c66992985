"""The pre-test recovers the initial stiffness of the modules (UI-SIMCOR's initial-stiffness test)."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.partition import ModuleSlot, Partition
from hybridsim.coordinator.pretest import pretest
from hybridsim.wire.contract import Dof, Session
from hybridsim.modules.linear import LinearModule
from hybridsim.modules.spring import SpringModule, StiffeningSpecimen


def slot(name, module, index):
    return ModuleSlot(name, module, module.describe(), np.array(index))


def test_pretest_recovers_overlapping_linear_modules_to_round_off():
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    ka, kb = 1e6 * (a @ a.T + 3 * np.eye(3)), 1e3 * (b @ b.T + 3 * np.eye(3))
    left = LinearModule([Dof("x0"), Dof("x1"), Dof("x2")], ka)
    right = LinearModule([Dof("x2"), Dof("x3"), Dof("x4", "rotation")], kb)
    partition = Partition(5, [slot("left", left, [0, 1, 2]), slot("right", right, [2, 3, 4])])
    partition.open(lambda s: Session(0.01, s.description.dof_names))
    result = pretest(partition)
    expected = np.zeros((5, 5))
    expected[:3, :3] += ka
    expected[2:, 2:] += kb
    assert np.max(np.abs(result.stiffness - expected)) / np.max(np.abs(expected)) < 1e-9
    assert result.asymmetry < 1e-12
    np.testing.assert_allclose(result.rest_force, 0.0)
    # nothing of the probing was committed: both modules end at their committed rest step
    assert left.stats["committed"] == 1 and right.stats["committed"] == 1


def test_pretest_reports_the_asymmetry_of_a_non_symmetric_module():
    k = np.array([[2.0, -1.0], [-0.5, 1.0]])  # e.g. a follower-force or measured specimen matrix
    module = LinearModule([Dof("a"), Dof("b")], k)
    partition = Partition(2, [slot("m", module, [0, 1])])
    partition.open(lambda s: Session(0.01, s.description.dof_names))
    result = pretest(partition)
    np.testing.assert_allclose(result.stiffness, 0.5 * (k + k.T), rtol=1e-9)
    assert result.asymmetry == pytest.approx(np.linalg.norm(k - k.T) / np.linalg.norm(k), rel=1e-9)


def test_central_differences_measure_the_tangent_at_rest_of_a_nonlinear_spring():
    # f = k y + k y^3 / y_ref^2 has tangent k at rest; the +-h central difference gives exactly
    # (f(h) - f(-h)) / 2h = k (1 + (h / y_ref)^2), i.e. the tangent to 1e-4 here
    spring = SpringModule(["x"], StiffeningSpecimen(5.0e4, 0.01))
    partition = Partition(1, [slot("s", spring, [0])])
    partition.open(lambda s: Session(0.01, s.description.dof_names))
    result = pretest(partition, amplitude=1e-4)
    assert abs(result.stiffness[0, 0] - 5.0e4 * (1 + (1e-4 / 0.01) ** 2)) < 1e-6
