"""The maRTHS frame of examples/frame_three_linear.toml with each story a separate daemon process."""

from __future__ import annotations

import dataclasses
import os
import signal
import time

import numpy as np
import pytest

from hybridsim.wire.daemons import LocalDaemon
from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import Experiment, load_experiment
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import EXAMPLES


def shortened(experiment: Experiment, duration_s: float = 1.0, quiet_s: float = 4.9) -> Experiment:
    """``experiment`` over ``duration_s`` of El Centro, skipping the record's first ``quiet_s`` (all zeros)."""
    start, steps = round(quiet_s / experiment.dt), round(duration_s / experiment.dt)
    acceleration = experiment.motion.acceleration[start: start + steps + 1]
    assert acceleration[0] == 0.0 and np.max(np.abs(acceleration)) > 0.1
    return dataclasses.replace(experiment, motion=dataclasses.replace(experiment.motion, acceleration=acceleration))


def frame() -> Experiment:
    return shortened(load_experiment(EXAMPLES / "frame_three_linear.toml"))


def at(experiment: Experiment, addresses: dict[str, str], deadline_s: float = 10.0,
       transport: str = "auto") -> Experiment:
    modules = tuple(dataclasses.replace(m, address=addresses[m.name], deadline_s=deadline_s, transport=transport)
                    for m in experiment.modules)
    return dataclasses.replace(experiment, modules=modules)


@pytest.fixture(scope="module")
def in_process(tmp_path_factory):
    return run_experiment(frame(), output=tmp_path_factory.mktemp("frame") / "in_process.h5")


@pytest.mark.parametrize("transport", ["auto", "stream"])  # the step link of a daemon on this machine; gRPC
def test_three_local_daemons_give_the_in_process_response(in_process, tmp_path, transport):
    experiment = frame()
    remote = run_experiment(at(experiment, {m.name: "local" for m in experiment.modules}, transport=transport),
                            output=tmp_path / "remote.h5")
    scale = np.max(np.abs(in_process.displacement), axis=0)
    assert np.max(np.abs(remote.displacement - in_process.displacement) / scale) < 1e-12
    assert np.max(np.abs(remote.restoring_force - in_process.restoring_force)) <= 1e-12 * np.max(
        np.abs(in_process.restoring_force))
    assert all(remote.summary["modules"][m.name]["executed"] > 1024 for m in experiment.modules)


def test_a_daemon_killed_mid_run_stops_the_run_naming_it_and_the_file_keeps_the_completed_steps(in_process, tmp_path):
    experiment = frame()
    daemons = {m.name: LocalDaemon(m.kind, m.config, base_dir=m.base_dir, name=m.name) for m in experiment.modules}
    killed_at: list[float] = []

    def kill_story2_at_step_300(done: int, total: int) -> None:
        if done == 300:
            os.kill(daemons["story2"].pid, signal.SIGKILL)
            killed_at.append(time.monotonic())

    try:
        for daemon in daemons.values():
            daemon.launch()
        addresses = {name: daemon.start() for name, daemon in daemons.items()}
        with pytest.raises(RunStopped) as info:
            run_experiment(at(experiment, addresses, deadline_s=1.0), output=tmp_path / "killed.h5",
                           progress=kill_story2_at_step_300)
        stopped = time.monotonic()
    finally:
        for daemon in daemons.values():
            daemon.stop()
    message = str(info.value)
    assert message.startswith(f"module 'story2' (daemon at {addresses['story2']}) at step ")
    assert f"site story2 at {addresses['story2']}: execute of step " in message
    # the run stops within the deadline; closing the dead module takes at most one more deadline
    assert stopped - killed_at[0] < 2 * 1.0 + 0.5
    stored = read_results(tmp_path / "killed.h5")
    assert stored["attrs"]["status"].startswith("stopped: module 'story2'")
    rows = stored["time"].size
    assert rows == 301  # t = 0 and the 300 steps completed before the kill
    np.testing.assert_array_equal(stored["displacement"], in_process.displacement[:rows])
