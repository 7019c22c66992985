"""A run that stops keeps its statistics (issue 29 item 4): a real-time run interrupted by SIGINT (a real
coordinator process) and a run a module's limit stops both record a summary of the steps they ran (steps, step
times, late steps, peaks over the rows on disk) and a ``stop`` naming the step that did not complete and its time."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import load_experiment
from hybridsim.coordinator.recorder import read_attributes, read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import EXAMPLES, ROOT
from tests.coordinator.test_signals import running

SDOF = (EXAMPLES / "sdof.toml").read_text().replace("../coordinator", str(ROOT / "coordinator"))
DT = 0.01


def _experiment(tmp_path: Path, limit: float | None = None) -> Path:
    """The sdof example with checkpoints (and a displacement limit at its linear module, m)."""
    path = tmp_path / "sdof.toml"
    text = SDOF.replace('file = "results/sdof.h5"', 'file = "results/sdof.h5"\ncheckpoint_every = 100')
    if limit is not None:
        stiffness = "stiffness = [[39478.417604357434]] }"
        assert stiffness in text
        text = text.replace(stiffness, f"stiffness = [[39478.417604357434]], limits = {{ displacement = {limit!r} }} }}")
    path.write_text(text)
    return path


def _peaks_from_rows(output: Path) -> tuple[int, float]:
    """(completed rows, the peak |x| over them), read from the file itself."""
    stored = read_results(output)
    rows = int(stored["attrs"]["completed_steps"])
    return rows, float(np.abs(stored["displacement"][:rows, 0]).max())


def test_an_interrupted_realtime_run_keeps_its_summary_and_where_it_stopped(tmp_path):
    output = tmp_path / "interrupted.h5"
    run = running(tmp_path, _experiment(tmp_path), output)
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130, err

    attrs = read_attributes(output)
    assert attrs["status"] == "stopped: interrupted"
    rows, peak = _peaks_from_rows(output)
    stop = json.loads(attrs["stop"])
    assert stop["reason"] == "interrupted" and stop["signal"] == "SIGINT"
    assert stop["step"] == rows and stop["time_s"] == pytest.approx(rows * DT)  # the step that did not complete
    summary = json.loads(attrs["summary"])
    assert summary["steps"] == summary["steps_this_session"] == rows - 1
    assert summary["simulated_s"] == pytest.approx((rows - 1) * DT)
    assert summary["realtime"] is True
    assert 0 <= summary["late_steps"] <= rows - 1
    assert summary["late_steps_pct"] == pytest.approx(100.0 * summary["late_steps"] / (rows - 1))
    assert "late_causes" in summary and sum(summary["late_causes"]["late_steps"].values()) == summary["late_steps"]
    assert summary["peak_displacement"]["x"] == pytest.approx(peak, rel=0, abs=0)
    assert summary["step_time_us"]["p50"] > 0 and summary["loop_wall_s"] >= (rows - 1) * DT * 0.9


def test_a_run_a_limit_stops_keeps_its_summary(tmp_path):
    whole = run_experiment(load_experiment(_experiment(tmp_path)), output=tmp_path / "whole.h5")
    limit = 0.5 * whole.summary["peak_displacement"]["x"]  # half the elastic column's peak
    output = tmp_path / "limited.h5"
    with pytest.raises(RunStopped, match="limit"):
        run_experiment(load_experiment(_experiment(tmp_path, limit)), output=output)
    attrs = read_attributes(output)
    assert attrs["status"].startswith("stopped: ")
    rows, peak = _peaks_from_rows(output)
    stop = json.loads(attrs["stop"])
    assert stop["step"] == rows and stop["time_s"] == pytest.approx(rows * DT)
    summary = json.loads(attrs["summary"])
    assert summary["steps"] == rows - 1 and summary["realtime"] is False and summary["late_steps"] == 0
    assert summary["peak_displacement"]["x"] == peak <= limit
    assert summary["peak_displacement"]["x"] == pytest.approx(float(np.abs(whole.displacement[:rows, 0]).max()))
