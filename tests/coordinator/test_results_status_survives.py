"""A disk that another process fills mid-run (issue 32 item 2): the run stops with its one line, and its status,
its stop and every flushed row stay readable (the close space is reserved for real, the status is written beside
the file too); report, export and verify read it; resume completes it once there is room.  A real `hybridsim run`
process into a real 4 MiB tmpfs, filled by `dd`."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_attributes, read_checkpoint, read_results
from hybridsim.coordinator.recorder.read import DamagedResults
from hybridsim.coordinator.simulation import run_experiment
from tests.coordinator.test_results_disk_full import FULL, small_disk, table, toml  # noqa: F401 (a fixture)


def _tool(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hybridsim", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


def test_a_disk_filled_by_another_process_leaves_a_readable_stopped_file(tmp_path, small_disk):  # noqa: F811
    reference = run_experiment(parse_experiment(table(tmp_path / "reference.h5"), base_dir=tmp_path))
    output = small_disk / "filled.h5"
    config = tmp_path / "filled.toml"
    config.write_text(toml(output))
    run = subprocess.Popen([sys.executable, "-m", "hybridsim", "run", str(config), "--realtime", "--quiet"],
                           cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if int(read_attributes(output)["completed_steps"]) > 2000 and read_checkpoint(output) is not None:
                break  # a checkpoint and its rows on disk (the rows' count may lead the checkpoint under load)
        except (OSError, KeyError, DamagedResults):
            pass
        time.sleep(0.05)
    else:
        run.kill()
        pytest.fail(f"the run did not get going: {run.communicate()}")
    ballast = small_disk / "ballast"
    subprocess.run(["dd", "if=/dev/zero", f"of={ballast}", "bs=64k"], capture_output=True)  # until the disk is full
    _, err = run.communicate(timeout=60)
    assert run.returncode == 1 and err.strip().count("\n") == 0 and FULL in err, err

    attrs = read_attributes(output)
    assert attrs["status"].startswith(f"stopped: {FULL}")
    stop = json.loads(attrs["stop"])
    assert stop["reason"].startswith(FULL)
    stored = read_results(output)
    rows = int(stored["attrs"]["completed_steps"])
    assert rows > 2000
    np.testing.assert_array_equal(stored["displacement"], read_results(tmp_path / "reference.h5")["displacement"][:rows])

    report = _tool("report", str(output), "--out", str(tmp_path / "r.html"), cwd=tmp_path)
    assert report.returncode == 0 and "no space left on device" in (tmp_path / "r.html").read_text(), report.stderr
    exported = _tool("export", str(output), "--to", "mat", "--out", str(tmp_path / "mat"), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    verified = _tool("verify", str(output), cwd=tmp_path)
    assert verified.returncode == 0 and f"intact: {rows} rows" in verified.stdout, verified.stdout + verified.stderr

    ballast.unlink()
    resumed = _tool("resume", str(output), "--quiet", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    final = read_results(output)
    assert final["attrs"]["status"] == "completed"
    np.testing.assert_allclose(final["displacement"], reference.displacement, rtol=0, atol=1e-12)
