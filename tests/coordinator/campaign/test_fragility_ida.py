"""The fragility of IDA curves: the records' intensities at the limit, some records never reaching it (truncated)."""

import numpy as np
import pytest
from scipy import stats

from hybridsim.coordinator.campaign.fragility import fit_ida

LIMIT = 0.02
INTENSITIES = [0.2, 0.5, 1.0, 1.5]


def _curves(capacities):
    """Straight IDA curves y = LIMIT x / c: each record reaches the limit at intensity c (above 1.5: never)."""
    return [(INTENSITIES, [LIMIT * x / c for x in INTENSITIES]) for c in capacities]


def test_every_record_at_the_limit_gives_the_moments_of_their_logs():
    capacities = [0.4, 0.7, 0.9, 1.2, 0.55]
    f = fit_ida(_curves(capacities), LIMIT)
    logs = np.log(capacities)
    assert f.theta == pytest.approx(np.exp(logs.mean()), rel=1e-12)
    assert f.beta == pytest.approx(logs.std(ddof=1), rel=1e-12)
    assert f.theta_band[0] < f.theta < f.theta_band[1]


def test_records_that_never_reach_the_limit_are_censored_at_their_largest_intensity():
    """At the maximum of the likelihood of right-censored normal logs its two score equations vanish (derived:
    sum (u_i - mu) / s^2 + sum lambda(z_j) / s = 0 and -n_u / s + sum (u_i - mu)^2 / s^3 + sum lambda(z_j) z_j / s = 0,
    z_j = (c_j - mu) / s, lambda the inverse Mills ratio phi / (1 - Phi)); SciPy's fit of CensoredData agrees to its
    own optimiser's tolerance (1e-4)."""
    capacities = [0.4, 0.7, 0.9, 1.2, 2.0, 3.0]  # the last two never reach the limit by 1.5
    f = fit_ida(_curves(capacities), LIMIT)
    u, c = np.log(capacities[:4]), np.log([1.5, 1.5])
    mu, s = np.log(f.theta), f.beta
    z = (c - mu) / s
    mills = stats.norm.pdf(z) / stats.norm.sf(z)
    assert abs(np.sum(u - mu) / s ** 2 + np.sum(mills) / s) < 1e-6
    assert abs(-u.size / s + np.sum((u - mu) ** 2) / s ** 3 + np.sum(mills * z) / s) < 1e-6
    mean, std = stats.norm.fit(stats.CensoredData(uncensored=u, right=c))
    assert f.theta == pytest.approx(np.exp(mean), rel=1e-4) and f.beta == pytest.approx(std, rel=1e-4)
    assert f.theta_band[0] < f.theta < f.theta_band[1]
    assert np.isnan(fit_ida(_curves([0.4, 2.0, 3.0]), LIMIT).theta)  # one record at the limit: no fit
