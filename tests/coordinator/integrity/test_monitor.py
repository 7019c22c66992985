"""The monitor in a real run: a linear SDOF's energy balance closes; the [integrity] table is validated."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from hybridsim.coordinator.experiment import ExperimentError, parse_experiment
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


def test_a_linear_run_closes_its_energy_balance(tmp_path: Path) -> None:
    """alpha-OS with alpha = 0 on a linear module whose K_I is its stiffness is Newmark's average acceleration
    (Combescure & Pegon 1997), the trapezoidal rule the balance integrates by: E_in = E_k + E_d + E_r to 1e-6 of
    E_in (the issue's bound); a module that measures what it is sent adds no energy (E_err = 0)."""
    table = copy.deepcopy(SDOF)
    table["output"] = {"file": str(tmp_path / "run.h5")}
    figures = run_experiment(parse_experiment(table, base_dir=tmp_path)).summary["integrity"]
    balance = figures["balance_j"]
    assert balance["input"] > 1.0
    assert abs(balance["residual"]) < 1e-6 * balance["input"]
    assert figures["modules"]["column"]["energy_error_j"] == 0.0 and figures["crossings"] == []


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
