"""A lognormal fragility curve fitted to a campaign's exceedances, and the tornado of its sensitivities.

Fragility: P(exceed | IM = x) = Phi(ln(x / theta) / beta), fitted by maximum likelihood to the number
of runs z_j of n_j at each intensity x_j whose response exceeds a limit (multiple-stripe analysis:
J. W. Baker, "Efficient analytical fragility function fitting using dynamic structural analysis data",
Earthquake Spectra 31(1), 2015, eq. 11: maximise sum_j ln C(n_j, z_j) + z_j ln p_j + (n_j - z_j) ln(1 - p_j)).
Its confidence: the fit repeated on bootstrap resamples of the runs at each intensity (a fixed seed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats


@dataclass(frozen=True)
class Fragility:
    """The median theta (the intensity's unit) and the log standard deviation beta (NaN: no fit, the
    outcomes are separated; run intensities between them); the bootstrap's band of theta (5 % and 95 %)."""

    theta: float
    beta: float
    theta_band: tuple[float, float]
    resamples: int

    def probability(self, x: np.ndarray) -> np.ndarray:
        """P(exceed | IM = x) of the fitted law."""
        return stats.norm.cdf(np.log(x / self.theta) / self.beta)


def _fit(x: np.ndarray, n: np.ndarray, z: np.ndarray) -> tuple[float, float]:
    """theta and beta of Baker's eq. 11, as the probit regression it is (Phi(a + b ln x): b = 1/beta,
    a = -ln(theta)/beta) by Fisher scoring (iteratively reweighted least squares, at most 100 steps); NaN
    when it has no maximum: outcomes separated by intensity (every run below some level passes, every run
    above it exceeds) drive beta to 0."""
    design = np.column_stack([np.ones_like(x), np.log(x)])
    coef = np.array([-np.log(np.sum(x * n) / np.sum(n)) / 0.4, 1 / 0.4])
    for _ in range(100):
        eta = design @ coef
        p = np.clip(stats.norm.cdf(eta), 1e-12, 1 - 1e-12)
        phi = np.maximum(stats.norm.pdf(eta), 1e-300)
        weight = n * phi**2 / (p * (1 - p))
        working = eta + (z / n - p) / phi
        step = np.linalg.lstsq(design * np.sqrt(weight)[:, None], working * np.sqrt(weight), rcond=None)[0]
        done = np.max(np.abs(step - coef)) < 1e-12 * max(1.0, np.max(np.abs(coef)))
        coef = step
        if not 0 < coef[1] < 1e3:  # beta below 1e-3 or negative: on its way to a step, no maximum
            break
        if done:
            return float(np.exp(-coef[0] / coef[1])), float(1 / coef[1])
    return math.nan, math.nan


def fit(intensity: Sequence[float], exceeded: Sequence[float], resamples: int = 200, seed: int = 0) -> Fragility:
    """The fit to runs at ``intensity`` (> 0) of which ``exceeded`` (1 or 0, or a fraction: an expected count);
    the band from the resamples that have a fit (NaN everywhere when the outcomes are separated)."""
    im, hit = np.asarray(intensity, float), np.asarray(exceeded, float)
    x = np.unique(im)
    groups = [hit[im == level] for level in x]
    n, z = np.array([len(g) for g in groups], float), np.array([g.sum() for g in groups])
    theta, beta = _fit(x, n, z)
    rng = np.random.default_rng(seed)
    thetas = [_fit(x, n, np.array([rng.choice(g, len(g)).sum() for g in groups]))[0] for _ in range(resamples)]
    fitted = [t for t in thetas if math.isfinite(t)]
    band = tuple(np.percentile(fitted, [5, 95])) if fitted else (theta, theta)
    return Fragility(theta, beta, (float(band[0]), float(band[1])), resamples)


def tornado(factors: dict[str, Sequence[float]], response: Sequence[float]) -> list[tuple[str, float, float]]:
    """Each factor's main effect: the mean response at its lowest and at its highest value (the others
    averaged over), largest swing first."""
    y = np.asarray(response, float)
    bars = []
    for name, values in factors.items():
        v = np.asarray(values, float)
        low, high = float(np.nanmean(y[v == v.min()])), float(np.nanmean(y[v == v.max()]))
        bars.append((name, low, high))
    return sorted(bars, key=lambda bar: -abs(bar[2] - bar[1]))


