"""kill -9 of the coordinator itself mid-run, then `hybridsim resume`: the response of an uninterrupted run.

The killed writer leaves its SWMR results file marked open for writing; resume must still continue it.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from hybridsim.coordinator.cli import main
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_checkpoint, read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.coordinator.test_resume import experiment


def test_kill_minus_9_of_the_coordinator_then_resume(tmp_path, capsys):
    reference = run_experiment(experiment(tmp_path, "reference", checkpoint_every=200))
    table = experiment(tmp_path, "killed", checkpoint_every=200).table
    path = tmp_path / "killed.toml"
    path.write_text(_toml(table))
    kill_at_first_checkpoint(path, tmp_path / "killed.h5")
    assert read_results(tmp_path / "killed.h5")["attrs"]["status"] == "running"  # it never closed the file
    assert main(["resume", str(tmp_path / "killed.h5"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    final = read_results(tmp_path / "killed.h5")
    assert final["attrs"]["status"] == "completed" and summary["steps"] == reference.displacement.shape[0] - 1
    assert np.max(np.abs(final["displacement"] - reference.displacement)) <= 1e-12 * np.max(
        np.abs(reference.displacement))


def kill_at_first_checkpoint(experiment_file: Path, results: Path, timeout_s: float = 60.0) -> None:
    """`hybridsim run experiment_file` in a process of its own, killed (SIGKILL) once ``results`` holds a
    checkpoint."""
    errors = results.with_name(results.name + ".stderr")
    with errors.open("w") as stderr:
        runner = subprocess.Popen([sys.executable, "-m", "hybridsim", "run", str(experiment_file), "--quiet"],
                                  stdout=subprocess.DEVNULL, stderr=stderr)
    deadline = time.monotonic() + timeout_s
    while not _has_checkpoint(results):
        assert runner.poll() is None and time.monotonic() < deadline, (
            f"the run ended (exit {runner.returncode}) or ran out of time before its first checkpoint: "
            f"{errors.read_text()[-2000:]}")
        time.sleep(0.01)
    runner.send_signal(signal.SIGKILL)
    runner.wait()


def resumed_equals_uninterrupted(tmp_path: Path, table: Callable[[str], dict], datasets: tuple[str, ...],
                                 timeout_s: float = 120.0) -> dict:
    """``table(name)``'s experiment (its results ``tmp_path/<name>.h5``) run whole with every module in this process,
    and with every module a daemon the coordinator starts (``address = "local"``), the coordinator killed at its
    first checkpoint and resumed (``hybridsim resume``, fresh daemons): each of ``datasets`` equal bit for bit; the
    uninterrupted run's results."""
    run_experiment(parse_experiment(table("reference"), base_dir=tmp_path))
    reference = read_results(tmp_path / "reference.h5")
    on_daemons = table("killed")
    for module in on_daemons["modules"]:
        module["address"] = "local"
    path = tmp_path / "killed.toml"
    path.write_text(_toml(on_daemons))
    kill_at_first_checkpoint(path, tmp_path / "killed.h5", timeout_s=timeout_s)
    assert main(["resume", str(tmp_path / "killed.h5"), "--quiet"]) == 0
    final = read_results(tmp_path / "killed.h5")
    assert final["attrs"]["status"] == "completed"
    for dataset in datasets:
        np.testing.assert_array_equal(final[dataset], reference[dataset])
    return reference


def _has_checkpoint(path) -> bool:
    """Whether the running writer has stored a checkpoint (the file may not exist or be locked yet)."""
    try:
        return path.exists() and read_checkpoint(path) is not None
    except OSError:
        return False


def _toml(table: dict) -> str:
    """A small TOML writer for the nested tables of an experiment (strings, numbers, lists, tables)."""
    def value(v):
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return repr(v)

    lines = []
    for section, content in table.items():
        if isinstance(content, list):
            for item in content:
                lines.append(f"[[{section}]]")
                lines += [f"{k} = {value(v)}" for k, v in item.items()]
        else:
            lines.append(f"[{section}]")
            lines += [f"{k} = {value(v)}" for k, v in content.items()]
    return "\n".join(lines) + "\n"
