"""NARX compensation: the sliding-window normal equations vs batch solves, ridge, a pure-delay plant."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.signal

from hybridsim.modules.experimental.compensators.filters import butterworth
from hybridsim.modules.experimental.compensators.kinds import build_compensator
from hybridsim.modules.experimental.compensators.narx import (
    NarxCompensator, SlidingNormalEquations, Terms, measurement_filter)

FS = 1024.0


def _batch(rows: np.ndarray, values: np.ndarray, ridge: float = 0.0) -> np.ndarray:
    """(D^T D + gamma I)^-1 D^T y as the least-squares solution of [D; sqrt(gamma) I] a = [y; 0] (SVD)."""
    p = rows.shape[1]
    stacked = np.vstack([rows, np.sqrt(ridge) * np.eye(p)])
    return np.linalg.lstsq(stacked, np.concatenate([values, np.zeros(p)]), rcond=None)[0]


def test_sliding_window_equals_the_batch_solve_after_the_amplitude_falls_by_1e5() -> None:
    """Big rows enter and leave the window; later windows of tiny rows must still match the batch solve."""
    rng = np.random.default_rng(7)
    size, window, count = 5, 200, 6000
    rows = rng.standard_normal((count, size))
    rows[: count // 2] *= 1e3
    rows[count // 2:] *= 1e-2
    truth = rng.standard_normal(size)
    values = rows @ truth + 1e-3 * np.abs(rows[:, 0]) * rng.standard_normal(count)
    normal = SlidingNormalEquations(size, window)
    for n in range(count):
        normal.push(rows[n], values[n])
        if n + 1 in (window, 2500, count // 2 + window // 2, count // 2 + window, count):
            last = slice(n + 1 - window, n + 1)
            gram = rows[last].T @ rows[last]
            np.testing.assert_allclose(normal.gram(), gram, rtol=0, atol=1e-12 * np.abs(gram).max())
            batch = _batch(rows[last], values[last])
            np.testing.assert_allclose(normal.solve(), batch, rtol=1e-10, atol=0)
            assert normal.rms() == pytest.approx(np.sqrt(np.mean(values[last] ** 2)), rel=1e-10)


@pytest.mark.parametrize("ridge", [1.0, 1e-2, 1e-7])
def test_ridge_equals_the_closed_form(ridge: float) -> None:
    """Columns scaled 1 .. 1e-2, so D^T D spans eigenvalues ~1e3 .. 0.1 and gamma = 1 changes the answer."""
    rng = np.random.default_rng(11)
    window, count = 1024, 1500
    rows = rng.standard_normal((count, 5)) * np.array([1.0, 0.3, 0.1, 0.03, 0.01])
    values = rows @ np.array([3.0, -1.0, 0.5, 0.0, -1.5]) + 1e-2 * rng.standard_normal(count)
    normal = SlidingNormalEquations(5, window)
    for r, v in zip(rows, values):
        normal.push(r, v)
    d, y = rows[-window:], values[-window:]
    closed_form = np.linalg.inv(d.T @ d + ridge * np.eye(5)) @ d.T @ y
    np.testing.assert_allclose(normal.solve(ridge), closed_form, rtol=1e-10)
    np.testing.assert_allclose(normal.solve(ridge), _batch(d, y, ridge), rtol=1e-10)
    if ridge == 1.0:  # not a no-op: gamma = 1 moves the weakest direction (eigenvalue ~0.1) a lot
        assert np.linalg.norm(normal.solve(ridge) - normal.solve()) > 1e-2 * np.linalg.norm(normal.solve())


def _drive(compensator: NarxCompensator, target: np.ndarray, plant) -> tuple[np.ndarray, np.ndarray, list]:
    """Closed loop with measured[n] = plant(commands[:n]); returns commands, measured, parameters per call."""
    commands, measured, parameters = np.zeros(target.size), np.zeros(target.size), []
    for n, t in enumerate(target):
        measured[n] = plant(commands[:n])
        commands[n] = compensator.command(float(t), float(measured[n]))
        parameters.append(compensator.parameters())
    return commands, measured, parameters


def test_on_a_pure_delay_the_identified_model_is_the_exact_inverse_a_d_sample_advance() -> None:
    """x_m[n] = x_c[n-d] with x_t two tones: the inverse of the delay is x_c[n] = x_t[n+d].

    The 3rd-order model identified on the first full window is the exact d-step predictor of the tones,
    sum_k alpha_k z^-k = z^d at z = exp(+-j w1), exp(+-j w2) (a Vandermonde system), so its command is
    x_t[n+d].  Before the test the actuator followed the tones (x_c = x_t), so every row is consistent.
    """
    delay, window, w1, w2 = 3, 64, 0.3, 0.7

    def tones(n):
        return np.sin(w1 * n) + 0.5 * np.cos(w2 * n + 0.4)

    target = tones(np.arange(100))
    narx = NarxCompensator(Terms(3), window)
    commands, _, parameters = _drive(narx, target, lambda past: past[-delay] if past.size >= delay
                                     else tones(past.size - delay))
    z = np.exp(1j * np.array([w1, -w1, w2, -w2]))
    predictor = np.linalg.solve(np.vander(1 / z, 4, increasing=True), z ** delay).real
    first_solve = window + 4 - 1  # rows start at call 4 (every regressor measured); L of them
    np.testing.assert_array_equal(commands[:first_solve], target[:first_solve])  # x_c = x_t until then
    np.testing.assert_allclose(parameters[first_solve], predictor, rtol=1e-9)
    assert commands[first_solve] == pytest.approx(tones(first_solve + delay), abs=1e-9)


def _plant(rng: np.random.Generator):
    """A causal plant three samples late with a small quadratic term and sensor noise."""
    response = scipy.signal.lfilter([0.0, 0.0, 0.2, 0.3], [1.0, -0.5], np.eye(1, 40)[0])

    def measure(past: np.ndarray) -> float:
        recent = past[::-1][:40]
        newest = recent[0] if recent.size else 0.0
        return float(response[: recent.size] @ recent + 0.04 * newest**2 + 1e-3 * rng.standard_normal())
    return measure


def _oracle_rows(filtered: np.ndarray, call: int, window: int, terms: Terms) -> np.ndarray:
    """Rows i = 1..L of the definition at ``call``: terms of x_mf[n-i], x_mf[n-i-1], ..."""
    i = np.arange(1, window + 1)
    lags = [filtered[call - i - k] for k in range(terms.lags)]
    return np.column_stack(lags[: terms.order + 1] + [lags[p] * lags[q] for p, q in terms.products])


@pytest.mark.parametrize("products, ridge, filter_command",
                         [((), 0.0, False), (((1, 2),), 0.0, False), (((0, 0), (1, 2)), 1e-3, False),
                          (((1, 2),), 0.0, True)])
def test_parameters_are_the_batch_fit_of_commands_on_filtered_measurements(products, ridge, filter_command) -> None:
    """Independent oracle: rows x_c[n-i] ~ terms(x_mf[n-i], ...), i = 1..L, filters by scipy lfilter.

    With ``filter_command`` the regressand is the command through the same filter.  A 100 Hz filter
    and a broadband target keep the taps apart, so a one-row slip would show far above round-off.
    """
    window = 300
    b, a = butterworth(2, 100.0, FS)
    terms = Terms(2, products)
    narx = NarxCompensator(terms, window, ridge, (b, a), filter_command=filter_command)
    target = scipy.signal.lfilter(*butterworth(2, 150.0, FS), np.random.default_rng(8).standard_normal(1200))
    commands, measured, parameters = _drive(narx, target, _plant(np.random.default_rng(5)))
    filtered = scipy.signal.lfilter(b, a, measured)
    regressand = scipy.signal.lfilter(b, a, commands) if filter_command else commands
    first_solve = window + terms.lags - 1
    assert np.all(parameters[first_solve - 1] == np.eye(1, terms.size)[0])
    for call in (first_solve, 700, 1199):
        rows = _oracle_rows(filtered, call, window, terms)
        batch = _batch(rows, regressand[call - np.arange(1, window + 1)], ridge)
        np.testing.assert_allclose(parameters[call], batch, rtol=0, atol=1e-9 * np.abs(batch).max())


def test_parameters_are_held_while_the_window_is_not_excited() -> None:
    """A rest period (noise only) then motion: re-estimates only where the window's command RMS >= 0.1."""
    window, threshold = 200, 0.1
    narx = NarxCompensator(Terms(1), window, excitation=threshold)
    n = np.arange(1500)
    target = np.where(n < 600, 0.0, np.sin(2 * np.pi * 1.5 * (n - 600) / FS))
    commands, measured, parameters = _drive(narx, target, _plant(np.random.default_rng(2)))
    rms = np.array([np.sqrt(np.mean(commands[c - window: c] ** 2)) if c >= window + 1 else 0.0 for c in n])
    excited = rms >= threshold
    first = int(np.argmax(excited))
    assert 600 < first < 800
    np.testing.assert_array_equal(parameters[first - 1], [1.0, 0.0])  # held through the rest period
    for call in (first, 1499):
        rows = _oracle_rows(measured, call, window, narx.terms)
        np.testing.assert_allclose(parameters[call], _batch(rows, commands[call - np.arange(1, window + 1)]),
                                   rtol=1e-7)


