"""Force commands at an experimental site (what a lab protocol's client sends, OpenFresco's ExpForceControl or a
UI-SIMCOR force): the site declares its force_control DOFs force-controlled and its loop holds a commanded target
from the step's first sample; a declared history the same, at each step's time.  Against the closed form of test_force_control: a linear specimen with z held at F*
answers along x as its static condensation, r_x = (kx - kxz^2 / kz) x + (kxz / kz) F*, once x and F* hold still
for a sample (the loop, gain 1 with stiffness kz, meets a new target one sample later)."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.wire.contract import FORCE_CONTROLLED, Command, Session, StepRefused
from hybridsim.modules.registry import build_module
from tests.modules.experimental.test_force_control import DT, KX, KXZ, KZ, P, linear_site


def condensed(x: float, force: float) -> float:
    return (KX - KXZ ** 2 / KZ) * x + KXZ / KZ * force


def step(module, n: int, x: float, force: float | None) -> float:
    module.propose(n, Command(n * DT, np.array([x]), force=None if force is None else np.array([force])))
    result = module.execute(n)
    module.commit(n)
    return float(result.force[0])


def test_a_commanded_force_is_held_from_the_step_it_comes_with() -> None:
    module = linear_site()
    assert module.describe().info[FORCE_CONTROLLED] == "z"
    module.open(Session(DT, ("x",)))
    assert step(module, 0, 0.0, None) == pytest.approx(condensed(0.0, P), rel=1e-12)  # the declared target
    x = 0.004
    step(module, 1, x, 2 * P)
    assert step(module, 2, x, 2 * P) == pytest.approx(condensed(x, 2 * P), rel=1e-12)
    # x still, the target halved: one sample off by the jump, the step's last sample on the closed form
    assert step(module, 3, x, 0.5 * P) == pytest.approx(condensed(x, 0.5 * P), rel=1e-12)
    assert step(module, 4, x, None) == pytest.approx(condensed(x, 0.5 * P), rel=1e-12)  # none given: kept
    with pytest.raises(StepRefused, match="force"):
        module.propose(5, Command(5 * DT, np.array([x]), force=np.array([P, P])))
    module.close()


def test_a_declared_history_is_held_at_each_steps_time() -> None:
    # P at t = 0 (ramped in before the test), 3P at 2 dt, held after: steps 1 .. 4 at 2P, 3P, 3P, 3P
    stiffness = [[KX, KXZ], [KXZ, KZ]]
    sample = DT / 4
    module = build_module("experimental", {
        "dt": sample, "setup": {"kind": "none", "dofs": ["x", "z"]},
        "force_control": [{"dof": "z", "history": {"time": [0.0, 2 * DT], "force": [P, 3 * P]}, "stiffness": KZ,
                           "tolerance": 1e-6}],
        "backend": {"plant": {"dt": sample, "dofs": ["actuator_1", "actuator_2"], "actuators": [{"model": "ideal"}] * 2,
                              "specimen": {"kind": "linear", "stiffness": stiffness}}}})
    module.open(Session(DT, ("x",)))
    x = 0.002
    read = [step(module, n, 0.0 if n == 0 else x, None) for n in range(5)]
    module.close()
    assert read[0] == pytest.approx(condensed(0.0, P), rel=1e-12)
    # x moves in step 1 (the loop lags it by kxz dx a sample, test_force_control); from step 2 on x stands still
    assert read[2:] == pytest.approx([condensed(x, 3 * P)] * 3, rel=1e-12)


def test_a_simapp_client_commands_the_held_force_of_a_site_daemon(tmp_path) -> None:
    """`hybridsim site experimental --openfresco` with the linear virtual lab: a client of sizeCtrl force = 1
    (OpenFresco's ExpForceControl) commands z's force with x, and reads the condensed x force back."""
    from tests.interop.helpers import site
    from tests.interop.test_openfresco_site import client, message, receive, sizes

    stiffness = [[KX, KXZ], [KXZ, KZ]]
    sample = DT / 4
    config = {"dt": sample, "setup": {"kind": "none", "dofs": ["x", "z"]}, "openfresco": {"dt": DT},
              "force_control": [{"dof": "z", "force": P, "stiffness": KZ, "tolerance": 1e-6}],
              "backend": {"plant": {"dt": sample, "dofs": ["actuator_1", "actuator_2"],
                                    "actuators": [{"model": "ideal"}] * 2,
                                    "specimen": {"kind": "linear", "stiffness": stiffness}}}}
    x, read = 0.004, []
    with site(tmp_path, "experimental", config, "openfresco") as lab:
        with client(lab) as c:
            c.sendall(sizes(1, ctrl=(1, 0, 0, 1, 1)))
            for n, force in enumerate((2 * P, 2 * P, 0.5 * P), start=1):
                c.sendall(message([3, x, force, n * DT]) + message([10]))
                read.append(receive(c)[0])
                c.sendall(message([5]))
            c.sendall(message([99]))
    assert read[1:] == pytest.approx([condensed(x, 2 * P), condensed(x, 0.5 * P)], rel=1e-12)
