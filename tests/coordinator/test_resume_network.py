"""`hybridsim resume --network`: the rest of a stopped run goes across another emulated path than the stopped run's,
and ends as the uninterrupted run (the path delays the steps, it changes none of them)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_attributes, read_checkpoint, read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.coordinator.test_resume import aborted_at, experiment

STEPS = 320  # 1.6 s of 5 ms steps


def cut(tmp_path, name: str, **module):
    """The yielding spring test of test_resume, 1.6 s, checkpoints every 100 steps, its module as given."""
    exp = experiment(tmp_path, name, checkpoint_every=100)
    table = json.loads(json.dumps(exp.table))
    table["experiment"]["duration"] = STEPS * 0.005
    table["modules"][0].update(module)
    return parse_experiment(table, base_dir=tmp_path)


def test_a_run_stopped_across_one_path_resumes_across_another(tmp_path, capsys):
    whole = run_experiment(cut(tmp_path, "whole"))
    control, listener = aborted_at(250)
    first = {"round_trip_s": 0.002, "seed": 1}
    with pytest.raises(RunStopped):
        run_experiment(cut(tmp_path, "broken", address="local", network=first), control=control, listeners=[listener])
    assert read_checkpoint(tmp_path / "broken.h5").step == 200
    capsys.readouterr()
    for option, expected in (("round_trip_s=0.004,lag=1", "lag"), ("frame:round_trip_s=0.004", "no module is named")):
        assert main(["resume", str(tmp_path / "broken.h5"), "--network", option]) == 2  # one line, nothing runs
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and expected in err, err
    code = main(["resume", str(tmp_path / "broken.h5"), "--network", "round_trip_s=0.004,jitter_s=0.0005,seed=2",
                 "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["steps"] == STEPS
    assert summary["network"] == {"column": "4 ms round trip ± 0.5 ms jitter"}
    resumed = STEPS - 200
    assert summary["modules"]["column"]["network_segments"] >= 2 * resumed  # each step out and back, on the new path
    assert 1e-6 * summary["step_time_us"]["p50"] >= 0.004 - 2 * 0.0005  # a step takes its round trip
    stored = read_results(tmp_path / "broken.h5")
    assert stored["attrs"]["status"] == "completed"
    assert np.max(np.abs(stored["displacement"] - whole.displacement)) <= 1e-12 * np.max(np.abs(whole.displacement))
    table = json.loads(read_attributes(tmp_path / "broken.h5")["experiment_table"])
    assert table["modules"][0]["network"] == {"round_trip_s": 0.004, "jitter_s": 0.0005, "seed": 2}
