"""The 5-DOF physical-frame model that computes the feedback force (§10)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from hybridsim.coordinator.problems.marths.structure import feedback_frame
from hybridsim.modules.experimental.physical_frame import FeedbackForce

DT = 1 / 1024


def test_stiffness_mass_and_modal_frequencies_match_the_specification() -> None:
    frame = feedback_frame()
    k = frame.stiffness()
    np.testing.assert_allclose(np.diag(k), [13_359_474.87, 1_358_243.71, 1_358_243.71, 915_858.40, 915_858.40],
                               atol=0.01)
    assert (k[0, 1], k[1, 2], k[1, 4]) == pytest.approx((2_142_024.80, 221_192.65, 457_929.20), abs=0.01)
    np.testing.assert_allclose(np.diag(frame.mass()), [8.453989, 0.890444, 0.890444, 0.409054, 0.409054], atol=1e-6)
    np.testing.assert_array_equal(frame.modal_frequencies(), np.round([357.18, 927.13, 1102.67, 1629.83, 2061.44], 2))
    np.testing.assert_allclose(frame.condensation(), [[-0.948404, -0.195871], [-1.864615, 0.097935],
                                                      [-2.338817, -0.5]], atol=1e-6)


def test_damping_is_five_percent_in_every_mode_at_the_rounded_frequencies() -> None:
    frame = feedback_frame()
    _, modes = scipy.linalg.eigh(frame.stiffness(), frame.mass())  # mass-normalised
    modal = modes.T @ frame.damping() @ modes
    np.testing.assert_allclose(np.diag(modal), 2 * 0.05 * frame.modal_frequencies(), rtol=1e-10)
    np.testing.assert_allclose(modal - np.diag(np.diag(modal)), 0.0, atol=1e-9 * modal.max())


def test_static_force_is_the_condensed_stiffness_and_the_free_joint_carries_none() -> None:
    frame = feedback_frame()
    force = FeedbackForce(frame, DT)
    for _ in range(3):  # constant motion: both backward differences vanish from the third sample on
        f, q = force.force(0.002, -0.004)
    np.testing.assert_allclose(f[:2], frame.condensed_stiffness() @ [0.002, -0.004], rtol=1e-12)
    assert abs(f[2]) < 1e-9 * abs(f[0])
    np.testing.assert_allclose(q[2:], frame.condensation() @ [0.002, -0.004], rtol=1e-14)


def test_backward_differences_start_from_zero() -> None:
    frame = feedback_frame()
    force = FeedbackForce(frame, DT)
    k, c, m, psi = frame.stiffness(), frame.damping(), frame.mass(), frame.shape()
    z = [np.array([1e-3, 0.0]), np.array([2e-3, 1e-4]), np.array([4e-3, 1e-4])]
    q = [psi @ v for v in z]
    v1 = (q[1] - q[0]) / DT
    v2 = (q[2] - q[1]) / DT
    expected = [k @ q[0], k @ q[1] + c @ v1 + m @ (v1 / DT), k @ q[2] + c @ v2 + m @ ((v2 - v1) / DT)]
    for zi, e in zip(z, expected):
        np.testing.assert_allclose(force.force(*zi)[0], e[:3], rtol=1e-12)
