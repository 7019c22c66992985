"""The benchmark with the plant and the experimental site as real daemons on 127.0.0.1 (steps on their step links)."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.problems.marths import loop
from hybridsim.coordinator.problems.marths.campaign import run_one


def test_daemons_give_the_same_criteria_as_in_process_for_the_same_seeds() -> None:
    spec = loop.RunSpec(compensator="rls", plant="uncertain", plant_seed=1001, noise_seed=2001, duration=6.0)
    daemons = run_one(spec, topology="daemons")
    inprocess = run_one(spec, topology="inprocess")
    assert daemons.criteria == inprocess.criteria
    assert daemons.max_command_volts == inprocess.max_command_volts
    np.testing.assert_array_equal(daemons.history.measured_strokes, inprocess.history.measured_strokes)
    np.testing.assert_array_equal(daemons.history.commands, inprocess.history.commands)


@pytest.mark.parametrize("transport", ["stream", "auto"])
def test_a_site_can_start_its_own_plant_daemon(transport: str) -> None:
    from hybridsim.coordinator.problems.marths import parts
    from hybridsim.wire.contract import Session
    from hybridsim.modules.registry import build_module

    spec = loop.RunSpec(compensator="none", plant="nominal", duration=6.0)
    config = parts.site_config("none", backend={"daemon": parts.plant_config("nominal", None, True, 123),
                                                       "transport": transport})
    module = build_module("experimental", config)
    module.open(Session(parts.DT, parts.SITE_DOFS))
    logs = loop.simulate(spec, loop.ModuleSide(module, parts.DT))
    stats = module.close()
    direct = loop.run(spec)
    np.testing.assert_array_equal(logs["feedback"], direct.feedback)
    assert [stats["max_command_volts_1"], stats["max_command_volts_2"]] == direct.max_command_volts
