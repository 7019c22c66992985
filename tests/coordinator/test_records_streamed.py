"""An experimental site's per-sample record is streamed to the results file in blocks, and the site holds
only the samples not collected yet.

The two-storey building of tests/coordinator/test_refusal_keeps_every_step.py (storey 2 an experimental
site with a virtual lab, one control sample per step).  The reference is the same run with the site in
the coordinator's process and its record collected once, at the end (the site holds it whole).  With the
collection every 256 steps (the run's default is every 8192) the record is the same number for number,
through a site daemon too (and its plant daemon's DAQ log); the in-process site never holds more than two collections' samples; a run that
the site stops keeps the blocks collected before (the stopped module's last rows are not asked for); and
``output.records = false`` leaves the file without records and the site without a log.
"""

from __future__ import annotations

from pathlib import Path

import copy
from typing import Any

import h5py
import numpy as np
import pytest

from hybridsim.coordinator import run_loop, simulation
from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.coordinator.test_refusal_keeps_every_step import experiment as building

FIELDS = ("sample_time", "target_strokes", "commands", "measured_strokes", "measured_loads")
EVERY = 256


def experiment(output: Path, where: dict[str, str], limit: float | None = None, plant_daemon: bool = False) -> Any:
    """The building with the site's initial stiffness given (a plant daemon cannot be probed before the test;
    the storey spring between the floors), its plant in the site's process or a daemon of the site's."""
    table = copy.deepcopy(building(output, where, limit).table)
    site = table["modules"][1]["config"]
    site["initial_stiffness"] = [[5.0e5, -5.0e5], [-5.0e5, 5.0e5]]
    if plant_daemon:
        site["backend"] = {"daemon": site["backend"]["plant"]}
    return parse_experiment(table, base_dir=output.parent)


def site_records(path: Path) -> dict[str, np.ndarray]:
    with h5py.File(path) as f:
        group = f["modules/second"]
        out: dict[str, np.ndarray] = {}
        if "records" in group:
            group["records"].visititems(lambda name, obj: out.update({name: obj[()]}) if isinstance(obj, h5py.Dataset)
                                        else None)
        return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The record collected whole at the end, the site in process."""
    folder = tmp_path_factory.mktemp("streamed")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(run_loop, "RECORDS_EVERY", 10 ** 9)
        run_experiment(experiment(folder / "whole.h5", {}))
    return site_records(folder / "whole.h5"), read_results(folder / "whole.h5")


class HeldSamples:
    """A step listener noting the most samples the in-process site held (the site exists once the run opened it)."""

    def __init__(self) -> None:
        self.most = 0
        self.modules: list = []

    def __call__(self, _n, _window) -> None:
        record = next(m for spec, m, _ in self.modules if spec.name == "second").site.record
        self.most = max(self.most, record.samples - record.first)


def test_a_streamed_record_equals_the_whole_one_and_the_site_holds_two_collections(reference, tmp_path, monkeypatch):
    whole, stored = reference
    steps = stored["time"].shape[0]
    assert whole["measured_strokes"].shape == (steps, 2)  # one sample per step, and sample 0 at rest
    monkeypatch.setattr(run_loop, "RECORDS_EVERY", EVERY)

    run_experiment(experiment(tmp_path / "daemon.h5", {"address": "local"}, plant_daemon=True))
    streamed = site_records(tmp_path / "daemon.h5")
    for name in FIELDS:
        np.testing.assert_array_equal(streamed[name], whole[name], err_msg=name)
    # the plant daemon's DAQ log is streamed through the site the same way: row k, the command of sample k
    np.testing.assert_array_equal(streamed["plant/commands"], whole["commands"][:steps - 1])

    held = HeldSamples()
    start_modules = simulation._start_modules

    def started(*args, **kwargs):  # the run starts its modules: note them
        held.modules = start_modules(*args, **kwargs)
        return held.modules

    monkeypatch.setattr(simulation, "_start_modules", started)
    run_experiment(experiment(tmp_path / "process.h5", {}), listeners=[held])
    for name in FIELDS:
        np.testing.assert_array_equal(site_records(tmp_path / "process.h5")[name], whole[name], err_msg=name)
    # at most two collections' samples: rows sent are forgotten when the next call says they are stored
    assert EVERY < held.most <= 2 * EVERY + 1


def test_a_run_the_site_stops_keeps_the_collected_blocks(reference, tmp_path, monkeypatch):
    whole, stored = reference
    monkeypatch.setattr(run_loop, "RECORDS_EVERY", EVERY)
    loads = np.abs(stored["modules/second/force"]).max(axis=1)
    limit = float(loads[:1200].max()) * (1 + 1e-9)
    refused = int(np.argmax(loads > limit))
    with pytest.raises(RunStopped, match="load cell reads"):
        run_experiment(experiment(tmp_path / "stopped.h5", {"address": "local"}, limit))
    kept = site_records(tmp_path / "stopped.h5")
    collected = (refused - 1) // EVERY * EVERY  # samples before the last collection's step (its target: next step)
    assert collected >= 4 * EVERY
    for name in FIELDS:
        np.testing.assert_array_equal(kept[name], whole[name][:collected], err_msg=name)


def test_no_records_asked_none_kept(tmp_path):
    table_run = experiment(tmp_path / "none.h5", {})
    table = {**table_run.table, "output": {**table_run.table["output"], "records": False}}
    run_experiment(parse_experiment(table, base_dir=tmp_path))
    assert site_records(tmp_path / "none.h5") == {}
