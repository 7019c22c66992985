"""A campaign on a real Dask LocalCluster (2 worker processes) equals the runs made one by one, bit for bit."""

from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.campaign.grid import expand
from hybridsim.coordinator.campaign.runner import run_campaign
from hybridsim.coordinator.problems.executors import Resources
from hybridsim.coordinator.recorder.read import read_results

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sdof.toml"


def test_three_scales_two_trials_on_two_dask_workers_equal_the_serial_runs(tmp_path):
    runs = expand({"ground_motion.scale": [0.2, 0.4, 0.8]}, trials=2)
    # each run's results writer is a child process: the workers must not be daemonic (docs/campaigns.md)
    with dask.config.set({"distributed.worker.daemon": False}), distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        scheduler = Resources(scheduler=cluster.scheduler_address)
        on_dask = run_campaign(EXAMPLE, runs, tmp_path / "dask", "dask", scheduler)
    serial = run_campaign(EXAMPLE, runs, tmp_path / "serial")
    assert [r.run for r in on_dask] == runs
    assert [(r.status, r.how) for r in on_dask] == [("completed", "made")] * 6
    for a, b in zip(on_dask, serial):
        assert np.array_equal(read_results(a.output)["displacement"], read_results(b.output)["displacement"])
