"""`hybridsim campaign --executor dask`: a worker killed mid-run, its run given to another that resumes its file."""

import json
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.campaign.grid import expand
from hybridsim.coordinator.campaign.runner import run_one
from hybridsim.coordinator.cli import main
from hybridsim.coordinator.ownership import lock_path
from hybridsim.coordinator.recorder.read import read_results
from tests.coordinator.test_resume_after_coordinator_crash import _has_checkpoint

pytest.importorskip("distributed")
STEPS = 3000
# a yielding spring (its state matters on resume) under El Centro: 3000 steps of 5 ms, a checkpoint every 500
SPRING = f"""[experiment]
name = "spring"
dt = 0.005
duration = {STEPS * 0.005}
[structure]
dofs = ["x"]
mass_diagonal = [1000.0]
influence = [1.0]
damping = {{ rayleigh = [0.3, 1e-4] }}
[ground_motion]
file = "hybridsim:marths/ground_motion_elcentro.csv"
[[modules]]
name = "column"
kind = "spring"
config = {{ dofs = ["x"], law = "bilinear", stiffness = 4.0e5, yield_displacement = 0.004, hardening_ratio = 0.05 }}
[output]
checkpoint_every = 500
"""


def _kill_the_first_checkpointed_run(out: Path, killed: list, timeout_s: float = 60.0) -> None:
    """Once a run's file holds a checkpoint, kill -9 the worker that runs it (the PID its lock file names)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for results in out.glob("*.h5"):
            if _has_checkpoint(results):
                pid = json.loads(lock_path(results).read_text())["pid"]
                os.kill(pid, signal.SIGKILL)
                killed.append(results.name)
                return
        time.sleep(0.01)


def test_a_killed_worker_s_run_is_resumed_elsewhere_and_recorded_once(tmp_path, capsys):
    (tmp_path / "spring.toml").write_text(SPRING)
    study = tmp_path / "study.toml"
    study.write_text('[campaign]\nexperiment = "spring.toml"\n[campaign.grid]\n"ground_motion.scale" = [0.4, 0.6]\n')
    out, killed = tmp_path / "out", []
    killer = threading.Thread(target=_kill_the_first_checkpointed_run, args=(out, killed))
    killer.start()
    # the default of --executor dask: a LocalCluster of --workers processes, its dashboard printed
    assert main(["campaign", str(study), "--executor", "dask", "--workers", "2", "--out", str(out), "--json"]) == 0
    killer.join()
    captured = capsys.readouterr()
    assert "dashboard http" in captured.err and "2/2 done, 0 running, 0 failed" in captured.err
    rows = json.loads(captured.out)["runs"]
    assert len(killed) == 1
    assert [row["status"] for row in rows] == ["completed"] * 2
    assert sorted(row["how"] for row in rows) == ["made", "resumed"]
    for row in rows:
        stored = read_results(row["output"])
        assert stored["attrs"]["completed_steps"] == len(stored["displacement"]) == STEPS + 1  # rows 0..STEPS, once
    resumed = next(row for row in rows if row["how"] == "resumed")
    assert Path(resumed["output"]).name == killed[0]
    run = next(run for run in expand({"ground_motion.scale": [0.4, 0.6]}) if run.run_id == resumed["run_id"])
    whole = read_results(run_one(str(tmp_path / "spring.toml"), run, str(tmp_path / "whole")).output)["displacement"]
    assert np.max(np.abs(whole)) > 0.004  # the spring yielded: its restored state mattered
    x = read_results(resumed["output"])["displacement"]
    assert np.max(np.abs(x - whole)) <= 1e-12 * np.max(np.abs(whole))
