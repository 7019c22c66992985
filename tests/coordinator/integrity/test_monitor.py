"""The monitor in a real run: a linear SDOF's energy balance closes, at every row of its results file; the
[integrity] table is validated."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hybridsim.coordinator.experiment import ExperimentError, parse_experiment
from hybridsim.coordinator.integrity.monitor import Watched
from hybridsim.coordinator.integrity.rules import Rule
from hybridsim.coordinator.export import export_results
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.recorder.verify import verify
from hybridsim.coordinator.simulation import run_experiment

SDOF: dict[str, Any] = {
    "experiment": {"name": "sdof", "dt": 0.01, "duration": 9.0},
    "structure": {"dofs": ["x"], "mass_diagonal": [1000.0], "influence": [1.0],
                  "damping": {"rayleigh_omega": [6.283185307179586, 62.83185307179586], "zeta": 0.05}},
    "ground_motion": {"file": "hybridsim:marths/ground_motion_elcentro.csv", "scale": 0.4},
    "integrator": {"kind": "alpha-os", "alpha": 0.0},
    "modules": [{"name": "column", "kind": "linear", "config": {"dofs": ["x"], "stiffness": [[39478.417604357434]]}}],
    "integrity": {"energy_error": 1e-3, "site": [{"name": "column"}]},
}


def test_each_row_holds_its_steps_indicators(tmp_path: Path) -> None:
    """The indicators are rows of the results file, each of its own step: the kinetic energy of row n is
    1/2 m v_n^2 and its input energy the trapezoidal sum of -m a_g dx up to row n, from the file's own response
    (to 1e-12); the balance closes at every row; the file verifies, and exports them with their units.

    alpha-OS with alpha = 0 on a linear module whose K_I is its stiffness is Newmark's average acceleration
    (Combescure & Pegon 1997), the trapezoidal rule the balance integrates by: E_in = E_k + E_d + E_r to 1e-6 of
    E_in (the issue's bound); a module that measures what it is sent adds no energy (E_err = 0)."""
    table = copy.deepcopy(SDOF)
    table["output"] = {"file": str(tmp_path / "run.h5")}
    figures = run_experiment(parse_experiment(table, base_dir=tmp_path)).summary["integrity"]
    assert figures["modules"]["column"]["energy_error_j"] == 0.0 and figures["crossings"] == []
    data = read_results(tmp_path / "run.h5")
    m, x, v, ag = 1000.0, data["displacement"][:, 0], data["velocity"][:, 0], data["ground_acceleration"]
    balance = data["integrity/balance"]
    assert balance[-1].tolist() == list(figures["balance_j"].values())
    p = -m * ag
    work = np.concatenate([[0.0], np.cumsum(0.5 * (p[1:] + p[:-1]) * np.diff(x))])
    assert balance.shape == (x.size, 7) and data["integrity/modules/column/tracking"].shape == (x.size, 1)
    np.testing.assert_allclose(balance[:, 1], 0.5 * m * v**2, rtol=1e-12, atol=1e-12 * balance[-1, 0])
    np.testing.assert_allclose(balance[:, 0], work, rtol=1e-12, atol=1e-12 * balance[-1, 0])
    assert np.abs(balance[:, 6]).max() < 1e-6 * balance[-1, 0] and balance[-1, 0] > 1.0
    assert not np.any(data["integrity/energy_error"]) and not np.any(data["integrity/modules/column/tracking"])
    assert verify(tmp_path / "run.h5").intact
    written = export_results(tmp_path / "run.h5", "csv", tmp_path / "csv")
    header = (tmp_path / "csv" / "run.integrity.csv").read_text().splitlines()[0]
    assert header.startswith("time [s],balance:input [J],") and header.endswith("energy_error [1]")
    site = (tmp_path / "csv" / "run.integrity.column.csv").read_text().splitlines()[0]
    assert site == "time [s],energy_error [1],tracking:x [m^2],delay:x [s]" and len(written) == 5


@pytest.mark.parametrize(("integrity", "message"), [
    ({"energy_error": 0.1, "site": [{"name": "beam"}]}, "integrity.site[0].name: no module is named 'beam'"),
    ({"energy_error": 0.1, "action": "pause"}, "integrity.action"),
    ({"energy_error": -1.0}, "integrity.energy_error"),
])
def test_a_wrong_integrity_table_is_refused_in_one_line(tmp_path: Path, integrity: dict[str, Any],
                                                        message: str) -> None:
    table = {**copy.deepcopy(SDOF), "integrity": integrity}
    with pytest.raises((ExperimentError, Exception), match=message.replace("[", r"\[").replace("]", r"\]")) as err:
        parse_experiment(table, base_dir=tmp_path)
    assert "\n" not in str(err.value)


def test_a_measurement_that_is_not_a_number_crosses_every_threshold_it_reaches() -> None:
    """A NaN measurement at one DOF makes its TI NaN: the largest |TI| the tracking threshold is compared with is NaN
    too (no value passes ``value <= threshold``), not the other DOF's 0 (max drops a NaN it meets second)."""
    site = Watched("lab", np.array([0, 1]), Rule({"tracking": 1e-6}, "stop"), 0.01)
    site.observe(np.zeros(2), np.zeros(2), np.zeros(2))
    site.observe(np.array([1e-3, 1e-3]), np.array([1e-3, np.nan]), np.zeros(2))
    rows = {site.keys[0]: np.zeros(1), site.keys[1]: np.zeros((1, 2)), site.keys[2]: np.zeros((1, 2))}
    assert site.record(rows, 0, 1.0) is True  # above a limit
    assert np.isnan(rows[site.keys[1]][0, 1]) and np.isnan(site.last["tracking"])
