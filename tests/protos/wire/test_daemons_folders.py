"""Nothing left behind: a coordinator killed with kill -9 leaves its local daemon's folder (config copy, token,
log) and its multiprocessing folder; the next hybridsim process to start removes them, and only those whose
owner is gone.  A run that ends leaves none.  Real processes, each with its own temporary folder."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.conftest import MARTHS_DATA

EXPERIMENT = """
[experiment]
name = "left"
dt = 0.005
duration = {duration}
[structure]
dofs = ["x"]
mass_diagonal = [1000.0]
influence = [1.0]
[ground_motion]
file = "{motion}"
[integrator]
kind = "alpha-os"
[[modules]]
name = "column"
kind = "spring"
address = "local"
config = {{ dofs = ["x"], stiffness = 4.0e5 }}
[output]
file = "{output}"
"""


def python(tmp_path: Path, *args: str, **popen) -> subprocess.Popen:
    env = {**os.environ, "TMPDIR": str((tmp_path / "tmp").resolve())}  # short: a socket's path has 107 bytes
    return subprocess.Popen([sys.executable, *args], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **popen)


def hybridsim(tmp_path: Path, *args: str, **popen) -> subprocess.Popen:
    return python(tmp_path, "-m", "hybridsim", *args, **popen)


def experiment(tmp_path: Path, duration: float) -> str:
    if not (tmp_path / "tmp").exists():
        short = Path(tempfile.mkdtemp(prefix="hs", dir="/tmp"))  # removed by the test
        (tmp_path / "tmp").symlink_to(short)
    path = tmp_path / f"left{duration:g}.toml"
    path.write_text(EXPERIMENT.format(duration=duration, motion=MARTHS_DATA / "ground_motion_elcentro.csv",
                                      output=tmp_path / f"left{duration:g}.h5"))
    return str(path)


def folders(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "tmp").iterdir())


def test_a_killed_coordinators_folders_are_swept_by_the_next_start_and_a_run_that_ends_leaves_none(tmp_path):
    coordinator = hybridsim(tmp_path, "run", experiment(tmp_path, 40.0), "--realtime", "--quiet")
    pid, deadline = coordinator.pid, time.monotonic() + 30
    while not any(f.startswith(f"hsmp{pid}-") for f in folders(tmp_path)):  # the run's writer started
        assert coordinator.poll() is None and time.monotonic() < deadline, coordinator.communicate()
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    coordinator.wait()
    left = folders(tmp_path)
    assert any(f.startswith(f"hybridsim-site-column-pid{pid}-") for f in left), left
    live = tmp_path / "tmp" / f"hybridsim-site-other-pid{os.getpid()}-abcd1234"  # a folder of a live process
    live.mkdir()
    time.sleep(1.5)  # the orphaned daemon sees its parent gone (--parent-pid) and exits
    lister = hybridsim(tmp_path, "examples")  # any hybridsim process
    lister.communicate(timeout=60)
    assert folders(tmp_path) == [live.name]
    live.rmdir()
    ended = hybridsim(tmp_path, "run", experiment(tmp_path, 1.0), "--quiet")
    out, err = ended.communicate(timeout=120)
    assert ended.returncode == 0, err
    assert folders(tmp_path) == []  # its daemon's folder and multiprocessing's went with them
    (tmp_path / "tmp").resolve().rmdir()


FAILED_DAEMON = """
import os, signal
from hybridsim.wire.daemons import LocalDaemon
daemon = LocalDaemon("spring", {"dofs": ["x"], "stiffness": 4.0e5}, name="story2", private=True)
daemon.start()
os.kill(daemon.pid, signal.SIGKILL)  # the daemon dies mid-run
print(daemon.stop(), daemon.log_path)
"""


def test_a_failed_daemons_log_outlives_its_coordinator_and_the_next_start(tmp_path):
    """The stop line's log of a daemon killed with kill -9 is still there after the process that started it ended
    and the next hybridsim process swept the folders of ended owners (the resume the stop line recommends)."""
    experiment(tmp_path, 1.0)  # the short temporary folder
    coordinator = python(tmp_path, "-c", FAILED_DAEMON)
    out, err = coordinator.communicate(timeout=60)
    code, log = out.decode().split()
    assert (int(code), coordinator.returncode) == (-signal.SIGKILL, 0), err
    assert f"its log: {log}" in err.decode() and Path(log).read_text().strip()
    lister = hybridsim(tmp_path, "examples")  # any hybridsim process: it sweeps the folders of ended owners
    lister.communicate(timeout=60)
    assert Path(log).exists() and Path(log).parent.name.startswith("hybridsim-log-story2-")
    assert not [f for f in folders(tmp_path) if f.startswith("hybridsim-site-")]  # its config copy, token: gone
    shutil.rmtree((tmp_path / "tmp").resolve())  # the log, and the killed site's link folder (a site sweeps it)
