"""SIGTERM to `hybridsim run` (what `docker stop` sends a container's PID 1) stops it as Ctrl-C does.

The run exits 130 with status "stopped: interrupted" and keeps exactly its completed steps, which equal the
same steps of the uninterrupted run. tests/deploy/test_containers.py does the same to the coordinator container.
"""

from __future__ import annotations

import dataclasses
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.recorder import read_attributes, read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import EXAMPLES

HYBRIDSIM = Path(sys.executable).with_name("hybridsim")


def test_sigterm_stops_the_run_with_its_completed_steps_on_disk(tmp_path):
    output = tmp_path / "stopped.h5"
    run = subprocess.Popen([str(HYBRIDSIM), "run", str(EXAMPLES / "frame_three_linear.toml"), "--output", str(output),
                            "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while written_steps(output) == 0:
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()
        time.sleep(0.05)
    run.send_signal(signal.SIGTERM)
    _, stderr = run.communicate(timeout=30)
    assert run.returncode == 130, stderr
    stored = read_results(output)
    assert stored["attrs"]["status"] == "stopped: interrupted"
    rows = stored["displacement"].shape[0]
    experiment = load_experiment(EXAMPLES / "frame_three_linear.toml")
    assert 0 < rows == stored["attrs"]["completed_steps"] < experiment.motion.acceleration.size
    first = dataclasses.replace(experiment, motion=dataclasses.replace(
        experiment.motion, acceleration=experiment.motion.acceleration[:rows]))  # the same steps, uninterrupted
    np.testing.assert_array_equal(stored["displacement"], run_experiment(first, output=tmp_path / "first.h5").displacement)


def written_steps(path: Path) -> int:
    """The completed steps the running process has written to ``path`` (0 before its first block)."""
    try:
        return int(read_attributes(path).get("completed_steps", 0))
    except OSError:  # not created yet, or locked while the writer creates it
        return 0
