"""Actuator dynamics: the RK4 hold map of a fixed-step ode4 solver (maRTHS §8.4), ideal actuators."""

from __future__ import annotations

import numpy as np
import scipy.signal

from hybridsim.coordinator.problems.marths import data, parts
from hybridsim.modules.plant.actuators import InstantActuators, LinearActuators, rk4_hold_map

DT = 1 / 1024


def _rk4_step(a: np.ndarray, b: np.ndarray, x: np.ndarray, u: np.ndarray, h: float) -> np.ndarray:
    """One classical Runge-Kutta step of x' = A x + B u with u held (the oracle)."""
    f = lambda v: a @ v + b @ u  # noqa: E731
    k1 = f(x)
    k2 = f(x + h / 2 * k1)
    k3 = f(x + h / 2 * k2)
    k4 = f(x + h * k3)
    return x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def test_hold_map_is_one_classical_rk4_step() -> None:
    a, b, _ = data.nominal_plant_state_space()
    phi, gamma = rk4_hold_map(a, b, DT)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x, u = rng.standard_normal(8), rng.standard_normal(2)
        np.testing.assert_allclose(phi @ x + gamma @ u, _rk4_step(a, b, x, u, DT), rtol=1e-12, atol=1e-12)


def test_rk4_is_close_to_but_not_the_exact_zero_order_hold() -> None:
    a, b, c = data.nominal_plant_state_space()
    phi, _ = rk4_hold_map(a, b, DT)
    phi_zoh = scipy.signal.cont2discrete((a, b, c, np.zeros((2, 2))), DT, method="zoh")[0]
    relative = np.linalg.norm(phi - phi_zoh) / np.linalg.norm(phi_zoh)
    assert 1e-6 < relative < 1e-2  # the spec: about 1e-3 relative; stick to RK4 to match Simulink


def test_input_output_map_does_not_depend_on_the_realisation() -> None:
    shipped = LinearActuators.rk4(*data.nominal_plant_state_space(), DT)
    cascade = LinearActuators.rk4(*parts.identified_plant().state_space(), DT)
    u = np.random.default_rng(1).standard_normal((400, 2))
    outputs = []
    for act in (shipped, cascade):
        y = []
        for uk in u:
            y.append(act.position())
            act.advance(uk)
        outputs.append(np.array(y))
    np.testing.assert_allclose(outputs[1], outputs[0], atol=1e-12 * np.abs(outputs[0]).max())


def test_output_depends_on_past_commands_only_and_step_response_settles_at_dc_gain() -> None:
    act = parts.actuators("nominal")
    act.advance(np.array([1.0, 0.0]))
    assert np.all(act.position() != 0.0)
    first = parts.actuators("nominal")
    np.testing.assert_array_equal(first.position(), [0.0, 0.0])
    for _ in range(int(10 * 1024)):
        first.advance(np.array([1.0, 0.0]))
    np.testing.assert_allclose(first.position(), [0.86381, 0.13961], atol=2e-5)


def test_instant_actuators_reach_each_command_by_the_end_of_its_sample() -> None:
    act = InstantActuators(2)
    np.testing.assert_array_equal(act.position(), [0.0, 0.0])
    act.advance(np.array([0.3, -0.2]))
    np.testing.assert_array_equal(act.position(), [0.3, -0.2])
