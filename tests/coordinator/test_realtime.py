"""Real-time pacing: steps follow the wall clock, and a late step is counted, never hidden."""

from __future__ import annotations

import time

import pytest

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.modules.config_schema import Integer, Key, Number
from hybridsim.modules.registry import KINDS
from hybridsim.modules.spring import SpringModule
from tests.conftest import MARTHS_DATA


class StallingSpring(SpringModule):
    """A linear spring whose execute of one step takes ``stall_s`` longer (a slow lab, a network hiccup)."""

    CONFIG = SpringModule.CONFIG.with_keys("stalling", "a slow spring", {
        "stall_at": Key(Integer(), "the step that stalls", required=True),
        "stall_s": Key(Number("s", 0), "how long it stalls", required=True)})

    @classmethod
    def from_config(cls, config):
        module = super().from_config({k: v for k, v in config.items() if k not in ("stall_at", "stall_s")})
        module.stall_at, module.stall_s = config["stall_at"], config["stall_s"]
        return module

    def _trial(self, step, command):
        if step == self.stall_at:
            time.sleep(self.stall_s)
        return super()._trial(step, command)


@pytest.fixture
def stalling_kind(monkeypatch):
    monkeypatch.setitem(KINDS, "stalling", f"{__name__}:StallingSpring")


def experiment(tmp_path, stall_at: int = -1, duration: float = 7.0):
    return parse_experiment({
        "experiment": {"name": "paced", "dt": 0.01, "duration": duration},
        "structure": {"dofs": ["x"], "mass_diagonal": [1000.0], "influence": [1.0]},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv")},
        "modules": [{"name": "lab", "kind": "stalling",
                     "config": {"dofs": ["x"], "stiffness": 4.0e5, "stall_at": stall_at, "stall_s": 0.05}}],
        "output": {"file": str(tmp_path / "paced.h5")},
    }, base_dir=tmp_path)


def test_a_paced_run_takes_its_simulated_time_and_counts_a_stalled_step_late(tmp_path, stalling_kind):
    # step IDs: the pre-test of one DOF uses 1..3, so time step n has step ID n + 3
    started = time.perf_counter()
    summary = run_experiment(experiment(tmp_path, stall_at=300 + 3), realtime=True).summary
    wall = time.perf_counter() - started
    assert wall >= 7.0 * 0.99  # 700 steps of 10 ms: paced, not run as fast as possible
    assert summary["realtime"] is True
    assert 1 <= summary["late_steps"] <= 60  # the stalled step and the ones catching up after it
    assert summary["max_lateness_us"] >= 35e3  # the 50 ms stall overran its 10 ms slot by about 40 ms
    assert summary["step_time_us"]["max"] >= 50e3
    unpaced = run_experiment(experiment(tmp_path), overwrite=True).summary
    assert unpaced["realtime"] is False and unpaced["late_steps"] == 0
    assert unpaced["loop_wall_s"] < 0.5 * 7.0  # without pacing it runs faster than real time


def test_the_work_after_a_step_counts_in_its_step_time_and_lateness_but_not_in_its_compute_time(tmp_path,
                                                                                                 stalling_kind):
    """A listener (recording, a monitor) that takes 50 ms after step 100 eats that step's 10 ms slot."""

    def slow_listener(n, arrays):
        if n == 100:
            time.sleep(0.05)

    summary = run_experiment(experiment(tmp_path, duration=1.5), realtime=True, listeners=[slow_listener]).summary
    assert summary["late_steps"] >= 1
    assert summary["max_lateness_us"] >= 35e3  # 50 ms of listener in a 10 ms slot: about 40 ms past its end
    assert summary["step_time_us"]["max"] >= 50e3  # the whole step, issue to the end of its listeners
    assert summary["compute_time_us"]["max"] < 40e3  # issue to commit: a linear spring, far below the stall
    assert summary["compute_time_us"]["p50"] <= summary["step_time_us"]["p50"]
