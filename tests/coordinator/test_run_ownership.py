"""Run ownership (issue 15 items 5 and 8): a results file a live run writes is neither resumed nor written by
another run; `run` refuses an existing results file unless --overwrite or --output NEW.  Real processes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import h5py

from hybridsim.coordinator.recorder import read_attributes
from tests.conftest import EXAMPLES, ROOT

SDOF = (EXAMPLES / "sdof.toml").read_text().replace("../coordinator", str(ROOT / "coordinator"))


def _experiment(tmp_path: Path) -> Path:
    path = tmp_path / "sdof.toml"
    path.write_text(SDOF.replace('file = "results/sdof.h5"', 'file = "results/sdof.h5"\ncheckpoint_every = 100'))
    return path


def _hybridsim(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hybridsim", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def _rows(path: Path) -> int:
    return int(read_attributes(path)["completed_steps"])


def _live_run(tmp_path: Path, output: Path) -> subprocess.Popen:
    """A real-time run (about 40 s of record) that has written its first checkpoint."""
    proc = subprocess.Popen([sys.executable, "-m", "hybridsim", "run", str(_experiment(tmp_path)), "--realtime",
                             "--quiet", "--output", str(output)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if _rows(output) > 200:
                return proc
        except (OSError, KeyError):
            pass
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"the run did not get going: {proc.communicate()}")


def test_run_refuses_an_existing_results_file_unless_overwrite_or_a_new_output(tmp_path):
    experiment = _experiment(tmp_path)
    first = _hybridsim("run", str(experiment), "--quiet", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    results = tmp_path / "results" / "sdof.h5"
    rows = _rows(results)
    assert rows == 4119  # the 41.18 s of the El Centro record at dt = 0.01 s, and t = 0
    again = _hybridsim("run", str(experiment), "--quiet", cwd=tmp_path)
    assert again.returncode == 2
    assert again.stderr.strip() == (f"hybridsim run: error: {Path('results/sdof.h5')} exists (sdof: completed, {rows} "
                                    "rows); give --overwrite to replace it, or --output NEW.h5 to write a new file")
    assert _rows(results) == rows and read_attributes(results)["status"] == "completed"
    assert _hybridsim("run", str(experiment), "--quiet", "--output", "other.h5", cwd=tmp_path).returncode == 0
    assert _rows(tmp_path / "other.h5") == rows
    assert _hybridsim("run", str(experiment), "--quiet", "--overwrite", cwd=tmp_path).returncode == 0
    assert not (tmp_path / "results" / "sdof.h5.lock").exists()


def test_a_live_run_owns_its_file_and_a_dead_one_leaves_it_to_resume(tmp_path):
    results = tmp_path / "live.h5"
    live = _live_run(tmp_path, results)
    try:
        resumed = _hybridsim("resume", str(results), "--quiet", cwd=tmp_path)
        assert resumed.returncode == 2
        assert (f"hybridsim resume: error: {results} is being written by a live run (pid {live.pid} on host "
                f"{socket.gethostname()} since ") in resumed.stderr
        assert resumed.stderr.endswith("; it needs no resume while it runs: wait for it to end\n")  # no --output
        second = _hybridsim("run", str(_experiment(tmp_path)), "--quiet", "--overwrite", "--output", str(results),
                            cwd=tmp_path)
        assert second.returncode == 2 and f"is being written by a live run (pid {live.pid} " in second.stderr
        assert live.poll() is None  # the live run was not disturbed
        os.kill(live.pid, signal.SIGKILL)
        live.wait(30)
    finally:
        if live.poll() is None:
            live.kill()
            live.wait()
    assert (tmp_path / "live.h5.lock").exists()  # left by the dead run; its lock died with it
    resumed = _hybridsim("resume", str(results), "--quiet", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    with h5py.File(results, "r") as f:
        assert f.attrs["status"] == "completed" and f["time"].shape == (4119,)
    assert not (tmp_path / "live.h5.lock").exists()
