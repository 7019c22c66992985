"""An added delay of d samples is the actuators' own response d samples later (the undelayed actuators of the
same plant, driven by the same commands, are the oracle)."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.problems.marths import data, parts
from hybridsim.coordinator.rehearse.delayed_lab import DelayedActuators
from hybridsim.modules.plant.actuators import LinearActuators


def actuators() -> LinearActuators:
    """The maRTHS benchmark's identified 2x2 plant, sampled at its 1024 Hz."""
    a, b, c = data.nominal_plant_state_space()
    return LinearActuators.rk4(a, b, c, parts.DT)


def positions(plant, commands: np.ndarray) -> np.ndarray:
    out = []
    for command in commands:
        plant.advance(command)
        out.append(plant.position())
    return np.asarray(out)


@pytest.mark.parametrize("samples", [0, 1, 7])
def test_the_delayed_response_is_the_response_shifted(samples):
    commands = np.random.default_rng(3).normal(size=(200, 2))
    undelayed = positions(actuators(), commands)
    delayed = positions(DelayedActuators(actuators(), samples, 2), commands)
    np.testing.assert_array_equal(delayed[:samples], 0.0)
    np.testing.assert_array_equal(delayed[samples:], undelayed[:200 - samples])


@pytest.mark.parametrize("samples", [0, 5])
def test_a_restored_state_carries_the_commands_in_flight(samples):
    commands = np.random.default_rng(4).normal(size=(60, 2))
    plant = DelayedActuators(actuators(), samples, 2)
    positions(plant, commands[:30])
    saved = plant.state()
    expected = positions(plant, commands[30:])
    positions(plant, commands[:10])  # moved on, then taken back
    plant.set_state(saved)
    np.testing.assert_array_equal(positions(plant, commands[30:]), expected)
