"""Checkpoints in the results file and `hybridsim resume`: a resumed virtual test ends as if uninterrupted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.cli.run import format_summary
from hybridsim.coordinator.control import RunControl
from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_checkpoint, read_results
from hybridsim.coordinator.simulation import resume_run, run_experiment
from tests.conftest import MARTHS_DATA

YIELDING = {"law": "bilinear", "stiffness": 4.0e5, "yield_displacement": 0.004, "hardening_ratio": 0.05}


def experiment(tmp_path, name: str, checkpoint_every: int = 500, address: str | None = None,
               integrator: dict | None = None):
    module = {"name": "column", "kind": "spring", "config": {"dofs": ["x"], **YIELDING}}
    if address:
        module["address"] = address
    table = {
        "experiment": {"name": name, "dt": 0.005, "duration": 20.0},
        "structure": {"dofs": ["x"], "mass_diagonal": [1000.0], "influence": [1.0],
                      "damping": {"rayleigh": [0.3, 1e-4]}},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": 0.6},
        "integrator": integrator or {"kind": "alpha-os", "alpha": -0.1},
        "modules": [module],
        "output": {"file": str(tmp_path / f"{name}.h5"), "checkpoint_every": checkpoint_every},
    }
    return parse_experiment(table, base_dir=tmp_path)


def aborted_at(step: int):
    control = RunControl()

    def listener(n, _arrays):
        if n == step:
            control.abort("coordinator lost")

    return control, listener


def test_an_aborted_yielding_test_resumes_to_the_uninterrupted_response(tmp_path):
    whole = run_experiment(experiment(tmp_path, "whole"))
    assert np.max(np.abs(whole["x"])) > 0.004  # the spring yields, so the module's state matters
    control, listener = aborted_at(1234)
    with pytest.raises(RunStopped):
        run_experiment(experiment(tmp_path, "broken"), control=control, listeners=[listener])
    checkpoint = read_checkpoint(tmp_path / "broken.h5")
    assert (checkpoint.step, read_results(tmp_path / "broken.h5")["attrs"]["completed_steps"]) == (1000, 1235)
    resumed = resume_run(tmp_path / "broken.h5")
    assert np.max(np.abs(resumed.displacement - whole.displacement)) <= 1e-12 * np.max(np.abs(whole.displacement))
    stored = read_results(tmp_path / "broken.h5")
    assert stored["attrs"]["status"] == "completed"
    np.testing.assert_array_equal(stored["displacement"], whole.displacement)


def test_resume_refuses_a_file_without_checkpoints_and_a_completed_run(tmp_path, capsys):
    control, listener = aborted_at(300)
    with pytest.raises(RunStopped):
        run_experiment(experiment(tmp_path, "plain", checkpoint_every=0), control=control, listeners=[listener])
    with pytest.raises(UsageError, match="no checkpoint to resume from: run the experiment again"):
        resume_run(tmp_path / "plain.h5")
    run_experiment(experiment(tmp_path, "completed", checkpoint_every=0))  # completed, not "no checkpoint"
    assert main(["resume", str(tmp_path / "completed.h5")]) == 2
    assert "holds a completed run; there is nothing to resume" in capsys.readouterr().err
    run_experiment(experiment(tmp_path, "done"))
    assert main(["resume", str(tmp_path / "done.h5")]) == 2
    assert "completed run" in capsys.readouterr().err
    assert main(["resume", str(tmp_path / "missing.h5")]) == 2
    assert "is not a results file" in capsys.readouterr().err


def test_a_resumed_runs_summary_says_what_it_covers_and_counts_evaluations_over_the_whole_run(tmp_path, capsys):
    """newmark over the yielding spring (several trials in a yielding step), stopped after step 1234 and resumed
    from its checkpoint at step 1000: the module evaluations are the uninterrupted run's (the stopped run's
    steps counted from the file's step IDs), the rates say they are this session's."""
    newmark = {"kind": "newmark"}
    whole = run_experiment(experiment(tmp_path, "whole", integrator=newmark)).summary
    assert whole["module_evaluations"]["max_in_a_step"] > 1
    assert (whole["steps"], whole["resumed_from_step"], whole["steps_this_session"]) == (4000, None, 4000)
    assert "resumed" not in format_summary({**whole, "output": "whole.h5"})
    control, listener = aborted_at(1234)
    with pytest.raises(RunStopped):
        run_experiment(experiment(tmp_path, "broken", integrator=newmark), control=control, listeners=[listener])
    assert main(["resume", str(tmp_path / "broken.h5"), "--json"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert (resumed["steps"], resumed["resumed_from_step"], resumed["steps_this_session"]) == (4000, 1000, 3000)
    assert resumed["module_evaluations"] == whole["module_evaluations"]
    assert resumed["peak_displacement"] == whole["peak_displacement"]
    assert "cover the steps_this_session steps of this session" in resumed["coverage"]
    assert ("resumed from the checkpoint at step 1000: 3000 steps this session; wall time, steps/s and step times "
            "below are this session's") in format_summary(resumed)
