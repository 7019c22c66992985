"""Real-time pacing: steps follow the wall clock, and a late step is counted, never hidden."""

from __future__ import annotations

import math
import time

import pytest

from hybridsim.coordinator import pacing
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_results
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
    """What the machine's load cannot change: pacing never runs ahead of the wall clock, and a 50 ms stall in a
    10 ms slot makes at least 4 late steps (the stalled one and those catching up: see the next test) about 40 ms
    late.  The load can only add late steps (a bound on them failed at load 10-14: 67, 117 > 60); each is
    counted once, in one episode's cause."""
    # step IDs: the pre-test of one DOF uses 1..3, so time step n has step ID n + 3
    started = time.perf_counter()
    result = run_experiment(experiment(tmp_path, stall_at=300 + 3), realtime=True)
    wall, summary = time.perf_counter() - started, result.summary
    assert wall >= 7.0 * 0.99  # 700 steps of 10 ms: paced, not run as fast as possible
    assert summary["realtime"] is True
    assert summary["late_steps"] >= 4  # the stalled step and the ones catching up after it
    assert sum(summary["late_causes"]["late_steps"].values()) == summary["late_steps"]
    assert summary["max_lateness_us"] >= 35e3  # the 50 ms stall overran its 10 ms slot by about 40 ms
    assert summary["step_time_us"]["max"] >= 50e3
    assert read_results(result.output)["wall_step_s"][300] >= 0.05  # the stall, in the stalled step's compute
    unpaced = run_experiment(experiment(tmp_path), overwrite=True).summary
    assert unpaced["realtime"] is False and unpaced["late_steps"] == 0
    assert unpaced["loop_wall_s"] < 0.5 * 7.0  # without pacing it runs faster than real time


def test_the_work_after_a_step_counts_in_its_step_time_and_lateness_but_not_in_its_compute_time(tmp_path,
                                                                                                 stalling_kind):
    """A listener (recording, a monitor) that takes 50 ms after step 100 eats that step's 10 ms slot."""

    def slow_listener(n, arrays):
        if n == 100:
            time.sleep(0.05)

    result = run_experiment(experiment(tmp_path, duration=1.5), realtime=True, listeners=[slow_listener])
    summary = result.summary
    assert summary["late_steps"] >= 1
    assert summary["max_lateness_us"] >= 35e3  # 50 ms of listener in a 10 ms slot: about 40 ms past its end
    assert summary["step_time_us"]["max"] >= 50e3  # the whole step, issue to the end of its listeners
    # issue to commit of step 100 (a linear spring): without the listener's 50 ms (with it, 50 ms or more)
    assert read_results(result.output)["wall_step_s"][100] < 50e-3
    assert summary["compute_time_us"]["p50"] <= summary["step_time_us"]["p50"]


class VirtualClock:
    """``time`` for the pacer: perf_counter() and sleep() on a virtual clock (s) that only the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def perf_counter(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)


def test_the_pacer_counts_a_stalled_step_and_exactly_those_catching_up_after_it(monkeypatch):
    """Slots of dt = 10 ms, steps of w = 1 ms, one of s = 50 ms at step 300.  The clock is not reset: the steps
    after the stall are issued at once and step 300 + i ends s + i w after slot 300's start, late while that
    passes the end of its own slot, (i + 1) dt: i < (s - dt) / (dt - w) = 4.44, so 5 late steps, the first
    s - dt = 40 ms late; then the loop waits for its slots again."""
    clock = VirtualClock()
    monkeypatch.setattr(pacing, "time", clock)
    dt, w, s = 0.01, 0.001, 0.05
    pacer = pacing.Pacer(dt)
    late = []
    for n in range(700):
        issued = pacer.wait()
        clock.now += s if n == 300 else w
        if pacer.done(clock.now) > 0:
            late.append(n)
        assert issued >= pacer.slot_start  # never issued before its slot
    assert late == [300, 301, 302, 303, 304] == list(range(300, 300 + math.ceil((s - dt) / (dt - w))))
    assert pacer.late == 5 and pacer.max_lateness_s == pytest.approx(s - dt, abs=1e-9)
    assert clock.now == pytest.approx(1000.0 + 699 * dt + w, abs=1e-9)  # back on its slots: 7 s for 700 steps
