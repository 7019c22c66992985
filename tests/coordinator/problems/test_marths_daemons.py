"""The benchmark with the plant and the experimental site as real daemons on 127.0.0.1 (steps on their step links)."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.problems import marths
from hybridsim.coordinator.problems.marths_campaign import run_one


def test_daemons_give_the_same_criteria_as_in_process_for_the_same_seeds() -> None:
    spec = marths.RunSpec(compensator="rls", plant="uncertain", plant_seed=1001, noise_seed=2001, duration=6.0)
    daemons = run_one(spec, topology="daemons")
    inprocess = run_one(spec, topology="inprocess")
    assert daemons.criteria == inprocess.criteria
    assert daemons.max_command_volts == inprocess.max_command_volts
    np.testing.assert_array_equal(daemons.history.measured_strokes, inprocess.history.measured_strokes)
    np.testing.assert_array_equal(daemons.history.commands, inprocess.history.commands)


@pytest.mark.parametrize("link", ["grpc", "auto"])
def test_a_site_can_start_its_own_plant_daemon(link: str) -> None:
    from hybridsim.coordinator.problems import marths_parts
    from hybridsim.wire.contract import Session
    from hybridsim.modules.registry import build_module

    spec = marths.RunSpec(compensator="none", plant="nominal", duration=6.0)
    config = marths_parts.site_config("none", backend={"daemon": marths_parts.plant_config("nominal", None, True, 123),
                                                       "link": link})
    module = build_module("experimental", config)
    module.open(Session(marths_parts.DT, marths_parts.SITE_DOFS))
    logs = marths.simulate(spec, marths.ModuleSide(module, marths_parts.DT))
    stats = module.close()
    direct = marths.run(spec)
    np.testing.assert_array_equal(logs["feedback"], direct.feedback)
    assert [stats["max_command_volts_1"], stats["max_command_volts_2"]] == direct.max_command_volts
