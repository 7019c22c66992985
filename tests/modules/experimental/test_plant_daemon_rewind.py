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
