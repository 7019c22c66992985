"""The site's ``[limits]`` on every path (issue 31): a restored checkpoint, a hold across a daemon's sessions and
restores, the site clock's predictions, a protocol session's step time.  Each against the logging controller
process of test_gate_paths.py where something could move: the assertions are on what that controller received."""

from __future__ import annotations

import base64
import json
import socket
import struct
import time

import numpy as np
import pytest

from hybridsim.wire.contract import Command, ModuleError, Session
from tests.interop.helpers import port_of, site as site_daemon
from tests.modules.experimental.gate.test_gate_paths import (at_rest, controller, largest_jump, move_at_the_lab,
                                                             received, site, steps)

__all__ = ["controller"]  # the fixture, used by name

LIMITED = {"displacement": 0.005, "force": 400.0}
"""the site's [limits] (m, N; the controller's load cell reads 1e5 N/m x stroke), the actuator's own wide open"""


def limited(address: str, **limits) -> object:
    """An experimental site whose only protection is its [limits] (stroke 1 m, no increment limit)."""
    return site(address, actuator={"stroke": 1.0, "force": 1e5}, gate={"increment": 1.0},
                limits={**LIMITED, **limits})


def edited(checkpoint: bytes, **values) -> bytes:
    data = json.loads(checkpoint)
    data.update(values)
    return json.dumps(data).encode()


def test_a_restore_never_lifts_the_limits(controller) -> None:
    """Before: "now": [] skipped the limits (shapes differ) and "now": [NaN] passed every increment."""
    address, log = controller
    module = limited(address, increment=0.002)
    module.open(Session(0.01, ("u",)))
    at_rest(module)
    steps(module, [0.001, 0.002])
    checkpoint = module.checkpoint()
    for now, why in (([], r"now \[\] is not one finite value per DOF"),
                     ([float("nan")], r"now \[nan\] is not one finite value per DOF"),
                     ([0.5], "puts DOF 'u' at 0.5, beyond its displacement limit 0.005")):
        with pytest.raises(ModuleError, match=why):
            module.restore(edited(checkpoint, now=now))
    with pytest.raises(ModuleError, match="actuator 1 is at 2 mm and the checkpoint has it at 40 mm"):
        inner = json.loads(base64.b64decode(json.loads(checkpoint)["inner"]))
        inner["state"]["site"]["measured_mm"] = [40.0]
        module.restore(edited(checkpoint, inner=base64.b64encode(json.dumps(inner).encode()).decode()))
    module.restore(checkpoint)  # where the actuator is: accepted
    with pytest.raises(ModuleError, match="displacement limit on DOF 'u': 0.5 > 0.005"):
        steps(module, [0.5], first=3)
    module.close()
    assert np.abs(received(log)).max() == 0.002 and largest_jump(log) == pytest.approx(0.001, rel=1e-12)


def test_a_hold_lasts_across_a_daemon_s_sessions_and_restores(controller, tmp_path) -> None:
    """Before: Close + Open at a site daemon (a fresh module) or restoring an earlier checkpoint lifted the
    [limits] hold of a measured overload."""
    from hybridsim.wire.remote import RemoteModule

    address, log = controller
    config = {"dt": 0.01, "setup": {"kind": "one-actuator", "dof": "u"}, "actuators": [{"stroke": 1.0}],
              "initial_stiffness": [[1e5]], "backend": {"generic_tcp": address, "channels": 1},
              "limits": {"force": 150.0}}
    with site_daemon(tmp_path, "experimental", config) as lab:
        remote = RemoteModule(lab.addresses["module"], transport="unary")
        try:
            remote.open(Session(0.01, ("u",)))
            at_rest(remote)
            steps(remote, [0.0008])
            earlier = remote.checkpoint()
            steps(remote, [0.0016], first=2)  # 160 N measured: held
            with pytest.raises(ModuleError, match="site on hold: measured at step 2: force limit on DOF 'u': 160"):
                steps(remote, [0.0008], first=3)
            remote.close()
            move_at_the_lab(address, 0.0008)  # the operator unloads the specimen to where the checkpoint was
            sent = received(log).size
            remote.open(Session(0.01, ("u",)))
            remote.restore(earlier)
            with pytest.raises(ModuleError, match="site on hold: measured at step 2"):
                steps(remote, [0.0005], first=2, step=10)
            remote.close()
        finally:
            remote.disconnect()
    assert received(log).size == sent  # nothing reached the controller while held


