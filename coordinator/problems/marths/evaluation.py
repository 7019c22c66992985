"""Evaluation criteria J1..J10 of the maRTHS benchmark (SPEC §14), unrounded.

All criteria use the full logged vectors (zero lead and tail included).
"NRMS" criteria are std ratios (mean removed), not RMS.  Delays follow
MATLAB ``finddelay`` for two vectors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np
import scipy.signal

CRITERIA = ("J1", "J2", "J3", "J4", "J5", "J6", "J7", "J8", "J9", "J10")
CLOSE_LAGS = 1e-9
"""relative: lags whose FFT correlation is this close to the best are re-evaluated exactly"""


def finddelay(x: np.ndarray, y: np.ndarray) -> int:
    """Delay of ``y`` relative to ``x`` in samples (positive: y lags x), as MATLAB ``finddelay(x, y)``.

    The shorter vector is zero-padded; c(m) = sum_n x(n+m) y(n) over all
    lags; the result is -m* at the m* maximising |c(m)| (normalising by
    sqrt(sum x^2 sum y^2) does not move it).  0 if either vector is all
    zeros.  Ties: the smallest |d|, then the positive one.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = max(x.size, y.size)
    x, y = np.pad(x, (0, n - x.size)), np.pad(y, (0, n - y.size))
    if not np.any(x) or not np.any(y):
        return 0
    magnitude = np.abs(scipy.signal.correlate(x, y, mode="full", method="fft"))
    lags = scipy.signal.correlation_lags(n, n, mode="full")
    candidates = lags[magnitude >= magnitude.max() * (1 - CLOSE_LAGS)]
    exact = np.array([abs(np.dot(x[max(m, 0):n + min(m, 0)], y[max(-m, 0):n - max(m, 0)])) for m in candidates])
    best = candidates[exact == exact.max()]
    delays = -best
    return int(sorted(delays, key=lambda d: (abs(d), -d))[0])


def std_ratio(error: np.ndarray, reference: np.ndarray) -> float:
    """100 std(error) / std(reference) (%), sample std (N - 1)."""
    return float(100.0 * np.std(error, ddof=1) / np.std(reference, ddof=1))


def peak_ratio(error: np.ndarray, reference: np.ndarray) -> float:
    """100 max|error| / max|reference| (%)."""
    return float(100.0 * np.max(np.abs(error)) / np.max(np.abs(reference)))


class Logged(Protocol):
    """The logged signals the criteria need (see hybridsim.coordinator.problems.marths.loop.History)."""

    target_strokes: np.ndarray
    measured_strokes: np.ndarray
    estimate: np.ndarray
    numerical: np.ndarray
    reference: np.ndarray


def criteria(log: Logged, sample_rate: float) -> dict[str, list[float]]:
    """J1..J10 of one run, unrounded: J1, J4 in ms; the others in %.

    J1..J4 per actuator; J5, J6 (estimate vs numerical) and J7, J9 (estimate
    vs reference) for (x, theta); J8, J10 for (x2, theta2, x3, theta3) of the
    numerical substructure vs the reference.
    """
    target, measured = log.target_strokes, log.measured_strokes
    tracking = measured - target
    delays = [1000.0 * finddelay(target[:, i], measured[:, i]) / sample_rate for i in range(2)]
    estimate, numerical, reference = log.estimate[:, :2], log.numerical[:, :2], log.reference[:, :2]
    stories_num, stories_ref = log.numerical[:, 2:6], log.reference[:, 2:6]

    def per_column(ratio, error: np.ndarray, base: np.ndarray) -> list[float]:
        return [ratio(error[:, i], base[:, i]) for i in range(base.shape[1])]

    return {
        "J1": delays,
        "J2": per_column(std_ratio, tracking, target),
        "J3": per_column(peak_ratio, tracking, target),
        "J4": list(delays),  # the benchmark computes it with the same call as J1 (§19.8)
        "J5": per_column(std_ratio, estimate - numerical, numerical),
        "J6": per_column(peak_ratio, estimate - numerical, numerical),
        "J7": per_column(std_ratio, estimate - reference, reference),
        "J8": per_column(std_ratio, stories_num - stories_ref, stories_ref),
        "J9": per_column(peak_ratio, estimate - reference, reference),
        "J10": per_column(peak_ratio, stories_num - stories_ref, stories_ref),
    }


def mean_criteria(runs: Sequence[Mapping[str, Sequence[float]]]) -> dict[str, list[float]]:
    """Each index averaged over ``runs`` (the benchmark reports the mean over the uncertain runs)."""
    return {name: np.mean([run[name] for run in runs], axis=0).tolist() for name in CRITERIA}


def spread_criteria(runs: Sequence[Mapping[str, Sequence[float]]]) -> dict[str, list[float]]:
    """Sample standard deviation of each index over ``runs`` (0 for a single run)."""
    ddof = 1 if len(runs) > 1 else 0
    return {name: np.std([run[name] for run in runs], axis=0, ddof=ddof).tolist() for name in CRITERIA}
