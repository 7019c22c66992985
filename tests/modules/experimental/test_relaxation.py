"""The relaxation check (UI-SIMCOR's CheckRelax) at an experimental site: a virtual lab whose load cell drifts
by 50 N per control sample, so that a hold of 4 samples changes the measured force by exactly 4 x 50 = 200 N
(derived, not measured: the specimen's displacement is held, only the drift moves the reading)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.wire.contract import ModuleError

DRIFT, HOLD, STIFFNESS, DT = 50.0, 4, 2.0e5, 0.01  # N per sample, samples, N/m, s


def _experiment(tmp_path: Path, relaxation: dict | None, name: str) -> dict:
    t = np.arange(0.0, 0.5 + 1e-9, DT)
    np.savetxt(tmp_path / "pulse.csv", np.column_stack([t, 2.0 * np.sin(2 * np.pi * 2 * t)]), delimiter=",",
               header="time_s,accel_m_s2", comments="")
    site = {"dt": DT, "setup": {"kind": "none", "dofs": ["x"]}, "actuators": [{}],
            "backend": {"plant": {"dt": DT, "dofs": ["x"], "actuators": [{"model": "ideal"}],
                                  "load_cells": {"drift": DRIFT},
                                  "specimen": {"kind": "linear", "stiffness": [[STIFFNESS]]}}}}
    if relaxation is not None:
        site["relaxation"] = relaxation
    return {"experiment": {"name": name, "dt": DT},
            "structure": {"dofs": ["x"], "mass_diagonal": [500.0], "influence": [1.0]},
            "ground_motion": {"file": str(tmp_path / "pulse.csv")},
            "modules": [{"name": "site", "kind": "experimental", "config": site}],
            "output": {"file": str(tmp_path / f"{name}.h5")}}


def _run(tmp_path: Path, relaxation: dict | None, name: str):
    return run_experiment(parse_experiment(_experiment(tmp_path, relaxation, name), base_dir=tmp_path))


def test_a_drift_past_the_threshold_warns_at_every_step_and_one_below_it_does_not(tmp_path: Path) -> None:
    warned = _run(tmp_path, {"hold_samples": HOLD, "threshold": 150.0}, "warned")
    quiet = _run(tmp_path, {"hold_samples": HOLD, "threshold": 250.0}, "quiet")
    steps = warned.displacement.shape[0] - 1
    site = warned.summary["modules"]["site"]
    assert site["relaxation_warnings"] == steps
    assert site["relaxation_largest_change"] == pytest.approx(HOLD * DRIFT, rel=1e-9)
    assert quiet.summary["modules"]["site"]["relaxation_warnings"] == 0
    assert np.array_equal(warned.displacement, quiet.displacement)  # a warning changes nothing else


def test_a_drift_past_the_threshold_holds_the_site_when_declared(tmp_path: Path) -> None:
    with pytest.raises((RunStopped, ModuleError), match=r"relaxation: the force at interface DOF 1 changed by 200 "
                                                         r"over a hold of 4 samples.*held until an operator"):
        _run(tmp_path, {"hold_samples": HOLD, "threshold": 150.0, "action": "hold"}, "held")


def test_the_relaxation_check_is_refused_on_a_sites_own_clock(tmp_path: Path) -> None:
    table = _experiment(tmp_path, {"threshold": 150.0}, "own")
    table["modules"][0]["config"]["clock"] = "own"
    with pytest.raises(Exception, match=r"relaxation check holds a step's target in lockstep.*drop relaxation"):
        run_experiment(parse_experiment(table, base_dir=tmp_path))
