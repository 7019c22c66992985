"""A yielding dynamic OpenSees module as a site daemon (`hybridsim site opensees`, started by the coordinator):
the chain of `hybridsim study dynamic` with its upper part an OpenSees model whose k3 yields, integrated by
OpenSees' transient analysis in the daemon's worker (alpha = 0); kill -9 of the coordinator at its first
checkpoint, then `hybridsim resume` into fresh daemons, which replay the settled steps: bit for bit the
uninterrupted run in one process."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.problems.dynamic import chain
from hybridsim.coordinator.problems.dynamic.runs import sine_record
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.coordinator.test_resume_after_coordinator_crash import resumed_equals_uninterrupted

DT, DURATION = 0.01, 1.0
DATASETS = ("displacement", "velocity", "modules/lower/force", "modules/upper/force")
MODEL = Path(__file__).resolve().parent / "models" / "yielding_chain.py"


def _table(tmp_path: Path, name: str, yielding: bool = True) -> dict:
    record_file, record = sine_record(tmp_path, DT, DURATION)
    (tmp_path / MODEL.name).write_text(MODEL.read_text())       # a model file lies beside its configuration
    table = chain.experiment_table(0.0, 1, record_file, record, DT, DURATION, str(tmp_path / f"{name}.h5"))
    table["modules"][1] = {"name": "upper", "kind": "opensees", "config": {
        "model": MODEL.name, "parameters": {"yield_deformation": 5e-3 if yielding else 1.0},
        "path_independent": False, "control": [{"name": "x2", "node": 2, "dof": 1}],
        "dynamic": {"alpha": 0.0, "integrator": "opensees", "rayleigh": [chain.RAYLEIGH, 0.0],
                    "ground_acceleration": record.tolist(), "ground_acceleration_dt": DT}}}
    table["output"]["checkpoint_every"] = 40
    return table


def test_a_yielding_dynamic_daemon_resumes_bit_for_bit_after_the_coordinator_was_killed(tmp_path) -> None:
    reference = resumed_equals_uninterrupted(tmp_path, partial(_table, tmp_path), DATASETS)
    run_experiment(parse_experiment(_table(tmp_path, "elastic", yielding=False), base_dir=tmp_path))
    elastic = read_results(tmp_path / "elastic.h5")["displacement"]
    off = np.max(np.abs(reference["displacement"] - elastic)) / np.max(np.abs(elastic))
    print(f"x2 of the yielding chain off the elastic one's by {off:.2f} of its peak")
    assert off > 0.05
