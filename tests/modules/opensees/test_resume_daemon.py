"""kill -9 of the coordinator mid-run while an OpenSees site daemon lives on, then `hybridsim resume`: the site
takes up its worker's copy of the checkpointed state (nothing replayed) and the run ends as if uninterrupted.

The site is a real `hybridsim site opensees` process serving a yielding Steel01 spring (path-dependent: a
restore that lost its state would change the response); the reference runs the same model in process.
"""

from __future__ import annotations

import json
import shutil

import numpy as np

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.cli.run import format_summary
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.modules.opensees import forked
from tests.coordinator.test_resume import experiment
from tests.coordinator.test_resume_after_coordinator_crash import _toml, kill_at_first_checkpoint
from tests.interop.helpers import site
from tests.modules.opensees.test_forked import _family, _gone_within
from tests.modules.opensees.test_module import MODELS

SPRING = {"model": "springs.py", "parameters": {"fy": 1600.0, "e0": 4.0e5, "b": 0.05},
          "control": [{"name": "x", "node": 2, "dof": 1}]}
"""yields at 4 mm, as the spring of tests/coordinator/test_resume.py"""


def _table(tmp_path, name: str, address: str | None) -> dict:
    """test_resume's yielding test over 10 s of record, its spring an OpenSees site (at ``address``)."""
    table = experiment(tmp_path, name).table
    module = {"name": "column", "kind": "opensees", "config": SPRING, **({"address": address} if address else {})}
    return {**table, "experiment": {**table["experiment"], "duration": 10.0}, "modules": [module]}


def test_a_site_that_lives_on_restores_from_its_kept_copy_after_the_coordinator_was_killed(tmp_path, capsys,
                                                                                               monkeypatch):
    """... and once the resumed run has completed, the site holds no worker process and no committed-path file
    of it (a completed run is never resumed), as the in-process reference run leaves none."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))   # the daemon's too
    paths = tmp_path / "state" / "hybridsim" / "opensees"
    shutil.copy(MODELS / "springs.py", tmp_path / "springs.py")
    forked.end_parked()                                             # what earlier tests of this process parked
    reference = run_experiment(parse_experiment(_table(tmp_path, "reference", None), base_dir=tmp_path))
    assert np.max(np.abs(reference.displacement)) > 0.004          # it yields: the state matters
    assert not forked._parked and not list(paths.iterdir())
    with site(tmp_path, "opensees", SPRING) as daemon:
        path = tmp_path / "killed.toml"
        path.write_text(_toml(_table(tmp_path, "killed", daemon.addresses["module"])))
        kill_at_first_checkpoint(path, tmp_path / "killed.h5", timeout_s=120.0)
        assert len(list(paths.iterdir())) == 1                      # the stopped run's, for the resume
        assert main(["resume", str(tmp_path / "killed.h5"), "--json"]) == 0
        log = daemon.wait_log(r"checkpoint restored from a kept copy of the worker \(nothing replayed\) in [0-9.]+ s")
        assert not list(paths.iterdir())
        assert _gone_within(_family(daemon.process.pid) - {daemon.process.pid}, 10.0)
    summary = json.loads(capsys.readouterr().out)
    stats = summary["modules"]["column"]
    assert (stats["restores_from_copy"], stats["restores_by_replay"], stats["replayed_steps"]) == (1, 0, 0), log
    assert stats["restore_s"] < 1.0
    assert "column: checkpoint restored from its worker's kept copy in 0." in format_summary(summary)
    final = read_results(tmp_path / "killed.h5")
    assert final["attrs"]["status"] == "completed"
    np.testing.assert_array_equal(final["displacement"], reference.displacement)
