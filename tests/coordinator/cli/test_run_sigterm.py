"""SIGTERM to `hybridsim run` (what `docker stop` sends a container's PID 1) stops it as Ctrl-C does.

The run exits 130 with status "stopped: interrupted" and keeps exactly its completed steps, which equal the
same steps of the uninterrupted run. tests/deploy/test_containers.py does the same to the coordinator container.
"""

from __future__ import annotations

import dataclasses
import os
import pty
import select
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


def test_after_ctrl_c_the_progress_line_shows_the_steps_on_disk(tmp_path):
    """On a terminal the bar is redrawn at most ten times a second, so the line left by a Ctrl-C showed the
    steps of its last redraw, hundreds fewer than the run completed; it now ends on the steps the file holds
    (its rows less the initial state at t = 0)."""
    output = tmp_path / "stopped.h5"
    controller, terminal = pty.openpty()
    run = subprocess.Popen([str(HYBRIDSIM), "run", str(EXAMPLES / "frame_three_linear.toml"), "--output", str(output)],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=terminal)
    os.close(terminal)
    shown = bytearray()
    try:
        deadline = time.monotonic() + 60
        while written_steps(output) == 0:
            assert run.poll() is None and time.monotonic() < deadline, "the run wrote no step within 60 s"
            shown += _read_some(controller)
        run.send_signal(signal.SIGINT)
        while True:  # to the end of what the run writes (EIO once it has exited and closed the terminal)
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        assert run.wait(timeout=30) == 130
    finally:
        os.close(controller)
        if run.poll() is None:
            run.kill()
    lines = shown.decode().replace("\r\n", "\n").split("\n")
    assert lines[-1] == "" and lines[-2].startswith(f"hybridsim run: interrupted; {output} keeps ")
    last = lines[-3].split("\r")[-1]  # what the terminal shows: the last redraw of the bar's line
    total = load_experiment(EXAMPLES / "frame_three_linear.toml").steps
    rows = int(read_attributes(output)["completed_steps"])
    assert last.startswith("[") and f"] {rows - 1}/{total} steps, " in last, (last, rows)


def _read_some(fd: int) -> bytes:
    """What the terminal has for us within 50 ms (b"" if nothing)."""
    return os.read(fd, 65536) if select.select([fd], [], [], 0.05)[0] else b""