def test_the_site_clock_s_predictions_pass_the_site_s_displacement_limit(controller) -> None:
    """Before: [limits] checked the targets that arrived, not the commands the clock made: the controller received
    5.31 mm against displacement = 0.005 after the coordinator died."""
    address, log = controller
    module = site(address, actuator={"force": 1e4}, gate={"increment": 0.01}, clock="own", dt=0.001,
                  command_generation={"scheme": "predictor-corrector", "order": 2}, limits={"displacement": 0.005})
    dt = 0.005  # five control samples of 1 ms per step
    module.open(Session(dt, ("u",)))
    at_rest(module)
    ramp = [0.0012 * k for k in range(1, 5)]  # to 4.8 mm; then nothing: the clock predicts on past 5 mm
    for k, target in enumerate(ramp, start=1):
        module.propose(k, Command(k * dt, np.array([target])))
        module.execute(k)
        module.commit(k)
    time.sleep(0.1)  # the coordinator is gone: the clock predicts step 5 until it holds
    module.propose(5, Command(5 * dt, np.array([ramp[-1]])))
    with pytest.raises(ModuleError, match=r"interface DOF 1: target 0\.005\d+ beyond the site's displacement limit"):
        module.execute(5)
    module.close()
    assert np.abs(received(log)).max() <= 0.005


def simapp_step(port: int, displacement: float, time: float = 0.0) -> np.ndarray:
    """One SimApp element client (OpenSees' genericClient's bytes): sizes (displacement, velocity, acceleration
    and time), setTrialResponse at ``time`` (s; 0: a pre-test's trial), getForce; the 16 numbers of the reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(struct.pack("=11i", 1, 1, 1, 0, 1, 0, 0, 0, 1, 0, 16))
        client.sendall(np.array([3.0, displacement, 0.0, 0.0, time] + [0.0] * 11).tobytes()
                       + np.array([10.0] + [0.0] * 15).tobytes())
        reply = b""
        while len(reply) < 128:
            reply += client.recv(128 - len(reply))
        client.sendall(np.array([99.0] + [0.0] * 15).tobytes())
        client.recv(1)  # the site closes the connection once the session is closed: the next client may open one
    return np.frombuffer(reply)


@pytest.mark.parametrize("declared", [False, True])
def test_the_velocity_limit_never_uses_a_step_time_the_protocol_does_not_carry(tmp_path, declared) -> None:
    """Before: a SimApp session's dt defaulted to 1 s, so a 90 mm step passed a 0.1 m/s limit."""
    config = {"dofs": ["u"], "stiffness": [[1.0e5]], "limits": {"velocity": 0.1}}
    if declared:
        config["openfresco"] = {"dt": 0.01}  # the lab's step: 0.1 m/s x 0.01 s = 1 mm per step
    with site_daemon(tmp_path, "linear", config, "openfresco") as lab:
        port = port_of(lab.addresses["openfresco"])
        assert np.isnan(simapp_step(port, 0.090)).all()  # refused: NaN, nothing moved
        why = "velocity limit on DOF 'u': 9 > 0.1 m/s" if declared else "limits.velocity: the session .* carries no"
        lab.wait_log(why)
        if declared:
            assert simapp_step(port, 0.0005)[0] == pytest.approx(50.0, rel=1e-12)  # 0.5 mm: k d
