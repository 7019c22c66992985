"""A lab protocol's port at a site that moves something (issue 31, paths 2 and 6), against the logging controller
process of test_gate_paths.py: a SimApp client neither takes over an open session (before: its sizes message
alone took it over, and the new session's pre-test commanded a 15 mm jump to 0) nor moves the actuators faster
than the gate's velocity over the site's own control sample (before: a 90 mm step passed 0.1 m/s over the 1 s a
SimApp session assumed)."""

from __future__ import annotations

import socket
import struct

import numpy as np
import pytest

from hybridsim.wire.contract import Session
from hybridsim.wire.remote import RemoteModule
from tests.interop.helpers import port_of, site as site_daemon
from tests.modules.experimental.gate.test_gate_limits import simapp_step
from tests.modules.experimental.gate.test_gate_paths import at_rest, controller, largest_jump, received, steps

__all__ = ["controller"]  # the fixture, used by name

SAMPLE = 0.001
"""the most a command moves in one 10 ms control sample (m): gate.velocity 0.1 m/s x 0.01 s"""


def test_a_simapp_client_neither_takes_over_nor_outruns_the_gate(controller, tmp_path) -> None:
    address, log = controller
    config = {"dt": 0.01, "setup": {"kind": "one-actuator", "dof": "u"}, "actuators": [{"stroke": 0.1, "force": 1e5}],
              "gate": {"increment": 0.002, "velocity": 0.1}, "initial_stiffness": [[1e5]],
              "backend": {"generic_tcp": address, "channels": 1}}
    ramp = [0.00075 * k for k in range(1, 21)]  # 0.75 mm a step, within the gate's 1 mm a sample
    with site_daemon(tmp_path, "experimental", config, "openfresco") as lab:
        port = port_of(lab.addresses["openfresco"])
        remote = RemoteModule(lab.addresses["module"], transport="unary")
        try:
            remote.open(Session(0.01, ("u",), run_id="the test"))
            at_rest(remote)
            steps(remote, ramp)  # to 15 mm
            with socket.create_connection(("127.0.0.1", port), timeout=10) as intruder:
                intruder.sendall(struct.pack("=11i", 1, 1, 1, 0, 1, 0, 0, 0, 1, 0, 16))  # the 44-byte sizes alone
                lab.wait_log("Open from .* refused: session .* of run the test")
            steps(remote, ramp[::-1][1:] + [0.0], first=21)  # the coordinator's session goes on, back to 0
            remote.close()
        finally:
            remote.disconnect()
        assert simapp_step(port, 0.090)[0] == pytest.approx(9000.0)  # at t = 0: a pre-test's probe, nothing moves
        assert np.isnan(simapp_step(port, 0.090, time=0.01)).all()  # its first step: refused by the gate, NaN
        lab.wait_log(r"command 90 mm is 90 mm from its measured stroke 0 mm, beyond 1 mm per sample")
    assert np.abs(received(log)).max() == pytest.approx(0.015, rel=1e-12)
    assert largest_jump(log) == pytest.approx(0.00075, rel=1e-9)
