"""A results writer that stops (SIGSTOP, as a stalled disk or a descheduled process would) is said within a
second of being a second late, and the run holds its steps until it answers: no step is computed that the file may
never hold.  A real-time run at 1024 Hz and its real writer process."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import numpy as np

from hybridsim.coordinator.control import RunControl
from hybridsim.coordinator.experiment import parse_experiment
from hybridsim.coordinator.recorder import read_results
from hybridsim.coordinator.simulation import run_experiment
from tests.conftest import MARTHS_DATA

STOP_AT, STOPPED_S = 1024, 2.5
"""the writer is stopped after this step (1 s into the run) for this long (s)"""


def experiment(tmp_path, name: str):
    table = {
        "experiment": {"name": name, "dt": 1 / 1024, "duration": 3.0},
        "structure": {"dofs": ["x"], "mass_diagonal": [1000.0], "influence": [1.0]},
        "ground_motion": {"file": str(MARTHS_DATA / "ground_motion_elcentro.csv"), "scale": 0.6},
        "integrator": {"kind": "alpha-os", "alpha": -0.1},
        "modules": [{"name": "column", "kind": "spring", "config": {
            "dofs": ["x"], "law": "bilinear", "stiffness": 4.0e5, "yield_displacement": 0.004,
            "hardening_ratio": 0.05}}],
        "output": {"file": str(tmp_path / f"{name}.h5")},
    }
    return parse_experiment(table, base_dir=tmp_path)


class Progress:
    """A progress callback that keeps the notes the run gives it, with their wall times."""

    def __init__(self) -> None:
        self.notes: list[tuple[float, str]] = []

    def __call__(self, done: int, total: int) -> None:
        pass

    def note(self, text: str) -> None:
        self.notes.append((time.perf_counter(), text))


def test_a_stopped_writer_is_said_within_a_second_and_the_run_holds_its_steps(tmp_path):
    reference = run_experiment(experiment(tmp_path, "reference"))
    stalled = experiment(tmp_path, "stalled")
    control, progress, steps, seen = RunControl(), Progress(), {}, {}

    def stop_the_writer(n: int, _rows: object) -> None:
        steps[n] = time.perf_counter()
        if n == STOP_AT:
            (writer,) = [p.pid for p in multiprocessing.active_children()
                         if p.name == f"results writer {stalled.output.name}"]
            os.kill(writer, signal.SIGSTOP)
            threading.Timer(STOPPED_S, os.kill, (writer, signal.SIGCONT)).start()
            threading.Timer(1.8, lambda: seen.setdefault("notice", control.notice)).start()

    run_experiment(stalled, realtime=True, control=control, progress=progress, listeners=[stop_the_writer])
    stopped = steps[STOP_AT]
    said = [(t - stopped, text) for t, text in progress.notes]
    assert said and said[0][1] == "results writer stalled for 1 s" and said[0][0] < 1.0 + 0.5, said
    assert said[-1][1] == "" and said[-1][0] >= STOPPED_S, said  # said again once it answers
    assert seen["notice"] == "results writer stalled for 1 s"  # what the monitor shows: held: <notice>
    # the run held: no step between a stall of 1 s (and the step then in flight) and the writer's return
    during = [n for n, t in steps.items() if stopped + 1.0 + 0.3 < t < stopped + STOPPED_S]
    assert during == [], f"{len(during)} steps computed while the writer was stopped"
    stored = read_results(stalled.output)
    assert stored["attrs"]["status"] == "completed" and stored["attrs"]["completed_steps"] == 3073
    np.testing.assert_array_equal(stored["displacement"], read_results(reference.output)["displacement"])
    # the clock restarted after the hold: the steps after it keep to their slots of dt (without, every slot held
    # would be in the past and the steps issued back to back to catch up, ~1500 of them at once)
    resumed = min(t for t in steps.values() if t > stopped + STOPPED_S)
    assert sum(resumed <= t < resumed + 0.5 for t in steps.values()) <= 1.1 * 512
