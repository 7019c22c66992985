"""The fragility fit against the law that made the data, and the tornado's main effects against a closed form."""

import numpy as np
from scipy import stats

from hybridsim.coordinator.campaign.fragility import fit, tornado


def test_expected_counts_of_a_lognormal_law_give_back_its_median_and_beta():
    # z_j = n p_j exactly: Baker's likelihood is stationary where every p_j = z_j / n, i.e. at the law itself
    x = np.repeat([0.1, 0.2, 0.4, 0.6, 0.8, 1.2], 10)
    p = stats.norm.cdf(np.log(x / 0.5) / 0.4)
    fragility = fit(x, p, resamples=0)
    assert abs(fragility.theta - 0.5) < 1e-5 and abs(fragility.beta - 0.4) < 1e-5


def test_the_bootstrap_band_holds_the_median_of_sampled_outcomes():
    rng = np.random.default_rng(3)
    x = np.repeat([0.2, 0.3, 0.45, 0.6, 0.9, 1.3], 40)
    hits = rng.random(x.size) < stats.norm.cdf(np.log(x / 0.5) / 0.4)
    fragility = fit(x, hits, resamples=100)
    low, high = fragility.theta_band
    assert low < 0.5 < high and high - low < 0.2
    assert np.isclose(fragility.probability(np.array([fragility.theta]))[0], 0.5)


def test_tornado_of_a_linear_response_orders_the_factors_by_their_swing():
    a, b = np.meshgrid([1.0, 2.0, 3.0], [10.0, 20.0], indexing="ij")
    y = 3.0 * a + 0.1 * b  # swings 3 * (3 - 1) = 6 and 0.1 * (20 - 10) = 1
    bars = tornado({"b": b.ravel(), "a": a.ravel()}, y.ravel())
    assert [name for name, _, _ in bars] == ["a", "b"]
    assert np.allclose([high - low for _, low, high in bars], [6.0, 1.0])
    assert np.isclose(bars[0][1], 3.0 * 1.0 + 0.1 * 15.0)


def test_outcomes_separated_by_intensity_have_no_fit():
    fragility = fit([0.1, 0.2, 0.4, 0.8], [0, 0, 1, 1], resamples=3)
    assert np.isnan(fragility.theta) and np.isnan(fragility.beta)
