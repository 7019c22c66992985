"""Dynamic modules as site daemons (`hybridsim site linear`, started by the coordinator): kill -9 of the
coordinator at its first checkpoint, then `hybridsim resume` in fresh daemons restored from the checkpoint (the
module's settled state, its pending command and G of docs/dynamic_modules.md): bit for bit the uninterrupted
run in one process.  The upper module sub-steps and reads its record from a file beside the experiment."""

from __future__ import annotations

import numpy as np

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.coordinator.test_resume_after_coordinator_crash import _toml, kill_at_first_checkpoint
from hybridsim.coordinator.problems.dynamic import chain
from hybridsim.coordinator.problems.dynamic.runs import sine_record

DT, DURATION = 0.01, 3.0


def _table(tmp_path, name: str, local: bool) -> dict:
    record_file, record = sine_record(tmp_path, DT, DURATION)
    table = chain.experiment_table(-0.05, 1, record_file, record, DT, DURATION, str(tmp_path / f"{name}.h5"))
    upper = table["modules"][1]["config"]["dynamic"]
    upper["substeps"] = 3                                          # the upper module sub-steps
    np.savetxt(tmp_path / "upper_record.csv", np.asarray(upper.pop("ground_acceleration")), delimiter=",")
    upper["ground_acceleration_file"] = "upper_record.csv"         # and reads its record from a file
    for module in table["modules"]:
        if local:
            module["address"] = "local"
    table["output"]["checkpoint_every"] = 20
    return table


def test_a_dynamic_daemon_resumes_bit_for_bit_after_the_coordinator_was_killed(tmp_path) -> None:
    run_experiment(parse_experiment(_table(tmp_path, "reference", False), base_dir=tmp_path))
    reference = read_results(tmp_path / "reference.h5")
    path = tmp_path / "killed.toml"
    path.write_text(_toml(_table(tmp_path, "killed", True)))
    kill_at_first_checkpoint(path, tmp_path / "killed.h5", timeout_s=120.0)
    assert main(["resume", str(tmp_path / "killed.h5"), "--quiet"]) == 0
    final = read_results(tmp_path / "killed.h5")
    assert final["attrs"]["status"] == "completed"
    assert np.max(np.abs(reference["displacement"])) > 1e-2
    for dataset in ("displacement", "velocity", "modules/lower/force", "modules/upper/force"):
        np.testing.assert_array_equal(final[dataset], reference[dataset])
