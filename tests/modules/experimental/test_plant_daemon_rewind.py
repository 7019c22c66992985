"""An experimental site whose plant is a daemon: iterated trials and checkpoints, as with the plant in process.

An iterating integrator proposes several trials of one step and keeps the last; the site must take
each discarded trial back at the plant.  A step of one control sample leaves that sample a trial at
the plant until the step is committed, so the plant's next proposal replaces it there (nothing but the
samples crosses the wire); a step of several samples has committed all but its last, and the plant's
checkpoint of the step's start is given back.  The reference is the same site with the plant in its
own process, whose lab state is set back in memory: the daemon path must reproduce it bit for bit,
and a checkpoint taken with the daemon must restore into a fresh site (a fresh daemon) and continue
identically.
"""

from __future__ import annotations

import numpy as np

from hybridsim.coordinator.problems.marths import parts as marths_parts
from hybridsim.modules.registry import build_module
from hybridsim.wire.contract import Command, Session

DT = marths_parts.DT


def _module(where: str, samples: int = 1, iterating: bool = False):
    """The maRTHS site (RLS, noisy nominal plant) over steps of ``samples`` control samples."""
    plant = marths_parts.plant_config("nominal", None, True, 7)
    backend = {"plant": plant} if where == "process" else {"daemon": plant, "transport": "stream"}
    module = build_module("experimental", marths_parts.site_config("rls", backend=backend))
    module.open(Session(samples * DT, marths_parts.SITE_DOFS, iterating=iterating))
    return module


def _target(t: float) -> np.ndarray:
    return np.array([2e-3 * np.sin(2 * np.pi * 1.5 * t), 1e-3 * np.sin(2 * np.pi * 0.7 * t), 0.0])


def _iterate(module, steps: range, step_id: int, samples: int = 1) -> tuple[list[np.ndarray], int]:
    """Two discarded trials (0.9 and 1.1 of the target) then the target, committed, for each step."""
    out = []
    for n in steps:
        t = n * samples * DT
        for factor in (0.9, 1.1, 1.0):
            step_id += 1
            module.propose(step_id, Command(t, factor * _target(t)))
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


def test_a_discarded_one_sample_trial_costs_the_plant_daemon_no_call():
    """Steps of one control sample: every trial is one sample, one message to the plant; the take-backs and the
    commits travel with the samples (no checkpoint, restore or commit call of their own)."""
    daemon = _module("daemon", iterating=True)
    try:
        step_id = _rest(daemon)
        before = daemon._plant_stats["wire_round_trips"]
        _iterate(daemon, range(1, 21), step_id)
        assert daemon._plant_stats["wire_round_trips"] - before == 3 * 20
    finally:
        daemon.close()


def test_iterated_trials_of_several_samples_with_a_plant_daemon_equal_the_plant_in_process():
    """Steps of three control samples: a discarded trial has committed two samples at the plant, whose
    checkpoint of the step's start is given back (the session says the integrator iterates)."""
    steps = range(1, 15)
    reference = _module("process", 3, iterating=True)
    expected, _ = _iterate(reference, steps, _rest(reference), 3)
    reference.close()
    daemon = _module("daemon", 3, iterating=True)
    try:
        got, _ = _iterate(daemon, steps, _rest(daemon), 3)
    finally:
        daemon.close()
    np.testing.assert_array_equal(np.array(got), np.array(expected))


def test_newmark_through_a_plant_daemon_first_iterating_long_after_step_1(tmp_path):
    """Newmark over a yielding specimen converges in one trial while it is elastic: its first trial taken
    back comes at the first yield (row 637 here), which the plant daemon must allow (each step's one
    sample stays a trial at the plant until the step is committed); the run equals the plant in the
    site's process."""
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
