"""The results file of a run whose module is an experimental site daemon (`hybridsim site experimental`, a virtual
lab: a first-order actuator with a noisy stroke sensor and load cell, a compensator, a yielding column) survives a
kill -9 of its coordinator and a disk filled by another process: the file stays readable, `verify` names what is
intact, and `resume` (taking the site over from the dead run) ends bit for bit as the uninterrupted run against
the same daemon.  Real processes: the daemon, the killed `hybridsim run`, a 4 MiB tmpfs."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_checkpoint, read_results
from hybridsim.coordinator.recorder.layout import RESERVE_BYTES
from hybridsim.coordinator.simulation import resume_run, run_experiment
from tests.conftest import EXAMPLES, MARTHS_DATA
from tests.coordinator.test_resume_after_coordinator_crash import _toml, kill_at_first_checkpoint
from tests.coordinator.test_results_disk_full import FULL, fill, small_disk  # noqa: F401 - small_disk: a fixture

STEPS = 1600  # 8 s of 5 ms steps: the column yields (past 5 s of El Centro at 0.6)
KEYS = ("displacement", "restoring_force", "modules/column/force", "modules/column/displacement")


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[str]:
    """The address of a `hybridsim site experimental` daemon serving examples/setups/one_actuator_site.toml."""
    folder = tmp_path_factory.mktemp("lab")
    port_file = folder / "port"
    site = subprocess.Popen([sys.executable, "-m", "hybridsim", "site", "experimental", "--config",
                             str(EXAMPLES / "setups" / "one_actuator_site.toml"), "--listen", "127.0.0.1:0",
                             "--port-file", str(port_file)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not port_file.exists() or not port_file.read_text().strip():
        assert site.poll() is None and time.monotonic() < deadline, "the site daemon did not start"
        time.sleep(0.05)
    yield f"127.0.0.1:{port_file.read_text().strip()}"
    site.send_signal(signal.SIGTERM)
    site.wait(timeout=10)


def table(output: Path, address: str) -> dict:
    """examples/setups/one_actuator.toml, 8 s, its column at the daemon, a checkpoint every 200 steps."""
    return {
        "experiment": {"name": output.stem, "dt": 0.005, "duration": (STEPS - 1) * 0.005},
        "structure": {"dofs": ["x"], "mass_diagonal": [1000.0], "damping": {"matrix": [[795.0]]},
                      "influence": [1.0]},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": 0.6},
        "integrator": {"kind": "alpha-os", "alpha": -0.05},
        "modules": [{"name": "column", "kind": "experimental", "address": address}],
        "output": {"file": str(output), "checkpoint_every": 200},
    }


@pytest.fixture(scope="module")
def reference(lab, tmp_path_factory) -> dict:
    """The uninterrupted run against the daemon."""
    output = tmp_path_factory.mktemp("reference") / "reference.h5"
    run_experiment(parse_experiment(table(output, lab), base_dir=output.parent))
    stored = read_results(output)
    assert stored["attrs"]["status"] == "completed" and stored["displacement"].shape[0] == STEPS
    assert np.abs(stored["modules/column/displacement"]).max() > 0.008  # past the column's yield displacement
    return {"rows": stored, "bytes": output.stat().st_size}


def verified(path: Path, capsys) -> str:
    """`hybridsim verify PATH`'s one line (exit 0: the file is intact)."""
    capsys.readouterr()
    assert main(["verify", str(path)]) == 0
    line = capsys.readouterr().out.strip()
    assert len(line.splitlines()) == 1, line
    return line


def resumed_equals_reference(path: Path, reference: dict, capsys, *options: str) -> None:
    """`hybridsim resume PATH` completes the run, every row as the uninterrupted run's (bit for bit)."""
    capsys.readouterr()
    assert main(["resume", str(path), "--quiet", *options]) == 0, capsys.readouterr().err
    stored = read_results(path)
    assert stored["attrs"]["status"] == "completed"
    for key in KEYS:
        np.testing.assert_array_equal(stored[key], reference["rows"][key], err_msg=key)


def test_kill_minus_9_of_the_coordinator_of_a_site_daemon_then_verify_and_resume(tmp_path, lab, reference, capsys):
    config = tmp_path / "killed.toml"
    config.write_text(_toml(table(tmp_path / "killed.h5", lab)))
    kill_at_first_checkpoint(config, tmp_path / "killed.h5")
    stored = read_results(tmp_path / "killed.h5")  # readable as the kill left it, every claimed row the reference's
    rows = int(stored["attrs"]["completed_steps"])
    assert stored["attrs"]["status"] == "running" and 200 < rows < STEPS
    for key in KEYS:
        np.testing.assert_array_equal(stored[key], reference["rows"][key][:rows], err_msg=key)
    step = read_checkpoint(tmp_path / "killed.h5").step
    line = verified(tmp_path / "killed.h5", capsys)
    assert line.startswith(f"{tmp_path / 'killed.h5'}: intact: {rows} rows ({rows - 1} completed steps, status "
                           "running)") and f"step {step} (slot " in line, line
    resumed_equals_reference(tmp_path / "killed.h5", reference, capsys, "--takeover")  # the dead run held the site


def test_a_disk_filled_under_a_site_daemon_s_run_then_verify_and_resume(
        tmp_path, small_disk, lab, reference, capsys):  # noqa: F811 - small_disk: the imported fixture
    output = small_disk / "full.h5"
    # Most of the file is the site's per-sample records (commands, strokes, loads, the compensator's parameters),
    # allocated in chunks as the run goes: half the reference's size beside the reserve fills the disk mid-run
    # (seen: 401 rows at 1/2; none at 3/8; the run completes at 5/8, where the close's reserve takes the rest).
    ballast = fill(small_disk, leave=RESERVE_BYTES + reference["bytes"] // 2)
    with pytest.raises(RunStopped) as stopped:
        run_experiment(parse_experiment(table(output, lab), base_dir=tmp_path))
    line = str(stopped.value)
    assert line.startswith(FULL) and "\n" not in line, line
    stored = read_results(output)
    rows = int(stored["attrs"]["completed_steps"])
    assert stored["attrs"]["status"] == f"stopped: {line}" and 200 < rows < STEPS, (rows, reference["bytes"])
    for key in KEYS:
        np.testing.assert_array_equal(stored[key], reference["rows"][key][:rows], err_msg=key)
    step = read_checkpoint(output).step
    assert f"step {step} (slot " in verified(output, capsys)
    ballast.unlink()
    resumed_equals_reference(output, reference, capsys)
