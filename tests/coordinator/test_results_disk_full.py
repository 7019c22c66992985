"""A full disk under the results file: the run stops with one line, claims no row it did not write, resumes.

The disk is a real tmpfs of 4 MiB (mounted for the test; skipped where this process may not mount),
filled with a ballast file so that a 16,000-step yielding run (about 1.3 MB of rows) cannot fit, then
freed by deleting the ballast.  A second test makes the operating system itself refuse a write
(a file-size limit, RLIMIT_FSIZE) in a real `hybridsim run` process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_checkpoint, read_results
from hybridsim.coordinator.simulation import resume_run, run_experiment
from tests.conftest import MARTHS_DATA

FULL = "results file: no space left on device"
YIELDING = {"law": "bilinear", "stiffness": 4.0e5, "yield_displacement": 0.004, "hardening_ratio": 0.05}


def table(output: Path) -> dict:
    return {
        "experiment": {"name": "full", "dt": 0.0025, "duration": 40.0},
        "structure": {"dofs": ["x"], "mass_diagonal": [1000.0], "influence": [1.0],
                      "damping": {"rayleigh": [0.3, 1e-4]}},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": 0.6},
        "integrator": {"kind": "alpha-os", "alpha": -0.1},
        "modules": [{"name": "column", "kind": "spring", "config": {"dofs": ["x"], **YIELDING}}],
        "output": {"file": str(output), "checkpoint_every": 2000},
    }


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB tmpfs, unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or 'mount failed'}): the full-disk test "
                    "needs root or CAP_SYS_ADMIN")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """A ballast file that leaves about ``leave`` bytes free on ``disk``."""
    stats = os.statvfs(disk)
    ballast = disk / f"ballast-{uuid.uuid4().hex}"
    ballast.write_bytes(b"\0" * max(stats.f_bavail * stats.f_frsize - leave, 0))
    return ballast


def test_a_full_disk_stops_the_run_with_one_line_no_unwritten_row_and_resume_completes(tmp_path, small_disk):
    reference = run_experiment(parse_experiment(table(tmp_path / "reference.h5"), base_dir=tmp_path))
    steps = reference.summary["steps"]
    output = small_disk / "full.h5"
    ballast = fill(small_disk, leave=900 * 1024)
    experiment = parse_experiment(table(output), base_dir=tmp_path)
    with pytest.raises(RunStopped) as stopped:
        run_experiment(experiment)
    line = str(stopped.value)
    assert line.startswith(FULL) and "\n" not in line, line

    stored = read_results(output)
    rows = stored["attrs"]["completed_steps"]
    assert stored["attrs"]["status"] == f"stopped: {line}"
    assert 1000 < rows < steps  # it ran, and it stopped before the end
    for key in ("time", "displacement", "restoring_force", "modules/column/force"):
        assert stored[key].shape[0] == rows
        # every claimed row is the uninterrupted run's row: nothing zeroed, nothing invented
        np.testing.assert_array_equal(stored[key], read_results(tmp_path / "reference.h5")[key][:rows])
    checkpoint = read_checkpoint(output)
    assert checkpoint is not None and checkpoint.step < rows

    # resume while the disk is still full: refused with the same line, the file untouched
    size = output.stat().st_size
    with pytest.raises(RunStopped, match=FULL):
        resume_run(output)
    assert output.stat().st_size == size and read_results(output)["attrs"]["completed_steps"] == rows

    ballast.unlink()
    resumed = resume_run(output)
    assert resumed.summary["steps"] == steps
    np.testing.assert_allclose(resumed.displacement, reference.displacement, rtol=0, atol=1e-12)
    assert read_results(output)["attrs"]["status"] == "completed"


REFUSED_RUN = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write beyond the limit fails with EFBIG instead of killing
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), int(sys.argv[2])))
from hybridsim.coordinator.cli import main
sys.exit(main(["run", sys.argv[1]]))
"""


def toml(output: Path) -> str:
    """The experiment of :func:`table` as a TOML file's text."""
    spring = ", ".join(f"{k} = {v!r}" if isinstance(v, str) else f"{k} = {v}" for k, v in YIELDING.items())
    return f"""
[experiment]
name = "full"
dt = 0.0025
duration = 40.0
[structure]
dofs = ["x"]
mass_diagonal = [1000.0]
influence = [1.0]
damping = {{ rayleigh = [0.3, 1e-4] }}
[ground_motion]
file = "{MARTHS_DATA / 'ground_motion_elcentro.csv'}"
scale = 0.6
[integrator]
kind = "alpha-os"
alpha = -0.1
[[modules]]
name = "column"
kind = "spring"
config = {{ dofs = ["x"], {spring} }}
[output]
file = "{output}"
checkpoint_every = 2000
"""


def test_a_write_the_system_refuses_stops_the_run_and_never_writes_into_the_file_again(tmp_path):
    reference = run_experiment(parse_experiment(table(tmp_path / "reference.h5"), base_dir=tmp_path))
    output = tmp_path / "refused.h5"
    config = tmp_path / "refused.toml"
    config.write_text(toml(output))
    limit = 1024 * 1024  # above the rows the coordinator shares with its writer process (8192 x 80 B)
    done = subprocess.run([sys.executable, "-c", REFUSED_RUN, str(config), str(limit)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if "results file:" in line]
    assert len(lines) == 1 and "results file: write failed" in lines[0], done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert output.stat().st_size <= limit
    stored = read_results(output)  # what was flushed before the refusal is readable and claims only its rows
    rows = stored["attrs"]["completed_steps"]
    assert rows > 0 and stored["displacement"].shape[0] == rows
    np.testing.assert_array_equal(stored["displacement"], reference.displacement[:rows])
