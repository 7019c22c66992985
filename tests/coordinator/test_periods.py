"""A run's natural periods from M and the pre-test's K_I, against the closed forms of spring-mass chains."""

from __future__ import annotations

import json
import math

import numpy as np
import scipy.sparse as sp

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.periods import natural_periods
from hybridsim.coordinator.recorder import read_attributes
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import EXAMPLES

M, K = 1000.0, 4.0e5
"""kg, N/m: each storey of the chains"""


def two_storey(tmp_path, integrator: str = 'kind = "alpha-os"') -> str:
    return f"""
[experiment]
name = "two-storey"
dt = 0.01
duration = 0.05
[structure]
dofs = ["x1", "x2"]
mass_diagonal = [{M}, {M}]
influence = [1.0, 1.0]
[ground_motion]
file = "hybridsim:marths/ground_motion_elcentro.csv"
[integrator]
{integrator}
[[modules]]
name = "frame"
kind = "linear"
config = {{ dofs = ["x1", "x2"], stiffness = [[{2 * K}, {-K}], [{-K}, {K}]] }}
[output]
file = "{tmp_path / 'out.h5'}"
"""


def test_a_run_says_and_keeps_the_periods_of_a_two_storey_chain(tmp_path):
    # equal masses m and storey springs k: omega^2 = (3 -+ sqrt 5)/2 k/m (Chopra, Example 10.1 in its form)
    closed = [2 * math.pi / math.sqrt((3 + s * math.sqrt(5)) / 2 * K / M) for s in (-1, 1)]
    import tomllib
    experiment = parse_experiment(tomllib.loads(two_storey(tmp_path)), base_dir=EXAMPLES)
    said: list[str] = []
    result = run_experiment(experiment, announce=said.append)
    periods = result.summary["natural_periods_s"]
    assert np.allclose(periods, closed, rtol=1e-9, atol=0)  # the pre-test's central differences are exact here
    assert json.loads(read_attributes(tmp_path / "out.h5")["natural_periods_s"]) == periods
    assert said == [f"natural periods (s) from M and the pre-test's K_I: T1 {closed[0]:.4g}, T2 {closed[1]:.4g}"]


def test_a_sparse_chain_takes_its_lowest_modes_from_shift_invert():
    # a fixed-free chain of n equal masses and springs: omega_j = 2 sqrt(k/m) sin((2j - 1) pi / (2 (2n + 1)))
    n = 60
    stiffness = sp.diags([np.r_[np.full(n - 1, 2 * K), K], np.full(n - 1, -K), np.full(n - 1, -K)], [0, 1, -1])
    mass = sp.identity(n) * M
    j = np.arange(1, 7)
    closed = 2 * math.pi / (2 * math.sqrt(K / M) * np.sin((2 * j - 1) * math.pi / (2 * (2 * n + 1))))
    assert np.allclose(natural_periods(sp.csr_matrix(stiffness), sp.csr_matrix(mass)), closed, rtol=1e-10, atol=0)
    assert np.allclose(natural_periods(stiffness.toarray(), mass.toarray()), closed, rtol=1e-10, atol=0)


def test_run_prints_the_periods_line_but_not_under_quiet(tmp_path, capsys):
    path = tmp_path / "two.toml"
    path.write_text(two_storey(tmp_path))
    for flags, shown in (([], True), (["--quiet"], False)):
        assert main(["run", str(path), "--overwrite", *flags]) == 0
        assert ("natural periods (s)" in capsys.readouterr().out) is shown
