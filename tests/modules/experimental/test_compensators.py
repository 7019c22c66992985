"""Compensators: the Butterworth filter, no compensation, RLS-AC and its algebraic loop (§11)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal

from hybridsim.coordinator.problems.marths import data, parts
from hybridsim.modules.experimental.compensators.filters import DirectFormII, butterworth
from hybridsim.modules.experimental.compensators.kinds import build_compensator
from hybridsim.modules.experimental.compensators.none import NoCompensation
from hybridsim.modules.experimental.compensators.rls import RlsCompensator

SPEC_B = [1.213433306582026e-05, 4.853733226328104e-05, 7.280599839492156e-05, 4.853733226328104e-05,
          1.213433306582026e-05]
SPEC_A = [1, -3.6794182542904585, 5.088644606369255, -3.134517189896432, 0.7254849871466889]


def test_butterworth_design_reproduces_the_benchmark_coefficients() -> None:
    b, a = butterworth(4, 20.0, 1024.0)
    np.testing.assert_allclose(b, SPEC_B, rtol=1e-12)
    np.testing.assert_allclose(a, SPEC_A, rtol=1e-12)


def test_direct_form_two_matches_scipy_lfilter_and_splits_off_the_free_response() -> None:
    x = np.random.default_rng(3).standard_normal(3000)
    filt = DirectFormII(SPEC_B, SPEC_A)
    y = []
    for v in x:
        free = filt.free_response()
        out = filt.advance(v)
        assert out == pytest.approx(SPEC_B[0] * v + free, abs=1e-15)
        y.append(out)
    np.testing.assert_allclose(y, scipy.signal.lfilter(SPEC_B, SPEC_A, x), rtol=1e-9, atol=1e-13)


def test_no_compensation_passes_the_target() -> None:
    assert NoCompensation().command(1.25, -3.0) == 1.25


def _rls(theta0=(1.0, 0.0, 0.0, 0.0), p0=None, forgetting=1.0) -> RlsCompensator:
    return RlsCompensator(theta0, 1e3 * np.eye(4) if p0 is None else p0, SPEC_B, SPEC_A, forgetting)


def test_command_is_the_updated_fir_applied_to_the_current_targets() -> None:
    """The simultaneous solution of §11.4: u(k) = theta_k^T psi_k with theta_k the update of this sample."""
    rls = _rls()
    rng = np.random.default_rng(4)
    targets = np.sin(np.arange(600) * 0.05)
    measured = 0.0
    for k, t in enumerate(targets):
        u = rls.command(t, measured)
        assert u == pytest.approx(rls.theta @ rls.targets, rel=1e-10, abs=1e-13)
        measured = 0.8 * u + 1e-3 * rng.standard_normal()


def test_rls_equals_regularised_batch_least_squares() -> None:
    """With lambda = 1, theta_k = (P0^-1 + sum phi phi^T)^-1 (P0^-1 theta0 + sum phi uf): the batch oracle."""
    theta0, p0 = np.array([0.5, 0.2, 0.1, 0.0]), 50.0 * np.eye(4)
    rls = _rls(theta0, p0)
    command_filter = DirectFormII(SPEC_B, SPEC_A)
    rng = np.random.default_rng(5)
    phis, ufs = [], []
    measured = 0.0
    for k in range(800):
        u = rls.command(np.sin(0.03 * k) + 0.1 * rng.standard_normal(), measured)
        phis.append(rls.filtered.copy())
        ufs.append(command_filter.advance(u))
        measured = 1.1 * u
    phi, uf = np.array(phis), np.array(ufs)
    info = np.linalg.inv(p0)
    batch = np.linalg.solve(info + phi.T @ phi, info @ theta0 + phi.T @ uf)
    np.testing.assert_allclose(rls.theta, batch, rtol=1e-6)
    np.testing.assert_allclose(rls.p, np.linalg.inv(info + phi.T @ phi), rtol=1e-6, atol=1e-12)


def test_state_round_trip_continues_identically() -> None:
    a, b = _rls(), _rls()
    for k in range(50):
        a.command(np.sin(0.1 * k), 0.5 * np.sin(0.1 * k - 0.2))
    b.set_state(a.state())
    for k in range(50, 80):
        assert a.command(np.sin(0.1 * k), 0.3) == b.command(np.sin(0.1 * k), 0.3)


def test_benchmark_channels_start_from_the_shipped_parameters() -> None:
    params = data.rls_initial_parameters()
    channels = [build_compensator(t) for t in parts.compensator_tables("rls")]
    np.testing.assert_array_equal(channels[0].theta, params["theta0_1"])
    np.testing.assert_array_equal(channels[1].p, params["P0_2"])
    assert channels[0].theta.sum() == pytest.approx(0.9149, abs=1e-4)
    assert np.linalg.eigvalsh(channels[1].p).min() == pytest.approx(20.1, abs=0.05)


def test_kinds_build_from_tables_and_refuse_unknown_ones() -> None:
    assert isinstance(build_compensator({"kind": "none"}), NoCompensation)
    with pytest.raises(ValueError, match="kind"):
        build_compensator({"kind": "magic"})
    with pytest.raises(ValueError, match="theta0"):
        build_compensator({"kind": "rls", "p0": [[1.0]]})
