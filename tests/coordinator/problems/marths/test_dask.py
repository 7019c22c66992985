"""Benchmark trials on a real Dask LocalCluster give the same criteria as in this process."""

from __future__ import annotations

import pytest

from hybridsim.coordinator.problems.marths import loop
from hybridsim.coordinator.problems.marths.campaign import run_campaign

distributed = pytest.importorskip("distributed")


def test_trials_on_a_local_cluster_match_the_serial_runs() -> None:
    specs = loop.trial_specs(loop.RunSpec(plant="uncertain", compensator="rls", duration=6.0), 2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        on_dask = run_campaign(specs, scheduler=cluster.scheduler_address, keep_history=False)
    serial = run_campaign(specs, keep_history=False)
    assert [r.spec for r in on_dask] == specs
    assert [r.criteria for r in on_dask] == [r.criteria for r in serial]
