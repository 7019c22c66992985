"""The delay and gain knobs of a virtual lab's actuators (a rehearsal's margins): the command the dynamics see is
the held commands linearly interpolated at t - tau, and the strokes reached are g times the dynamics' output."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.problems.marths import data, parts
from hybridsim.modules.config_schema import ConfigError
from hybridsim.modules.plant.actuators import LinearActuators
from hybridsim.modules.plant.knobs import KnobbedActuators
from hybridsim.modules.plant.module import CONFIG, build_actuators

DT = 0.001


def response(tables: list[dict], commands: np.ndarray) -> np.ndarray:
    """Positions at samples 1..N under ``commands`` (N x actuators) from rest."""
    actuators = build_actuators(tables, len(tables), DT)
    out = []
    for command in commands:
        actuators.advance(command)
        out.append(actuators.position())
    return np.array(out)


def test_a_fractional_delay_is_the_command_interpolated_tau_earlier_and_a_gain_scales_the_stroke() -> None:
    t = DT * np.arange(200)
    command = np.sin(40.0 * t) + 0.3 * t
    tables = [{"model": "ideal", "delay": 2.37e-3, "gain": 1.1}, {"model": "ideal", "delay": 3e-3}]
    got = response(tables, np.column_stack([command, command]))
    # an ideal actuator reaches the command of sample k at k + 1: its position at sample k + 1 is the held command
    # at t_k - tau, linear between samples (np.interp, zeros before the first): an oracle independent of the knob
    expected = [np.interp(t - tau, t, command, left=0.0) for tau in (2.37e-3, 3e-3)]
    np.testing.assert_allclose(got[:, 0], 1.1 * expected[0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got[:, 1], expected[1], rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(got[:, 1], np.r_[np.zeros(3), command[:-3]])  # whole samples: shifted, exactly


def test_no_knob_leaves_the_dynamics_as_they_are_and_the_state_carries_the_commands_in_flight() -> None:
    plain = build_actuators([{"model": "first-order", "bandwidth": 700.0}], 1, DT)
    assert type(plain).__name__ == "ChannelActuators"
    knobbed = build_actuators([{"model": "first-order", "bandwidth": 700.0, "delay": 4.5e-3}], 1, DT)
    for u in (1.0, 2.0, 3.0):
        knobbed.advance(np.array([u]))
    saved = knobbed.state()
    later = [knobbed.advance(np.array([0.0])) or knobbed.position()[0] for _ in range(8)]
    knobbed.set_state(saved)
    np.testing.assert_array_equal([knobbed.advance(np.array([0.0])) or knobbed.position()[0] for _ in range(8)], later)


@pytest.mark.parametrize("key, value, words", [("delay", -1e-3, "delay"), ("delay", 1e7, "delay.*<= 1"),
                                               ("gain", 0.0, "gain")])
def test_a_bad_knob_is_refused_by_the_schema_naming_it(key, value, words) -> None:
    table = {"dt": DT, "dofs": ["a"], "actuators": [{"model": "ideal", key: value}]}
    with pytest.raises(ConfigError, match=words):
        CONFIG.check(table)


@pytest.mark.parametrize("samples", [0, 1, 7])
def test_a_whole_sample_delay_of_the_marths_plant_is_its_own_response_shifted(samples) -> None:
    """The maRTHS rehearsal's delay margin turns this knob: the undelayed 2x2 identified plant (1024 Hz), driven
    by the same commands, is the oracle, bit for bit."""
    a, b, c = data.nominal_plant_state_space()
    commands = np.random.default_rng(3).normal(size=(200, 2))
    undelayed = LinearActuators.rk4(a, b, c, parts.DT)
    delayed = KnobbedActuators(LinearActuators.rk4(a, b, c, parts.DT), [samples * parts.DT] * 2, [1.0, 1.0],
                               parts.DT)
    out = []
    for command in commands:
        undelayed.advance(command)
        delayed.advance(command)
        out.append((undelayed.position(), delayed.position()))
    plain, late = (np.array(column) for column in zip(*out))
    np.testing.assert_array_equal(late[:samples], 0.0)
    np.testing.assert_array_equal(late[samples:], plain[:200 - samples])
