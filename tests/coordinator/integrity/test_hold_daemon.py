"""The integrity hold of a site daemon: the lagging SDOF of test_hold.py against a real site process; the hold is
the site's own (its operator service says it, every run is refused) until the operator clears it, and the held
run then resumes from its checkpoint to its end."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.recorder import read_attributes
from hybridsim.coordinator.simulation import resume_run, run_experiment
from hybridsim.wire import site_control
from hybridsim.wire.daemons import LocalDaemon
from tests.coordinator.integrity.test_hold import THETA, lagging_sdof

WHY = "integrity: column's energy error"


def test_a_held_site_daemon_is_cleared_by_its_operator_and_the_run_resumes(tmp_path: Path) -> None:
    site = lagging_sdof(tmp_path, "site", {"kind": "none"}, {}).modules[0].config  # the in-process run's site
    with LocalDaemon("experimental", site, name="integrity") as daemon:
        address = daemon.start()
        remote = lagging_sdof(tmp_path, "held", {"kind": "none"}, {"energy_error": THETA, "action": "hold"},
                              address=address, checkpoint_every=100)
        with pytest.raises(RunStopped, match=f"held since {WHY}"):
            run_experiment(remote)
        with grpc.insecure_channel(address) as channel:
            assert WHY in site_control.call(channel, "Status", {})["held"]
            with pytest.raises(RunStopped, match=f"held since {WHY}"):  # resumed while held: refused
                resume_run(tmp_path / "held.h5")
            assert WHY in site_control.call(channel, "Clear", {"operator": "test"})["cleared"]
        result = resume_run(tmp_path / "held.h5")
    assert (result.summary["resumed_from_step"], result.summary["steps"]) == (200, 300)  # the checkpoint before 221
    assert read_attributes(tmp_path / "held.h5")["status"] == "completed"
