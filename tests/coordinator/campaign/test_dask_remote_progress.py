"""The progress lines of `hybridsim campaign --scheduler` against a `dask scheduler` and two `dask worker` processes
started from the command line: runs done, running (the workers' threads the scheduler reports), failed, the ETA."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.coordinator.campaign.test_dask_cli import DASK, EXAMPLE, _address

distributed = pytest.importorskip("distributed")


@pytest.mark.long  # 12 s (load 5), mostly the workers' start: pytest -m long tests/coordinator/campaign
def test_progress_against_a_remote_scheduler_says_running(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(f'[campaign]\nexperiment = "{EXAMPLE}"\n[campaign.grid]\n"ground_motion.scale" = [0.2, 0.4, 0.8]\n')
    file = tmp_path / "scheduler.json"
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False")  # each run's results writer is a child
    common = ["--scheduler-file", str(file)]
    processes = [subprocess.Popen([DASK, "scheduler", "--port", "0", "--dashboard-address", ":0", *common],
                                  cwd=tmp_path, env=env, stderr=subprocess.DEVNULL)]
    try:
        address = _address(file)
        processes += [subprocess.Popen([DASK, "worker", "--nthreads", "1", "--dashboard-address", ":0", *common],
                                       cwd=tmp_path, env=env, stderr=subprocess.DEVNULL) for _ in range(2)]
        with distributed.Client(address, timeout="20s") as client:
            client.wait_for_workers(2, timeout=60)
        done = subprocess.run([sys.executable, "-m", "hybridsim", "campaign", str(study), "--executor", "dask",
                               "--scheduler", address, "--out", str(tmp_path / "out")],
                              capture_output=True, text=True, timeout=300)
    finally:
        for process in processes:
            process.kill()  # a test cluster: no graceful close to wait for
        for process in processes:
            process.wait(timeout=30)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("campaign:")]
    counts = [re.fullmatch(r"campaign: (\d)/3 done, (\d) running, (\d) failed, ETA \d+ s", line).groups()
              for line in lines]
    assert counts == [("1", "2", "0"), ("2", "1", "0"), ("3", "0", "0")], lines
    assert f"dask: scheduler {address}" in done.stderr
