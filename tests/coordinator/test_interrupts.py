"""A stop signal ends a run between two steps, not wherever the main thread happens to be.

An exception raised by a signal handler can land inside a library's ``with lock:`` and leave the lock held for
ever: the container SIGTERM test hung 2 times in 31 (a gRPC call's condition left held, the channel's event
thread blocked on it, the closing Records call to that site waiting for ever).  Here a module sends its own
process the signal in the middle of a step, inside a lock: the step completes and is recorded, the lock is
free, and the run stops before the next step.  A step that does not end within GRACE_S is interrupted where it
is, as before.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.interrupts import Interrupted, interrupted_once
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from hybridsim.modules.config_schema import Integer, Key, Number
from hybridsim.modules.registry import KINDS
from hybridsim.modules.spring import SpringModule
from tests.conftest import MARTHS_DATA

SIGNAL_AT = 200
"""the time step in whose trial the signal arrives"""
PRETEST_IDS = 3
"""the pre-test of one DOF uses step IDs 1..3: time step n has step ID n + 3 (alpha-os, one trial a step)"""


class SignalledSpring(SpringModule):
    """A linear spring that, in the trial of one step, sends its own process SIGTERM and then works on for
    ``work_s`` holding a lock (as a library's code does when the signal lands in it)."""

    CONFIG = SpringModule.CONFIG.with_keys("signalled", "a spring whose step is signalled", {
        "signal_at": Key(Integer(), "the step ID whose trial sends the signal", required=True),
        "work_s": Key(Number("s", 0), "how long the trial works on after it, holding a lock", required=True)})
    lock = threading.Lock()

    @classmethod
    def from_config(cls, config):
        module = super().from_config({k: v for k, v in config.items() if k not in ("signal_at", "work_s")})
        module.signal_at, module.work_s = config["signal_at"], config["work_s"]
        return module

    def _trial(self, step, command):
        if step == self.signal_at:
            os.kill(os.getpid(), signal.SIGTERM)
            with self.lock:
                time.sleep(self.work_s)
        return super()._trial(step, command)


@pytest.fixture
def signalled_kind(monkeypatch):
    monkeypatch.setitem(KINDS, "signalled", f"{__name__}:SignalledSpring")
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in previous.items():  # interrupted_once leaves them ignored: the process is ending
        signal.signal(sig, handler)


def run(tmp_path, work_s: float):
    experiment = parse_experiment({
        "experiment": {"name": "signalled", "dt": 0.01, "duration": 10.0},
        "structure": {"dofs": ["x"], "mass_diagonal": [1000.0], "influence": [1.0]},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv")},
        "modules": [{"name": "lab", "kind": "signalled", "config": {
            "dofs": ["x"], "stiffness": 4.0e5, "signal_at": SIGNAL_AT + PRETEST_IDS, "work_s": work_s}}],
        "output": {"file": str(tmp_path / "signalled.h5")},
    }, base_dir=tmp_path)
    started = time.monotonic()
    with pytest.raises(Interrupted) as stopped, interrupted_once():
        run_experiment(experiment)
    return stopped.value, time.monotonic() - started, read_results(tmp_path / "signalled.h5")


def test_a_signal_inside_a_step_lets_the_step_complete_and_stops_the_run_before_the_next(tmp_path, signalled_kind):
    stopped, _, stored = run(tmp_path, work_s=0.05)
    assert stopped.signum == signal.SIGTERM
    assert stored["attrs"]["status"] == "stopped: interrupted"
    assert stored["time"].size == SIGNAL_AT + 1  # t = 0 and every step up to the signalled one, which completed
    assert stored["step_id"][-1] == SIGNAL_AT + PRETEST_IDS
    assert not SignalledSpring.lock.locked()


def test_a_step_that_does_not_end_is_interrupted_where_it_is_after_the_grace(tmp_path, signalled_kind):
    stopped, seconds, stored = run(tmp_path, work_s=30.0)
    assert stopped.signum == signal.SIGTERM
    assert seconds < 30.0 / 2  # the run did not wait for the step: interrupted GRACE_S after the signal
    assert stored["attrs"]["status"] == "stopped: interrupted"
    assert stored["time"].size == SIGNAL_AT  # the signalled step did not complete and is not recorded
    assert not SignalledSpring.lock.locked()
