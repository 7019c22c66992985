"""Force control at an experimental site (modules/experimental/force_control.py): a setup DOF held at a force by
the site's outer loop, the coordinator seeing the other DOFs only.

Against closed forms: a linear specimen K = [[kx, kxz], [kxz, kz]] over (x, z) with z held at F* responds along x
as its static condensation, r_x = (kx - kxz^2 / kz) x + (kxz / kz) F*, once x holds still for a sample; while x
moves by dx a sample, the loop (gain 1, stiffness kz) lags one sample: the z force is off by kxz dx.  Against a real
lab's controller process that logs every command (gate/logging_controller.py): the vertical actuator's commands
pass the gate (a target beyond its stroke is refused there)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hybridsim.modules.registry import build_module
from hybridsim.wire.contract import Command, ModuleError, Session
from tests.modules.experimental.gate.test_gate_paths import controller  # noqa: F401 (the fixture)

KX, KXZ, KZ, P, DT = 2.0e5, 3.0e4, 1.0e6, -5.0e3, 0.01
"""N/m; the held force F* (N, downwards); s (the control sample)"""


def linear_site(samples_per_step: int = 4, **force_control) -> object:
    """A virtual lab (ideal actuators) with the linear specimen, z held at P."""
    stiffness = [[KX, KXZ], [KXZ, KZ]]
    return build_module("experimental", {
        "dt": DT / samples_per_step, "setup": {"kind": "none", "dofs": ["x", "z"]},
        "force_control": [{"dof": "z", "force": P, "stiffness": KZ, "tolerance": 1e-6, **force_control}],
        "backend": {"plant": {"dt": DT / samples_per_step, "dofs": ["actuator_1", "actuator_2"],
                              "actuators": [{"model": "ideal"}] * 2,
                              "specimen": {"kind": "linear", "stiffness": stiffness}}}})


def step(module, n: int, x: float) -> float:
    module.propose(n, Command(n * DT, np.array([x])))
    result = module.execute(n)
    module.commit(n)
    return float(result.force[0])


def test_the_held_dof_is_condensed_out_as_its_closed_form() -> None:
    module = linear_site()
    assert [d.name for d in module.describe().dofs] == ["x"]
    module.open(Session(DT, ("x",)))
    at_rest = step(module, 0, 0.0)
    assert at_rest == pytest.approx(KXZ / KZ * P, rel=1e-12)  # the load ramped in before the test (x at rest)
    x = 0.004
    step(module, 1, x)  # x moves 1 mm a sample: the loop lags one sample
    assert module.site.forces.error[0] == pytest.approx(-KXZ * x / 4, rel=1e-9)
    held = step(module, 2, x)
    assert held == pytest.approx((KX - KXZ ** 2 / KZ) * x + KXZ / KZ * P, rel=1e-12)
    module.close()


def test_a_target_the_loop_cannot_reach_in_time_refuses_to_start() -> None:
    module = linear_site(stiffness=10 * KZ, settle=5)  # a tenth of the error corrected a sample
    module.open(Session(DT, ("x",)))
    with pytest.raises(ModuleError, match=r"force_control of z: -5000 not reached within 1e-06 in 10 \+ 5 samples"):
        step(module, 0, 0.0)
    module.close()


def commands(log: Path) -> np.ndarray:
    """Every command the controller received (rows of strokes, m)."""
    return np.array([json.loads(line) for line in log.read_text().splitlines()]) if log.exists() else np.zeros((0, 2))


def lab_site(address: str, force: float) -> object:
    """Two channels of the logging controller (its load cells 1e5 N/m x stroke), the second held at ``force``."""
    return build_module("experimental", {
        "dt": DT, "setup": {"kind": "none", "dofs": ["x", "z"]}, "initial_stiffness": [[1e5]],
        "actuators": [{"stroke": 0.010, "force": 1e4}] * 2, "gate": {"increment": 0.002},
        "force_control": [{"dof": "z", "force": force, "stiffness": 1e5}],
        "backend": {"generic_tcp": address, "channels": 2}})


def test_the_held_actuator_s_commands_pass_the_gate(controller) -> None:  # noqa: F811 (the fixture)
    address, log = controller
    module = lab_site(address, -300.0)
    module.open(Session(DT, ("x",)))
    assert step(module, 0, 0.0) == 0.0
    assert step(module, 1, 0.001) == pytest.approx(100.0)
    module.close()
    sent = commands(log)
    np.testing.assert_allclose(sent[:10, 1], -0.0003 * np.arange(1, 11), rtol=1e-12)  # the ramp, 0.3 mm a sample
    np.testing.assert_allclose(sent[-1], [0.001, -0.003], rtol=1e-12)  # held at -300 N / 1e5 N/m


def test_a_held_target_beyond_the_stroke_stops_at_the_gate(controller) -> None:  # noqa: F811 (the fixture)
    address, log = controller
    module = lab_site(address, -1500.0)  # -15 mm: beyond the 10 mm stroke
    module.open(Session(DT, ("x",)))
    with pytest.raises(ModuleError, match="actuator 2: target stroke -10.5 mm beyond its limit 10 mm"):
        step(module, 0, 0.0)
    module.close()
    assert np.abs(commands(log)).max() == pytest.approx(0.009)  # the ramp stopped at the gate
