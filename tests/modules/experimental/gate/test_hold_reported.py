"""A site's hold is said where the lab reads a run (issue 31, "the results file and the monitor say a site held
and why"): a run whose site trips on a measured overload, watched on a live monitor, and the next run against that
same site daemon (still held: the hold outlives sessions); the monitor's final state and the results file name the
hold and its cause."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import Experiment, parse_experiment
from hybridsim.coordinator.recorder import read_attributes
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.v1 import monitor_pb2 as pb
from hybridsim.wire.daemons import LocalDaemon
from tests.conftest import MARTHS_DATA
from tests.coordinator.monitor.runs import monitored_run

K, LIMIT = 39478.4, 40.0
"""N/m (1 Hz with 1000 kg); N: the load cell's limit, |K x| > 40 N beyond 1.01 mm, which the oscillator under
El Centro x 0.4 passes within its first 8 s (the record is quiet for its first seconds)"""
SITE = {"dt": 0.01, "setup": {"kind": "none", "dofs": ["x"]}, "actuators": [{"force": LIMIT}],
        "backend": {"plant": {"dt": 0.01, "dofs": ["x"], "actuators": [{"model": "ideal"}],
                              "specimen": {"kind": "linear", "stiffness": [[K]]}}}}
OVERLOAD = "actuator 1: load cell reads"


def oscillator(results: Path, address: str) -> Experiment:
    """The oscillator on the site daemon at ``address`` for 8 s."""
    return parse_experiment({
        "experiment": {"name": results.stem, "dt": 0.01, "duration": 8.0},
        "structure": {"dofs": ["x"], "mass_diagonal": [1000.0], "influence": [1.0]},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": 0.4},
        "modules": [{"name": "site", "kind": "experimental", "address": address, "config": SITE}],
        "output": {"file": str(results)}}, base_dir=results.parent)


def stop_of(results: Path) -> dict[str, Any]:
    """The results file's stop record, with its status."""
    attrs = read_attributes(results)
    return {**json.loads(attrs["stop"]), "status": attrs["status"]}


def test_the_monitor_and_the_results_file_say_the_site_held_and_why(tmp_path) -> None:
    with LocalDaemon("experimental", SITE, name="held") as daemon:
        address = daemon.start()
        with monitored_run(oscillator(tmp_path / "tripped.h5", address), tmp_path / "tripped.h5") as monitored:
            events = list(monitored.stub().Watch(pb.WatchRequest(), timeout=60))
            monitored.thread.join(30)
        with pytest.raises(RunStopped) as again:
            run_experiment(oscillator(tmp_path / "again.h5", address))
    state = events[-1].frame.progress.state
    assert state.startswith("stopped: module 'site'") and OVERLOAD in state
    assert OVERLOAD in str(monitored.outcome["error"])
    tripped = stop_of(tmp_path / "tripped.h5")
    assert tripped["module"] == "site" and OVERLOAD in tripped["cause"] and OVERLOAD in tripped["status"]
    held = stop_of(tmp_path / "again.h5")
    why = f"the site is held since {OVERLOAD}"
    assert why in str(again.value) and why in held["cause"] and why in held["status"], held
    assert "site-control HOST:PORT --clear" in held["cause"]  # how the operator lifts it
    assert held["step"] == 1  # refused at the first step: the oscillator never moved
