"""Benchmark trials as a campaign on a real Dask LocalCluster: the same table as the serial campaign, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.campaign.runner import run_campaign
from hybridsim.coordinator.campaign.table import read_table, write_table
from hybridsim.coordinator.problems.executors import Resources
from hybridsim.coordinator.problems.marths import campaign, loop

distributed = pytest.importorskip("distributed")


def test_a_two_trial_campaign_table_on_a_local_cluster_equals_the_serial_one(tmp_path) -> None:
    runs = campaign.runs(loop.RunSpec(plant="uncertain", compensator="rls", duration=6.0), 1)
    subject = campaign.Trials(keep_history=False)
    on_dask = run_campaign(subject, runs, tmp_path / "dask", "dask", Resources(workers=2))
    serial = run_campaign(subject, runs, tmp_path / "serial")
    assert [(r.status, r.how) for r in on_dask] == [("completed", "made")] * 2
    tables = [read_table(write_table(rows, tmp_path / f"{name}.h5")) for name, rows in (("d", on_dask), ("s", serial))]
    figures = [k for k in tables[1] if k.startswith("evaluation.J.")]
    assert len(figures) == 24 and tables[1]["seed"].tolist() == [0, 1]  # J1..J10: 2 x 8 + 4 x 2
    for name in (*figures, "evaluation.max_command_volts.0", "evaluation.max_command_volts.1"):
        assert np.array_equal(tables[0][name], tables[1][name]), name
    assert tables[1]["evaluation.J.J2.0"][0] != tables[1]["evaluation.J.J2.0"][1]  # the uncertain plant's own
