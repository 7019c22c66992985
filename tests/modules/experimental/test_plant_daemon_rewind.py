"""An experimental site whose plant is a daemon: iterated trials and checkpoints, as with the plant in process.

An iterating integrator proposes several trials of one step and keeps the last; the site must take
each discarded trial back at the plant (a virtual lab: its checkpoint is given back).  The reference
is the same site with the plant in its own process, whose lab state is set back in memory: the
daemon path must reproduce it bit for bit, and a checkpoint taken with the daemon must restore into
a fresh site (a fresh daemon) and continue identically.
"""

from __future__ import annotations

import numpy as np

from hybridsim.coordinator.problems.marths import parts as marths_parts
from hybridsim.modules.registry import build_module
from hybridsim.wire.contract import Command, Session

DT = marths_parts.DT


def _module(where: str):
    plant = marths_parts.plant_config("nominal", None, True, 7)
    backend = {"plant": plant} if where == "process" else {"daemon": plant, "transport": "stream"}
    module = build_module("experimental", marths_parts.site_config("rls", backend=backend))
    module.open(Session(DT, marths_parts.SITE_DOFS))
    return module


def _target(n: int) -> np.ndarray:
    t = n * DT
    return np.array([2e-3 * np.sin(2 * np.pi * 1.5 * t), 1e-3 * np.sin(2 * np.pi * 0.7 * t), 0.0])


def _iterate(module, steps: range, step_id: int) -> tuple[list[np.ndarray], int]:
    """Two discarded trials (0.9 and 1.1 of the target) then the target, committed, for each step."""
    out = []
    for n in steps:
        for factor in (0.9, 1.1, 1.0):
            step_id += 1
            module.propose(step_id, Command(n * DT, factor * _target(n)))
            result = module.execute(step_id)
        module.commit(step_id)
        out.append(np.concatenate([result.displacement, result.force]))
    return out, step_id


def _rest(module) -> int:
    module.propose(0, Command(0.0, np.zeros(3)))
    module.execute(0)
    module.commit(0)
    return 0


def test_iterated_trials_with_a_plant_daemon_equal_the_plant_in_process_and_checkpoints_restore():
    steps = range(1, 41)
    reference = _module("process")
    expected, _ = _iterate(reference, steps, _rest(reference))
    reference.close()

    daemon = _module("daemon")
    try:
        first, step_id = _iterate(daemon, range(1, 21), _rest(daemon))
        checkpoint = daemon.checkpoint()
        second, _ = _iterate(daemon, range(21, 41), step_id)
    finally:
        daemon.close()
    np.testing.assert_array_equal(np.array(first + second), np.array(expected))

    restored = _module("daemon")  # a fresh site and a fresh plant daemon
    try:
        restored.restore(checkpoint)
        again, _ = _iterate(restored, range(21, 41), step_id)
    finally:
        restored.close()
    np.testing.assert_array_equal(np.array(again), np.array(expected[20:]))


def test_newmark_through_a_plant_daemon_first_iterating_long_after_step_1(tmp_path):
    """Newmark over a yielding specimen converges in one trial while it is elastic: its first trial taken
    back comes at the first yield (row 637 here), which the plant daemon must allow (the session says the
    integrator iterates, so the site keeps the plant's state at every step); the run equals the plant in
    the site's process."""
    from hybridsim.coordinator.bench_longrun import MASS, STIFFNESS, YIELDING, repeated_record
    from hybridsim.coordinator.experiment import parse_experiment
    from hybridsim.coordinator.recorder import read_results
    from hybridsim.coordinator.simulation import run_experiment

    plant = {"dt": 0.01, "dofs": ["x"], "actuators": [{"model": "ideal"}], "specimen": {"kind": "spring", **YIELDING}}
    motion = repeated_record(tmp_path, 8.0, 1)

    def run(backend, name):
        run_experiment(parse_experiment({
            "experiment": {"name": name, "dt": 0.01},
            "structure": {"dofs": ["x"], "mass_diagonal": [MASS], "influence": [1.0], "damping": {"rayleigh": [0.3, 1e-4]}},
            "ground_motion": {"file": str(motion), "scale": 0.6},
            "integrator": {"kind": "newmark"},
            "modules": [{"name": "site", "kind": "experimental", "config": {
                "dt": 0.01, "setup": {"kind": "none", "dofs": ["x"]}, "actuators": [{}],
                "initial_stiffness": [[STIFFNESS]], "backend": backend}}],
            "output": {"file": str(tmp_path / f"{name}.h5")}}, base_dir=tmp_path))
        return read_results(tmp_path / f"{name}.h5")

    daemon, process = run({"daemon": plant}, "daemon"), run({"plant": plant}, "process")
    trials = np.diff(daemon["step_id"])
    first_iterated = int(np.argmax(trials > 1)) + 1
    assert 600 < first_iterated < daemon["time"].size  # long after step 1, and the run went on to its end
    assert np.max(np.abs(daemon["displacement"])) > YIELDING["yield_displacement"]
    np.testing.assert_array_equal(daemon["displacement"], process["displacement"])
    np.testing.assert_array_equal(daemon["step_id"], process["step_id"])
