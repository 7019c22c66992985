"""Dynamic modules as site daemons (`hybridsim site linear`, started by the coordinator): kill -9 of the
coordinator at its first checkpoint, then `hybridsim resume` in fresh daemons restored from the checkpoint (the
module's settled state, its pending command and G of docs/dynamic_modules.md): bit for bit the uninterrupted
run in one process.  The upper module sub-steps and reads its record from a file beside the experiment."""

from __future__ import annotations

from functools import partial

import numpy as np

from hybridsim.coordinator.problems.dynamic import chain
from hybridsim.coordinator.problems.dynamic.runs import sine_record
from tests.coordinator.test_resume_after_coordinator_crash import resumed_equals_uninterrupted

DT, DURATION = 0.01, 3.0
DATASETS = ("displacement", "velocity", "modules/lower/force", "modules/upper/force")


def _table(tmp_path, name: str) -> dict:
    record_file, record = sine_record(tmp_path, DT, DURATION)
    table = chain.experiment_table(-0.05, 1, record_file, record, DT, DURATION, str(tmp_path / f"{name}.h5"))
    upper = table["modules"][1]["config"]["dynamic"]
    upper["substeps"] = 3                                          # the upper module sub-steps
    np.savetxt(tmp_path / "upper_record.csv", np.asarray(upper.pop("ground_acceleration")), delimiter=",")
    upper["ground_acceleration_file"] = "upper_record.csv"         # and reads its record from a file
    table["output"]["checkpoint_every"] = 20
    return table


def test_a_dynamic_daemon_resumes_bit_for_bit_after_the_coordinator_was_killed(tmp_path) -> None:
    reference = resumed_equals_uninterrupted(tmp_path, partial(_table, tmp_path), DATASETS)
    assert np.max(np.abs(reference["displacement"])) > 1e-2
