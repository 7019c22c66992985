"""A non-converging OpenSees step stops a run cleanly: clear message, results kept, daemon closed.

The substructure is the fracture chain of models/springs.py, served as an
OpenSees site daemon: spring A (1000 N/m) fractures at 0.1 m while carrying a
60 N load with spring B (500 N/m, yielding at 50 N); from then on no
equilibrium exists (before it, the chain is 1/(1/1000 + 1/500) = 333.3 N/m).
With 30 kg on it, El Centro at twice its scale drives it there.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import MARTHS_DATA

MODELS = Path(__file__).parent / "models"


def test_fracture_refuses_the_step_and_stops_the_run_with_its_reason(tmp_path) -> None:
    experiment = parse_experiment({
        "experiment": {"name": "fracture", "dt": 0.01, "duration": 20.0},
        "structure": {"dofs": ["u"], "mass_diagonal": [30.0], "influence": [1.0]},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": 2.0},
        "integrator": {"kind": "alpha-os"},
        "modules": [{"name": "chain", "kind": "opensees", "address": "local",
                     "config": {"model": "springs.py", "parameters": {"case": "fracture"},
                                "control": [{"name": "u", "node": 3, "dof": 1}], "analysis": {"max_substeps": 4}}}],
        "output": {"file": str(tmp_path / "fracture.h5")},
    }, base_dir=MODELS)
    with pytest.raises(RunStopped, match=r"module 'chain' \(local daemon at 127\.0\.0\.1:\d+\) at step (\d+) \(t = [\d.]+ s\): step \1 "
                                         r"refused: site chain at .*: OpenSees did not converge .*back at its last "
                                         r"committed state"):
        run_experiment(experiment)
    stored = read_results(tmp_path / "fracture.h5")
    rows = stored["attrs"]["completed_steps"]
    assert stored["attrs"]["status"].startswith("stopped: module 'chain'")
    assert 0 < rows == stored["displacement"].shape[0] < experiment.steps + 1
    u = stored["displacement"][:, 0]
    # every completed step is before the fracture: spring A's elongation (60 + 500 u)/1500 stayed below 0.1 m
    assert np.max((60.0 + 500.0 * u) / 1500.0) < 0.1
    assert np.max(u) > 0.15  # and the run got close to it (u = 0.18 m fractures A)