def test_terms_build_the_rows_and_name_them() -> None:
    terms = Terms(2, ((1, 2), (0, 3)))
    np.testing.assert_array_equal(terms.of(np.array([2.0, 3.0, 5.0, 7.0])), [2, 3, 5, 15, 14])
    assert terms.lags == 4 and terms.size == 5
    assert terms.labels() == ["x[n]", "x[n-1]", "x[n-2]", "x[n-1]*x[n-2]", "x[n]*x[n-3]"]


def test_state_round_trip_continues_identically() -> None:
    target = np.sin(0.05 * np.arange(400))
    first = NarxCompensator(Terms(2, ((1, 1),)), 50, 1e-6, measurement_filter(FS), filter_command=True)
    second = NarxCompensator(Terms(2, ((1, 1),)), 50, 1e-6, measurement_filter(FS), filter_command=True)
    measured = 0.0
    for t in target[:300]:
        measured = 0.9 * first.command(float(t), measured)
    second.set_state(json.loads(json.dumps(first.state())))
    for t in target[300:]:
        command = first.command(float(t), measured)
        assert command == second.command(float(t), measured)
        measured = 0.9 * command


def test_exactly_singular_windows_keep_the_previous_parameters() -> None:
    narx = NarxCompensator(Terms(1), 5)
    assert [narx.command(0.0, 0.0) for _ in range(10)] == [0.0] * 10
    np.testing.assert_array_equal(narx.parameters(), [1.0, 0.0])


