"""The progress lines of `hybridsim campaign --scheduler` against a `dask scheduler` and two `dask worker` processes
started from the command line: runs done, running (the workers' threads the scheduler reports), failed, the ETA."""

import re
import subprocess
import sys

import pytest

from tests.coordinator.campaign.test_dask_cli import EXAMPLE, command_line_cluster

distributed = pytest.importorskip("distributed")


@pytest.mark.long  # 12 s (load 5), mostly the workers' start: pytest -m long tests/coordinator/campaign
def test_progress_against_a_remote_scheduler_says_running(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(f'[campaign]\nexperiment = "{EXAMPLE}"\n[campaign.grid]\n"ground_motion.scale" = [0.2, 0.4, 0.8]\n')
    with command_line_cluster(tmp_path) as address:
        with distributed.Client(address, timeout="20s") as client:
            client.wait_for_workers(2, timeout=60)
        done = subprocess.run([sys.executable, "-m", "hybridsim", "campaign", str(study), "--executor", "dask",
                               "--scheduler", address, "--out", str(tmp_path / "out")],
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("campaign:")]
    counts = [re.fullmatch(r"campaign: (\d)/3 done, (\d) running, (\d) failed, ETA \d+ s", line).groups()
              for line in lines]
    assert counts == [("1", "2", "0"), ("2", "1", "0"), ("3", "0", "0")], lines
    assert f"dask: scheduler {address}" in done.stderr
