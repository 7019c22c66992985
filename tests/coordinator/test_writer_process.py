"""The results writer is a process of its own: its end is a clear failure, never a hang, and it never outlives
the coordinator.  Real processes, killed with SIGKILL."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.recorder import read_attributes, read_checkpoint, read_results
from hybridsim.coordinator.simulation import resume_run, run_experiment
from tests.coordinator.test_resume import experiment
from tests.coordinator.test_resume_after_coordinator_crash import _toml


def test_a_killed_writer_stops_the_run_with_one_line_the_claimed_rows_kept_and_resume_completes(tmp_path):
    reference = run_experiment(experiment(tmp_path, "reference"))
    killed = experiment(tmp_path, "killed")
    output = killed.output

    def kill_the_writer(n: int, _rows: object) -> None:
        if n == 1600:
            writers = [p for p in multiprocessing.active_children() if p.name == f"results writer {output.name}"]
            assert len(writers) == 1
            os.kill(writers[0].pid, signal.SIGKILL)

    with pytest.raises(RunStopped) as stopped:
        run_experiment(killed, listeners=[kill_the_writer])
    line = str(stopped.value)
    assert line.startswith("results file: the writer process ended (killed by SIGKILL") and "\n" not in line, line
    claimed = int(line.split("at least ")[1].split(" ")[0])
    assert 0 < claimed <= 1501  # acknowledged before the kill (rows up to the checkpoint at 1500 were sent)

    stored = read_results(output)  # as a crash leaves it: readable, every row it claims a completed step
    rows = int(stored["attrs"]["completed_steps"])
    assert rows >= claimed
    # the file itself still says running; the coordinator wrote the run's status beside it (issue 32 item 2)
    assert stored["attrs"]["status"] == f"stopped: {line}" and json.loads(stored["attrs"]["stop"])["reason"] == line
    uninterrupted = read_results(reference.output)
    for key in ("time", "displacement", "modules/column/force"):
        np.testing.assert_array_equal(stored[key], uninterrupted[key][:rows])
    checkpoint = read_checkpoint(output)
    assert checkpoint is not None and checkpoint.step < rows

    resumed = resume_run(output)
    assert read_attributes(output)["status"] == "completed"
    np.testing.assert_allclose(resumed.displacement, reference.displacement, rtol=0, atol=1e-12)


def test_the_writer_ends_when_the_coordinator_is_killed(tmp_path):
    table = experiment(tmp_path, "orphan", checkpoint_every=200).table  # 20 s in real time: killed before
    config = tmp_path / "orphan.toml"
    config.write_text(_toml(table))
    results = Path(table["output"]["file"])
    runner = subprocess.Popen([sys.executable, "-m", "hybridsim", "run", str(config), "--realtime", "--quiet"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while (writer := _writer_of(runner.pid)) is None or not _claims_rows(results):
            assert runner.poll() is None and time.monotonic() < deadline, runner.stderr.read().decode()  # type: ignore[union-attr]
            time.sleep(0.05)
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    deadline = time.monotonic() + 10
    while _alive(writer):
        assert time.monotonic() < deadline, f"the writer process {writer} outlived its coordinator by 10 s"
        time.sleep(0.05)
    stored = read_results(results)  # what it wrote stays readable; the status is a crash's
    assert stored["attrs"]["status"] == "running" and stored["time"].shape[0] == stored["attrs"]["completed_steps"] > 0


def _writer_of(pid: int) -> int | None:
    """The PID of the results writer of the coordinator ``pid``: a child of its multiprocessing forkserver."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
    for child, parent in parents.items():
        if parents.get(parent) == pid and b"forkserver" in _command(parent):
            return child
    return None


def _command(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _claims_rows(path: Path) -> bool:
    try:
        return int(read_attributes(path).get("completed_steps", 0)) > 0
    except OSError:
        return False


UNGUARDED = """
from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.simulation import run_experiment
print("run", flush=True)
run_experiment(load_experiment({config!r}))
"""


def test_a_script_without_the_main_guard_runs_once(tmp_path):
    """multiprocessing runs the main script again in a child it starts: not in the results writer."""
    table = experiment(tmp_path, "script").table
    config = tmp_path / "script.toml"
    config.write_text(_toml(table))
    script = tmp_path / "script.py"
    script.write_text(UNGUARDED.format(config=str(config)))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "run\n", done.stderr[-2000:]
    assert read_attributes(Path(table["output"]["file"]))["status"] == "completed"
