"""Per-actuator dynamics, sensors on strokes and load cells, and the virtual specimen of the lab."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hybridsim.modules.plant.channels import ChannelActuators
from hybridsim.modules.plant.first_order import FirstOrderActuator
from hybridsim.modules.plant.module import build_lab
from hybridsim.wire.contract import Command, ModuleError, Session
from hybridsim.modules.registry import build_module

DT = 0.001


def step_response(table: dict, samples: int) -> np.ndarray:
    """Positions at samples 1..``samples`` under a unit command held from sample 0."""
    actuators = ChannelActuators([table], DT)
    out = []
    for _ in range(samples):
        actuators.advance(np.array([1.0]))
        out.append(actuators.position()[0])
    return np.array(out)


def test_ideal_and_delayed_actuators_reach_the_command_after_their_samples() -> None:
    np.testing.assert_array_equal(step_response({"model": "ideal"}, 3), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(step_response({"model": "delay", "samples": 3}, 5), [0, 0, 1, 1, 1])


def test_first_order_is_the_exact_zero_order_hold_recursion() -> None:
    reference = FirstOrderActuator(700.0, DT)
    expected = [reference.advance(1.0) for _ in range(20)]
    np.testing.assert_allclose(step_response({"model": "first-order", "bandwidth": 700.0}, 20), expected,
                               rtol=1e-15)
    # the same system as a transfer function a / (s + a), discretised by scipy's ZOH
    np.testing.assert_allclose(step_response({"model": "transfer-function", "num": [700.0], "den": [1.0, 700.0]}, 20),
                               expected, rtol=1e-12)


def test_a_second_order_state_space_follows_its_continuous_step_response() -> None:
    """A held unit step is exact under ZOH: y(t) = 1 - e^(-z w t) (cos wd t + z / sqrt(1 - z^2) sin wd t)."""
    omega, zeta = 2 * np.pi * 40.0, 0.3
    table = {"model": "state-space", "a": [[0.0, 1.0], [-omega**2, -2 * zeta * omega]], "b": [[0.0], [omega**2]],
             "c": [[1.0, 0.0]]}
    t = DT * np.arange(1, 61)
    wd = omega * math.sqrt(1 - zeta**2)
    exact = 1 - np.exp(-zeta * omega * t) * (np.cos(wd * t) + zeta / math.sqrt(1 - zeta**2) * np.sin(wd * t))
    np.testing.assert_allclose(step_response(table, 60), exact, atol=1e-12)


@pytest.mark.parametrize(("table", "message"), [
    ({"model": "delay", "samples": 0}, "actuator 1: a 'delay' actuator needs samples"),
    ({"model": "first-order"}, "needs bandwidth a > 0"),
    ({"model": "transfer-function", "num": [1.0, 2.0, 3.0], "den": [1.0, 1.0]}, "must be proper"),
    ({"model": "state-space", "a": [[1.0]], "b": [[1.0, 1.0]], "c": [[1.0]]}, "one input and one output"),
    ({"model": "hydraulic"}, "model must be one of ideal, delay, first-order"),
])
def test_bad_actuator_tables_are_refused_naming_the_actuator(table: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ChannelActuators([table], DT)


def lab_config(**extra) -> dict:
    return {"dt": DT, "units_per_metre": 1000.0, "dofs": ["a1", "a2"], "actuators": [{"model": "ideal"}] * 2,
            **extra}


def test_load_cells_read_the_specimen_at_the_true_strokes_with_quantization_and_saturation() -> None:
    stiffness = [[2.0e6, -5.0e5], [-5.0e5, 1.0e6]]
    lab = build_lab(lab_config(specimen={"kind": "linear", "coordinates": "actuators", "stiffness": stiffness},
                               noise={"quantum": 0.01, "limit": 5.0},  # strokes: 0.01 mm steps, +-5 mm
                               load_cells={"quantum": 10.0, "limit": 6000.0}))  # N
    strokes = lab.drive(np.array([0.0031234, -0.0072]))
    np.testing.assert_allclose(strokes, [0.00312, -0.005], rtol=0, atol=1e-15)
    true = np.array(stiffness) @ [0.0031234, -0.0072]  # 9846.8, -8761.7 N at the true strokes
    np.testing.assert_array_equal(lab.loads(), np.clip(np.round(true / 10.0) * 10.0, -6000, 6000))
    assert lab.probe(np.array([0.001, 0.0])) == pytest.approx([2000.0, -500.0], rel=1e-12)
    np.testing.assert_array_equal(lab.loads(), [6000.0, -6000.0])  # a probe commits nothing


def test_the_plant_module_returns_its_load_cells_as_forces() -> None:
    plant = build_module("plant", lab_config(specimen={"kind": "spring", "coordinates": "actuators",
                                                       "dofs": ["a1", "a2"], "law": "linear", "stiffness": 1e5}))
    plant.open(Session(DT, ("a1", "a2")))
    for step, (t, command) in enumerate([(0.0, [0.0, 0.0]), (DT, [0.001, 0.003])]):
        plant.propose(step, Command(t, np.array(command)))
        result = plant.execute(step)
        plant.commit(step)
    np.testing.assert_allclose(result.force, [-200.0, 200.0], rtol=1e-12)  # k (d2 - d1) on [-1, +1]
    plant.close()


def test_a_specimen_in_dof_coordinates_needs_its_setup() -> None:
    with pytest.raises(ModuleError, match="coordinates = 'dofs' needs the rig's setup table"):
        build_lab(lab_config(specimen={"kind": "linear", "stiffness": [[1.0]]}))
