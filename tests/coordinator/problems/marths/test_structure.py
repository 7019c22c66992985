"""The structural side of maRTHS: reference, partitions, Newmark map, against SPEC §4-§6 and §17.1-17.2."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from hybridsim.coordinator.problems.marths import data, loop, structure as ms
from hybridsim.modules.experimental.physical_frame import FeedbackForce

DT = 1 / 1024


def _frequencies(k: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Hz, massless DOFs statically condensed (the oracle: scipy on the condensed pair)."""
    massive = np.flatnonzero(np.diag(m) > 0)
    rest = np.setdiff1d(np.arange(k.shape[0]), massive)
    kc = k[np.ix_(massive, massive)] - k[np.ix_(massive, rest)] @ np.linalg.solve(k[np.ix_(rest, rest)],
                                                                                  k[np.ix_(rest, massive)])
    return np.sqrt(scipy.linalg.eigh(kc, m[np.ix_(massive, massive)], eigvals_only=True)[:5]) / (2 * np.pi)


def test_rayleigh_and_ideal_part_coefficients() -> None:
    ref = ms.reference_model()
    k, m = data.reference_matrices()
    c_expected = 1.247372 * m + 5.598540e-4 * k
    np.testing.assert_allclose(ref.damping, c_expected, rtol=2e-6, atol=1e-6 * np.abs(c_expected).max())
    kp, cp, mp = ms.ideal_physical_part()
    np.testing.assert_allclose(np.diag(mp), [902.5274, 17.86506, 17.86506], rtol=1e-6)
    np.testing.assert_allclose(kp, [[4915814.4, -1560771.072, -1560771.072], [-1560771.072, 1259050.901, -133980.635],
                                    [-1560771.072, -133980.635, 1259050.901]], rtol=0, atol=5e-4)
    omega = np.sqrt(scipy.linalg.eigh(kp, mp, eigvals_only=True))
    assert (omega[0], omega[2]) == pytest.approx((24.5418, 279.2404), abs=1e-4)
    np.testing.assert_allclose(cp, 2.255911 * mp + 3.291833e-4 * kp, rtol=2e-6)
    assert ms.numerical_substructure().mass[26, 26] == pytest.approx(6778.3755, abs=1e-4)


@pytest.mark.parametrize(("model", "expected"), [
    ("reference", [2.2913, 12.7480, 26.2803, 26.5352, 29.9124]),
    ("numerical", [2.2257, 12.7531, 26.2803, 26.5267, 29.6537]),
    ("hybrid", [2.3018, 12.8830, 26.2803, 26.5313, 30.1287]),
])
def test_natural_frequencies(model: str, expected: list[float]) -> None:
    if model == "reference":
        k, m = ms.reference_model().stiffness, ms.reference_model().mass
    else:
        num = ms.numerical_substructure()
        k, m = num.stiffness.copy(), num.mass.copy()
        if model == "hybrid":  # K2 at (27, 21) with the frame -> SAP sign flip, mX at 27 (§17.1)
            frame = ms.feedback_frame()
            flip = np.diag([1.0, -1.0])
            k[np.ix_([26, 20], [26, 20])] += flip @ frame.condensed_stiffness() @ flip
            m[26, 26] += frame.mass()[0, 0]
    np.testing.assert_allclose(_frequencies(k, m), expected, atol=6e-5)


def test_partition_round_off_the_ideal_part_restores_the_reference() -> None:
    num, ref = ms.numerical_substructure(), ms.reference_model()
    kp, cp, mp = ms.ideal_physical_part()
    block = np.ix_(ms.IDEAL_PART_DOFS, ms.IDEAL_PART_DOFS)
    k, c, m = num.stiffness.copy(), num.damping.copy(), num.mass.copy()
    k[block] += kp
    c[block] += cp
    m[26, 26] += mp[0, 0]
    np.testing.assert_allclose(k, ref.stiffness, rtol=0, atol=1e-15 * np.abs(ref.stiffness).max())
    restored = ms.FrameModel("restored", k, c, m, m @ ms.influence())
    ag = loop.ground_acceleration("elcentro", 0.4, 10 * 1024)
    u_ref = ms.NewmarkMap.of(ref, DT).displacements(ag)
    u_back = ms.NewmarkMap.of(restored, DT).displacements(ag)
    np.testing.assert_allclose(u_back, u_ref, rtol=0, atol=1e-10 * np.abs(u_ref).max())