def test_bad_configurations_are_refused() -> None:
    with pytest.raises(ValueError, match="window"):
        NarxCompensator(Terms(4), 5)
    with pytest.raises(ValueError, match="gamma"):
        NarxCompensator(Terms(1), 100, ridge=-1.0)
    with pytest.raises(ValueError, match="pair"):
        Terms(2, ((2, 1),))
    with pytest.raises(ValueError, match="filter_command"):
        NarxCompensator(Terms(1), 100, filter_command=True)


def test_a_config_builds_the_same_compensator() -> None:
    b, a = measurement_filter(FS)
    table = {"order": 2, "window": 40, "ridge": 1e-3, "products": [[1, 2]], "filter_b": b, "filter_a": a,
             "filter_command": True, "excitation": 0.01}
    built = NarxCompensator.from_config(json.loads(json.dumps(table)))
    direct = NarxCompensator(Terms(2, ((1, 2),)), 40, 1e-3, (b, a), filter_command=True, excitation=0.01)
    measured = 0.0
    for t in np.sin(0.05 * np.arange(200)):
        command = built.command(float(t), measured)
        assert command == direct.command(float(t), measured)
        measured = 0.7 * command
    assert isinstance(build_compensator({"kind": "narx", **table}), NarxCompensator)  # a site config's kind
    with pytest.raises(ValueError, match="'window'"):
        NarxCompensator.from_config({"order": 2})
    with pytest.raises(ValueError, match="both filter_b and filter_a"):
        NarxCompensator.from_config({"order": 2, "window": 40, "filter_b": b})
