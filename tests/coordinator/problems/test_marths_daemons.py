"""The benchmark with the plant and the experimental site as real gRPC daemons on 127.0.0.1."""

from __future__ import annotations

import numpy as np

from coordinator.problems import marths
from coordinator.problems.marths_campaign import run_one


def test_daemons_give_the_same_criteria_as_in_process_for_the_same_seeds() -> None:
    spec = marths.RunSpec(compensator="rls", plant="uncertain", plant_seed=1001, noise_seed=2001, duration=6.0)
    daemons = run_one(spec, topology="daemons")
    inprocess = run_one(spec, topology="inprocess")
    assert daemons.criteria == inprocess.criteria
    assert daemons.max_command_volts == inprocess.max_command_volts
    np.testing.assert_array_equal(daemons.history.measured_strokes, inprocess.history.measured_strokes)
    np.testing.assert_array_equal(daemons.history.commands, inprocess.history.commands)