def test_consistent_partition_cancels_the_feedback_model_exactly() -> None:
    """Fed the force the feedback model computes from the reference's own motion, the consistent
    numerical substructure moves exactly like the reference (to round-off)."""
    ticks = 10 * 1024
    ag = loop.ground_acceleration("elcentro", 0.4, ticks)
    u_ref = ms.NewmarkMap.of(ms.reference_model(), DT).displacements(ag)
    model = FeedbackForce(ms.feedback_frame(), DT)
    forces = np.array([ms.FRAME_SIGN * model.force(u[26], -u[20])[0] for u in u_ref])
    consistent = ms.numerical_map("consistent", DT)
    state, u = np.zeros(consistent.size), np.empty_like(u_ref)
    for k in range(ticks):
        state = consistent.transition @ state + consistent.ground * ag[k] + consistent.feedback @ forces[k]
        u[k] = state[:29]
    assert np.max(np.abs(u - u_ref).max(axis=0) / np.abs(u_ref).max(axis=0)) < 1e-9
    k_fb, _, _ = ms.feedback_matrices(ms.feedback_frame())
    assert np.all(k_fb[:, 28] == 0) and abs(k_fb[28, 26]) < 1e-6 * abs(k_fb[26, 26])  # M29 has no static part


def test_newmark_map_equals_the_textbook_step() -> None:
    """The 87x87 map against the sequential formulas of §6 with the feedback load (the oracle)."""
    model = ms.numerical_substructure()
    mp = ms.NewmarkMap.of(model, DT)
    m, c, k = model.mass, model.damping, model.stiffness
    a0, a1, a2, a3, a4, a5, a6, a7 = 4194304.0, 2048.0, 4096.0, 1.0, 1.0, 0.0, DT / 2, DT / 2
    kbar = k + a0 * m + a1 * c
    rng = np.random.default_rng(7)
    u0, v0, acc0 = (1e-3 * rng.standard_normal(29) for _ in range(3))
    f = np.zeros(29)
    f[[26, 20, 28]] = [100.0, -20.0, 3.0]
    ag = 0.7
    r = m @ (a0 * u0 + a2 * v0 + a3 * acc0) + c @ (a1 * u0 + a4 * v0 + a5 * acc0) - f - model.load_mass * ag
    u1 = np.linalg.solve(kbar, r)
    acc1 = a0 * (u1 - u0) - a2 * v0 - a3 * acc0
    v1 = v0 + a7 * acc1 + a6 * acc0
    s = mp.transition @ np.concatenate([u0, v0, acc0]) + mp.ground * ag + mp.feedback @ f[[26, 20, 28]]
    for got, want in zip(np.split(s, 3), (u1, v1, acc1)):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-9 * np.abs(want).max())


def test_interpolated_input_samples() -> None:
    ag = loop.ground_acceleration("elcentro", 0.4, 42169)
    np.testing.assert_allclose(ag[5120:5123], [0.02045507, 0.01994613, 0.01943719], atol=5e-9)
    assert ag.size == 42169


@pytest.mark.parametrize(("record", "ticks"), [("elcentro", 42169), ("kobe", 52163), ("morgan", 40930)])
def test_record_lengths(record: str, ticks: int) -> None:
    assert loop.RunSpec(record=record, compensator="none").ticks() == ticks


def test_el_centro_reference_checkpoints() -> None:
    out = loop.reference_response("elcentro", 0.4, 42169)
    time = np.arange(out.shape[0]) / 1024
    for column, peak, at in ((0, -3.99171, 7.711914), (1, 0.01006463, 7.714844)):
        i = np.argmax(np.abs(out[:, column]))
        assert out[i, column] == pytest.approx(peak, rel=2e-6)
        assert time[i] == pytest.approx(at, abs=1e-6)
    assert out[np.argmax(np.abs(out[:, 2])), 2] == pytest.approx(-0.0115317, rel=5e-6)
    assert out[np.argmax(np.abs(out[:, 4])), 4] == pytest.approx(-0.01981501, rel=5e-7)
    assert out[10240, 0] == pytest.approx(-1.49113663, rel=1e-8)
    assert out[10240, 1] == pytest.approx(0.00378446779, rel=1e-8)


@pytest.mark.parametrize(("record", "peak", "at"), [("kobe", -4.642451, 10.479492), ("morgan", -2.705422, 12.022461)])
def test_kobe_and_morgan_reference_peaks(record: str, peak: float, at: float) -> None:
    ticks = int(14 * 1024)  # both peaks come before 14 s
    out = loop.reference_response(record, 0.4, ticks)
    full_peak = np.max(np.abs(loop.reference_response(record, 0.4, loop.RunSpec(record=record, compensator="none").ticks())[:, 0]))
    i = np.argmax(np.abs(out[:, 0]))
    assert abs(out[i, 0]) == pytest.approx(full_peak, rel=1e-15)
    assert out[i, 0] == pytest.approx(peak, rel=1e-6)
    assert i / 1024 == pytest.approx(at, abs=1e-6)
