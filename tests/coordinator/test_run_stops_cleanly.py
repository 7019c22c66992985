"""A run that a module stops keeps every completed step on disk and names the module, step and cause."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.export import export
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.wire.contract import StepRefused
from hybridsim.modules.config_schema import Key, Number
from hybridsim.modules.linear import LinearModule
from hybridsim.modules.registry import KINDS
from tests.conftest import MARTHS_DATA


class LimitedSpring(LinearModule):
    """A linear spring whose site refuses any command beyond a stroke limit (m), before moving."""

    kind = "limited"
    CONFIG = LinearModule.CONFIG.with_keys("limited", "a linear spring with a stroke limit", {
        "limit": Key(Number("m", 0), "stroke limit", required=True)})

    def __init__(self, dofs, stiffness, limit: float) -> None:
        super().__init__(dofs, stiffness)
        self.limit = limit

    @classmethod
    def from_config(cls, config):
        base = LinearModule.from_config({k: v for k, v in config.items() if k != "limit"})
        return cls(base.dofs, base.stiffness, config["limit"])

    def _check(self, step, command):
        if np.max(np.abs(command.displacement)) > self.limit:
            raise StepRefused(step, f"stroke {np.max(np.abs(command.displacement)):.4g} m beyond the limit "
                                    f"{self.limit} m")


@pytest.fixture
def limited_kind(monkeypatch):
    monkeypatch.setitem(KINDS, "limited", f"{__name__}:LimitedSpring")


def experiment(tmp_path, limit: float):
    return parse_experiment({
        "experiment": {"name": "limited", "dt": 0.01},
        "structure": {"dofs": ["x"], "mass_diagonal": [1000.0], "influence": [1.0]},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": 0.4},
        "integrator": {"kind": "alpha-os"},
        "modules": [{"name": "actuator", "kind": "limited",
                     "config": {"dofs": ["x"], "stiffness": [[39478.4]], "limit": limit}}],
        "output": {"file": str(tmp_path / "limited.h5")},
    }, base_dir=tmp_path)


def test_a_refused_step_stops_the_run_and_the_file_keeps_every_completed_step(tmp_path, limited_kind):
    full = run_experiment(experiment(tmp_path, limit=1.0), output=tmp_path / "full.h5")
    limit = 0.5 * np.max(np.abs(full["x"]))
    first_beyond = int(np.argmax(np.abs(full["x"]) > limit))  # alpha-OS predicts d~ close to d: refuse near here
    with pytest.raises(RunStopped, match=r"module 'actuator' \(in process\) at step (\d+) \(t = ([\d.]+) s\): "
                                         r"step \1 refused: stroke") as refusal:
        run_experiment(experiment(tmp_path, limit=limit))
    stored = read_results(tmp_path / "limited.h5")
    rows = stored["attrs"]["completed_steps"]
    assert stored["attrs"]["status"].startswith("stopped: module 'actuator'")
    assert abs(rows - first_beyond) <= 2 and rows == stored["displacement"].shape[0]
    row, time_s = re.search(r"at step (\d+) \(t = ([\d.]+) s\)", str(refusal.value)).groups()
    assert int(row) == rows and float(time_s) == pytest.approx(rows * 0.01)  # the first row not in the file
    # the steps on disk are exactly those of the unstopped run
    np.testing.assert_array_equal(stored["displacement"][:, 0], full["x"][:rows])
    # and they export for MATLAB and spreadsheet users
    mat = export(tmp_path / "limited.h5", tmp_path / "limited.mat")
    csv = export(tmp_path / "limited.h5", tmp_path / "limited.csv")
    assert mat.stat().st_size > 0 and len(csv.read_text().splitlines()) == rows + 1
