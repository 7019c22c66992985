"""Ctrl-C at the terminal during a run whose sites are local daemons (`address = "local"`).

The terminal sends SIGINT to the whole foreground process group.  The daemons must not take it: the
coordinator still has to collect their records and close their sessions.  When they died with it, every
remaining call was retried against a dead site until its deadline and the run took about 50 s to stop.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "frame_three_sites.toml"


def test_ctrl_c_stops_a_run_with_local_daemons_at_once_and_keeps_its_steps(tmp_path):
    output = tmp_path / "frame.h5"
    # start_new_session: the run leads a process group of its own, as a terminal's foreground job does
    runner = subprocess.Popen([sys.executable, "-m", "hybridsim", "run", str(EXAMPLE), "--output", str(output),
                               "--quiet"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              start_new_session=True)
    deadline = time.monotonic() + 120
    while not _rows(output) > 500:
        assert runner.poll() is None and time.monotonic() < deadline, runner.stderr.read().decode()
        time.sleep(0.05)
    os.killpg(runner.pid, signal.SIGINT)  # what Ctrl-C does
    interrupted = time.monotonic()
    try:
        code = runner.wait(timeout=60)
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    stopping_s = time.monotonic() - interrupted
    assert code == 130, runner.stderr.read().decode()  # 128 + SIGINT
    assert stopping_s < 10.0, f"the run took {stopping_s:.1f} s to stop after Ctrl-C"
    with h5py.File(output, "r") as f:
        assert f.attrs["status"] == "stopped: interrupted"
        assert f["time"].shape[0] > 500
        assert not [name for name in f["modules"] if "records_error" in f["modules"][name].attrs]


def _rows(path: Path) -> int:
    """Rows the running writer has flushed (0 while the file does not exist or is locked)."""
    try:
        with h5py.File(path, "r", swmr=True) as f:
            return f["time"].shape[0]
    except (OSError, KeyError):
        return 0
