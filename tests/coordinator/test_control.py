"""Hold, resume and abort a running test from another thread; listeners see every step."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from hybridsim.coordinator.control import RunControl
from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.recorder import read_attributes, read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import EXAMPLES


def test_hold_stops_issuing_steps_until_resume(tmp_path):
    control, stamps = RunControl(), {}

    def listener(n, arrays):
        stamps[n] = time.perf_counter()
        if n == 100:
            control.hold()
            threading.Timer(0.3, control.resume).start()

    result = run_experiment(load_experiment(EXAMPLES / "sdof.toml"), output=tmp_path / "held.h5", control=control,
                            listeners=[listener])
    gaps = {n: stamps[n + 1] - stamps[n] for n in range(1, 4118)}
    assert gaps[100] >= 0.29  # nothing moved while held
    assert max(gaps, key=gaps.get) == 100  # the hold is the only long pause: the test went on after resume
    assert result.summary["steps"] == 4118


def test_abort_ends_the_run_cleanly_with_every_step_on_disk(tmp_path):
    control = RunControl()
    seen = []

    def listener(n, arrays):
        seen.append(float(arrays["displacement"][n, 0]))
        if n == 700:
            control.abort()

    with pytest.raises(RunStopped, match="aborted by the operator after step 700"):
        run_experiment(load_experiment(EXAMPLES / "sdof.toml"), output=tmp_path / "aborted.h5", control=control,
                       listeners=[listener])
    stored = read_results(tmp_path / "aborted.h5")
    assert stored["attrs"]["status"] == "stopped: aborted by the operator after step 700"
    assert stored["displacement"].shape == (701, 1)
    np.testing.assert_array_equal(stored["displacement"][1:, 0], seen)  # listeners saw exactly what was stored


def test_a_held_real_time_run_lets_its_results_writer_write_during_the_hold(tmp_path):
    control, output, during_hold = RunControl(), tmp_path / "held.h5", {}

    def look_then_resume() -> None:
        during_hold["claimed"] = int(read_attributes(output)["completed_steps"])
        control.resume()

    def listener(n, arrays):
        if n == 2048:  # its block was just queued: a paced loop sends it in its next sleep, and a hold has none
            control.hold()
            threading.Timer(1.0, look_then_resume).start()
        elif n == 2100:
            control.abort()

    with pytest.raises(RunStopped, match="aborted by the operator after step 2100"):
        run_experiment(load_experiment(EXAMPLES / "monitor_shear_building.toml"), output=output, control=control,
                       listeners=[listener], realtime=True)
    assert during_hold["claimed"] == 2049  # rows 0..2048 on disk while the run was held
    assert read_attributes(output)["completed_steps"] == 2101
