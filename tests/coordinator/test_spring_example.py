"""examples/spring_yielding.toml: the bilinear `spring` example yields, and its forces stay on Steel01's bounds.

Kinematic hardening (no isotropic): the force never leaves the band k_h x +- (1 - alpha) fy, with
k_h = alpha k; at the peak displacement the spring is loading, on the upper bound.
"""

from __future__ import annotations

import numpy as np

from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import EXAMPLES

K, YIELD, ALPHA = 39478.417604357434, 0.02, 0.05  # N/m, m, -


def test_the_spring_example_yields_within_the_bilinear_bounds(tmp_path):
    run_experiment(load_experiment(EXAMPLES / "spring_yielding.toml"), output=tmp_path / "spring.h5")
    stored = read_results(tmp_path / "spring.h5")
    x, f = stored["modules/column/displacement"][:, 0], stored["modules/column/force"][:, 0]
    fy = K * YIELD
    assert np.max(np.abs(x)) > 3 * YIELD  # it yields, well past the yield displacement
    band = ALPHA * K * x
    assert np.all(np.abs(f - band) <= (1 - ALPHA) * fy * (1 + 1e-12))
    peak = np.argmax(np.abs(x))
    np.testing.assert_allclose(abs(f[peak]), fy + ALPHA * K * (abs(x[peak]) - YIELD), rtol=1e-9)
