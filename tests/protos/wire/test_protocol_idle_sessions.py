"""A lab protocol's session ends with its connection's idle timeout (issue 31): at a site that moves something a
client that went silent (a half-open connection, its peer gone without a word) must not keep the site's one
session open after the listener closed its connection, or every later client is refused until the site restarts."""

from __future__ import annotations

import socket
import struct
import time
from functools import partial

import numpy as np
import pytest

from hybridsim.modules.registry import build_module
from hybridsim.wire.protocols import base
from hybridsim.wire.protocols.openfresco.server import SimAppServer
from hybridsim.wire.protocols.simcor.server import SimCorServer
from hybridsim.wire.server import ModuleServicer

STIFFNESS = 4.0e5
"""the virtual lab's linear specimen (N/m) behind one ideal actuator"""
LAB = {"dt": 0.01, "setup": {"kind": "one-actuator", "dof": "u2"}, "actuators": [{}],
       "backend": {"plant": {"dt": 0.01, "dofs": ["actuator_1"], "actuators": [{"model": "ideal"}],
                             "specimen": {"kind": "linear", "stiffness": [[STIFFNESS]]}}}}


@pytest.fixture
def servicer(monkeypatch) -> ModuleServicer:
    monkeypatch.setattr(base, "IDLE_TIMEOUT_S", 0.3)  # read at each accept
    return ModuleServicer(partial(build_module, "experimental", LAB), "test")


def closed_by_the_site(connection: socket.socket) -> float:
    """Seconds until the site closes ``connection`` (it sends nothing more)."""
    start = time.monotonic()
    assert connection.recv(64) == b""  # a TimeoutError after 5 s if the site kept it
    return time.monotonic() - start


def simapp_force(port: int, displacement: float) -> tuple[socket.socket, float]:
    """A SimApp element client's sizes, setTrialResponse (3) and getDaqResponse (10); its connection and force."""
    client = socket.create_connection(("127.0.0.1", port), timeout=5.0)
    client.sendall(struct.pack("=11i", 1, 1, 1, 0, 1, 0, 0, 0, 1, 0, 16))
    client.sendall(np.array([3.0, displacement] + [0.0] * 14).tobytes() + np.array([10.0] + [0.0] * 15).tobytes())
    reply = b""
    while len(reply) < 128:
        reply += client.recv(128 - len(reply))
    return client, float(np.frombuffer(reply)[0])


def test_a_silent_simapp_client_s_session_ends_and_the_next_client_is_served(servicer) -> None:
    server = SimAppServer(servicer, "127.0.0.1:0")
    try:
        silent, force = simapp_force(server.port, 1e-3)
        assert force == pytest.approx(STIFFNESS * 1e-3, rel=1e-12)
        with silent:
            assert closed_by_the_site(silent) < 4.0
        late, force = simapp_force(server.port, 2e-3)
        with late:
            assert force == pytest.approx(STIFFNESS * 2e-3, rel=1e-12)  # NaN if the silent session were still open
    finally:
        server.stop()


def ask(client: socket.socket, line: str) -> list[str]:
    client.sendall(line.encode() + b"\r\n")
    reply = b""
    while not reply.endswith(b"\n"):
        reply += client.recv(256)
    return reply.decode().rstrip().split("\t")


def test_a_silent_ui_simcor_client_s_session_ends_and_the_next_client_opens_one(servicer) -> None:
    server = SimCorServer(servicer, "127.0.0.1:0", {"control_points": {"MDL-00-01": {"x": "u2"}}})
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5.0) as silent:
            assert ask(silent, "open-session\tfirst")[:2] == ["OK", "0"]
            assert closed_by_the_site(silent) < 4.0
        with socket.create_connection(("127.0.0.1", server.port), timeout=5.0) as late:
            assert ask(late, "open-session\tsecond")[:2] == ["OK", "0"]  # refused if the first were still open
            reply = ask(late, "propose\tT1\tMDL-00-01\tx\tdisplacement\t1e-3")
            assert reply[:3] == ["OK", "0", "T1"]
    finally:
        server.stop()
