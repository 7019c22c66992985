"""kill -9 of a site daemon mid-run, restart it at the same address, `hybridsim resume`: same final response.

The site is a yielding spring (stateful), so the restarted daemon must really load the checkpointed
state; the uninterrupted reference runs the same spring in process.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.control import RunControl
from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.recorder import read_checkpoint, read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.coordinator.test_resume import YIELDING, experiment


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_site(config: Path, port: int, tmp_path: Path) -> subprocess.Popen:
    port_file = tmp_path / f"port-{time.monotonic_ns()}"
    proc = subprocess.Popen([sys.executable, "-m", "hybridsim", "site", "spring", "--config", str(config),
                             "--listen", f"127.0.0.1:{port}", "--port-file", str(port_file)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not port_file.exists():
        assert proc.poll() is None, "the site daemon died while starting"
        assert time.monotonic() < deadline, "the site daemon did not start"
        time.sleep(0.05)
    return proc


def test_kill_minus_9_of_a_site_then_restart_and_resume(tmp_path, capsys):
    config = tmp_path / "column.json"
    config.write_text(json.dumps({"dofs": ["x"], **YIELDING}))
    port = free_port()
    site = start_site(config, port, tmp_path)
    reference = run_experiment(experiment(tmp_path, "reference"))
    remote = experiment(tmp_path, "remote", address=f"127.0.0.1:{port}")
    control = RunControl()

    def kill_site(n, _arrays):
        if n == 1234:
            os.kill(site.pid, signal.SIGKILL)
            site.wait()

    started = time.monotonic()
    with pytest.raises(RunStopped, match=r"module 'column' \(daemon at 127\.0\.0\.1:\d+\) at step \d+ "):
        run_experiment(remote, control=control, listeners=[kill_site])
    assert time.monotonic() - started < remote.modules[0].deadline_s + 30  # stopped within its deadline
    stored = read_results(tmp_path / "remote.h5")
    assert stored["attrs"]["completed_steps"] == 1235  # every step completed before the crash is on disk
    assert read_checkpoint(tmp_path / "remote.h5").step == 1000
    site = start_site(config, port, tmp_path)  # the lab restarts its daemon at the same address
    try:
        assert main(["resume", str(tmp_path / "remote.h5"), "--json"]) == 0
    finally:
        site.terminate()
        site.wait(timeout=10)
    summary = json.loads(capsys.readouterr().out)
    final = read_results(tmp_path / "remote.h5")
    assert summary["steps"] == final["displacement"].shape[0] - 1 == reference.displacement.shape[0] - 1
    assert np.max(np.abs(final["displacement"] - reference.displacement)) <= 1e-12 * np.max(
        np.abs(reference.displacement))
