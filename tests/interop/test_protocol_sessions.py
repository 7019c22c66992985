"""One session rule on every port (issue 31): at a site that moves something a session opened over a lab's
protocol never takes over one that is open (over gRPC or another protocol); the refused client is answered with
NaN (SimApp has no error message) and the open session goes on."""

from __future__ import annotations

import socket
import struct

import numpy as np
import pytest

from hybridsim.wire.contract import Command, Session
from hybridsim.wire.remote import RemoteModule
from tests.interop.helpers import port_of, site


@pytest.mark.parametrize("protocol, query", [("openfresco", 10.0), ("generic-tcp", 6.0)])
def test_a_lab_protocol_client_does_not_take_over_an_experimental_site_s_open_session(tmp_path, protocol,
                                                                                      query) -> None:
    """A SimApp client (its sizes, setTrialResponse 3, getDaqResponse 10) or an ECGenericTCP control (its sizes,
    a command 3, a measurement request 6)."""
    config = {"dt": 0.01, "setup": {"kind": "one-actuator", "dof": "u2"}, "actuators": [{}],
              "backend": {"plant": {"dt": 0.01, "dofs": ["actuator_1"], "actuators": [{"model": "ideal"}],
                                    "specimen": {"kind": "linear", "stiffness": [[4.0e5]]}}}}
    with site(tmp_path, "experimental", config, protocol) as lab:
        coordinator = RemoteModule(lab.addresses["module"], transport="unary")
        try:
            coordinator.open(Session(0.01, ("u2",), run_id="the test"))
            coordinator.propose(0, Command(0.0, np.zeros(1)))
            coordinator.execute(0)
            coordinator.commit(0)
            with socket.create_connection(("127.0.0.1", port_of(lab.addresses[protocol])), timeout=10) as c:
                c.sendall(struct.pack("=11i", 1, 1, 1, 0, 1, 0, 0, 0, 1, 0, 16))
                c.sendall(np.array([3.0, 0.015] + [0.0] * 14).tobytes() + np.array([query] + [0.0] * 15).tobytes())
                reply = b""
                while len(reply) < 128:
                    reply += c.recv(128 - len(reply))
                assert np.isnan(np.frombuffer(reply)).all()  # refused: NaN, nothing moved
            text = lab.wait_log("Open from .* refused: session .* of run the test")
            coordinator.propose(1, Command(0.01, np.array([1e-3])))
            assert coordinator.execute(1).force[0] == pytest.approx(400.0, rel=1e-12)  # the session goes on: k d
            coordinator.commit(1)
            coordinator.close()
        finally:
            coordinator.disconnect()
    assert "taken over" not in text