def crossing(intensity: Sequence[float], response: Sequence[float], limit: float) -> float:
    """The intensity at which an IDA curve (intensities ascending) first exceeds ``limit``: linear between its
    run below and its first run above (the curve starts at the origin); NaN if it never does."""
    x, y = np.concatenate([[0.0], intensity]), np.concatenate([[0.0], response])
    above = np.flatnonzero(y > limit)
    if not above.size:
        return math.nan
    j = above[0]
    return float(x[j - 1] + (limit - y[j - 1]) * (x[j] - x[j - 1]) / (y[j] - y[j - 1]))


def fit_ida(curves: Sequence[tuple[Sequence[float], Sequence[float]]], limit: float, resamples: int = 200,
            seed: int = 0) -> Fragility:
    """The fit to IDA curves, one per record, each intensity its own (Sa of a scaled record): the lognormal
    of the records' intensities at the limit (:func:`crossing`), theta = exp(mean ln x_i), beta = the standard
    deviation of ln x_i (n - 1; Baker 2015, eqs. 2 and 3); theta's band from bootstrap resamples of the records.
    A record that never exceeds the limit is known only to exceed it above its largest intensity (a truncated
    IDA, Baker 2015): theta and beta are then the maximum-likelihood ones, the record's term 1 - Phi(ln(x_max /
    theta) / beta).  NaN with fewer than two records that reach the limit."""
    at = np.log([crossing(x, y, limit) for x, y in curves])
    top = np.log([np.max(x) for x, _ in curves])
    reached = np.isfinite(at)
    if reached.sum() < 2:
        return Fragility(math.nan, math.nan, (math.nan, math.nan), 0)
    log_theta, beta = _lognormal(at[reached], top[~reached])
    rng = np.random.default_rng(seed)
    thetas = []
    for _ in range(resamples):
        pick = rng.integers(0, at.size, at.size)
        if reached[pick].sum() >= 2:
            thetas.append(math.exp(_lognormal(at[pick][reached[pick]], top[pick][~reached[pick]])[0]))
    band = np.percentile(thetas, [5, 95]) if thetas else (math.nan, math.nan)
    return Fragility(math.exp(log_theta), beta, (float(band[0]), float(band[1])), resamples)


def _lognormal(logs: np.ndarray, censored: np.ndarray) -> tuple[float, float]:
    """(ln theta, beta) of the records' log intensities at the limit ``logs`` and, for the records that never
    reached it, the logs of their largest intensities ``censored``: the moments (n - 1) when there are none,
    else the likelihood's maximum (BFGS from the moments, over mu = ln theta and t = ln beta)."""
    mean, std = float(logs.mean()), float(logs.std(ddof=1))
    if not censored.size:
        return mean, std

    def minus_log_likelihood(p: np.ndarray) -> tuple[float, np.ndarray]:
        """-(sum ln phi(z_i) - ln beta + sum ln Phi(w_j)), z = (u - mu)/beta, w = (mu - c)/beta, and its gradient
        (lambda = phi(w)/Phi(w)): d/dmu = -(sum z + sum lambda)/beta, d/dt = n_u - sum z^2 + sum lambda w."""
        beta = math.exp(p[1])
        z, w = (logs - p[0]) / beta, (p[0] - censored) / beta
        tail = special.log_ndtr(w)
        ratio = np.exp(-0.5 * w ** 2 - 0.5 * math.log(2 * math.pi) - tail)
        value = float(np.sum(0.5 * z ** 2) + logs.size * p[1] - np.sum(tail))
        return value, np.array([-(z.sum() + ratio.sum()) / beta, logs.size - np.sum(z ** 2) + np.sum(ratio * w)])

    best = optimize.minimize(minus_log_likelihood, [mean, math.log(max(std, 1e-3))], jac=True, method="BFGS",
                             options={"gtol": 1e-8})
    return float(best.x[0]), math.exp(best.x[1])
