"""A campaign against a `dask scheduler` and two `dask worker` processes started from the command line."""

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.campaign.grid import expand
from hybridsim.coordinator.campaign.runner import run_campaign
from hybridsim.coordinator.problems.executors import Resources
from hybridsim.coordinator.recorder.read import read_results

pytest.importorskip("distributed")
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sdof.toml"
DASK = str(Path(sys.executable).with_name("dask"))


def _address(scheduler_file: Path, timeout_s: float = 30.0) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if scheduler_file.is_file() and scheduler_file.stat().st_size:
            return json.loads(scheduler_file.read_text())["address"]
        time.sleep(0.1)
    raise TimeoutError(f"no scheduler address in {scheduler_file}")


@contextlib.contextmanager
def command_line_cluster(folder: Path, workers: int = 2) -> Iterator[str]:
    """A `dask scheduler` and ``workers`` `dask worker` processes of one thread, not daemonic (each run's results
    writer is a child), started from the command line in ``folder``: the scheduler's address; all killed after."""
    file = folder / "scheduler.json"
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False")
    common = ["--scheduler-file", str(file)]
    processes = [subprocess.Popen([DASK, "scheduler", "--port", "0", "--dashboard-address", ":0", *common],
                                  cwd=folder, env=env, stderr=subprocess.DEVNULL)]
    try:
        address = _address(file)
        processes += [subprocess.Popen([DASK, "worker", "--nthreads", "1", "--dashboard-address", ":0", *common],
                                       cwd=folder, env=env, stderr=subprocess.DEVNULL) for _ in range(workers)]
        yield address
    finally:
        for process in processes:
            process.kill()  # a test cluster: no graceful close to wait for
        for process in processes:
            process.wait(timeout=30)


@pytest.mark.long  # 10.6 s (load 2.5), mostly the workers' start: pytest -m long tests/coordinator/campaign
def test_campaign_on_a_command_line_scheduler_and_two_workers(tmp_path):
    runs = expand({"ground_motion.scale": [0.2, 0.4]}, trials=1)
    with command_line_cluster(tmp_path) as address:
        rows = run_campaign(EXAMPLE, runs, tmp_path / "out", "dask", Resources(scheduler=address))
    serial = run_campaign(EXAMPLE, runs, tmp_path / "serial")
    assert [(r.status, r.how) for r in rows] == [("completed", "made")] * 2
    for a, b in zip(rows, serial):
        assert np.array_equal(read_results(a.output)["displacement"], read_results(b.output)["displacement"])
