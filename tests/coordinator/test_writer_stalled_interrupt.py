"""A Ctrl-C or SIGTERM ends a run whose results writer is stalled (SIGSTOP) at once: the writer is killed, the run
stops with exit 130 and its status beside the file, the rows the writer had acknowledged readable.  Real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil

from hybridsim.coordinator.recorder import read_results
from tests.conftest import MARTHS_DATA

EXPERIMENT_TOML = f"""
[experiment]
name = "held"
dt = 0.005
duration = 30.0
[structure]
dofs = ["x"]
mass_diagonal = [1000.0]
influence = [1.0]
[ground_motion]
file = "{MARTHS_DATA / 'ground_motion_elcentro.csv'}"
[integrator]
kind = "alpha-os"
[[modules]]
name = "column"
kind = "spring"
config = {{{{ dofs = ["x"], stiffness = 4.0e5 }}}}
[output]
file = "{{output}}"
"""


def test_a_signal_ends_a_run_held_by_a_stalled_writer(tmp_path, signum=signal.SIGTERM):
    """(SIGINT is noted alike: coordinator/interrupts.py)"""
    experiment = tmp_path / "held.toml"
    experiment.write_text(EXPERIMENT_TOML.format(output=tmp_path / "held.h5"))
    run = subprocess.Popen([sys.executable, "-m", "hybridsim", "run", str(experiment), "--realtime"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, text=True)
    writer, deadline = None, time.monotonic() + 30
    while writer is None:  # the writer: a child of the coordinator's forkserver, there once the file is
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()
        time.sleep(0.2)
        try:
            servers = [p for p in psutil.Process(run.pid).children() if "forkserver" in " ".join(p.cmdline())]
            writers = [c for s in servers for c in s.children()]
            if len(writers) == 1 and (tmp_path / "held.h5").exists():
                time.sleep(0.5)  # the run steps
                writers[0].send_signal(signal.SIGSTOP)
                writer = writers[0]
        except psutil.NoSuchProcess:  # a process that ended as it was looked at
            continue
    time.sleep(1.5)  # the run holds, stalled
    run.send_signal(signum)
    began = time.monotonic()
    out, err = run.communicate(timeout=30)
    assert time.monotonic() - began < 3.0, err
    assert run.returncode == 130, err
    assert "results writer stalled for 1 s" in err
    assert not writer.is_running() or writer.status() == psutil.STATUS_ZOMBIE
    stored = read_results(tmp_path / "held.h5")  # as a crash leaves it: the status beside it
    assert stored["attrs"]["status"].startswith("stopped"), stored["attrs"]["status"]
    assert stored["displacement"].shape[0] == int(stored["attrs"]["completed_steps"])
