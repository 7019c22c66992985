"""A property of a site behind its gate and its [limits] (issue 31), over its ports: whatever random sequence of
sessions opened and closed by several clients (two coordinators over gRPC, a SimApp client and a UI-SIMCOR client,
each over its own port of the site on loopback: the openfresco and simcor module kinds), steps (-1.5 to 2.5 mm from the
client's last target, and runs of six 1.5 mm steps past the holds and limits), edited restores, measured overloads
and operator clears a real site server in this process goes through, its control never receives a command beyond
the [limits] displacement, nor one farther than the increment from where its actuator was, nor anything while the
site is held; and a client never opens a session while another's is open (any port)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hybridsim.modules.experimental.controls import CONTROLS
from hybridsim.modules.openfresco import OpenFrescoModule
from hybridsim.modules.registry import build_module
from hybridsim.modules.simcor import SimCorModule
from hybridsim.wire.contract import Command, ModuleError, Session
from hybridsim.wire.protocols import serve_protocols
from hybridsim.wire.protocols.base import SessionEnded
from hybridsim.wire.remote import RemoteModule
from hybridsim.wire.server import SiteServer
from tests.modules.experimental.gate.test_gate_property import INCREMENT, STROKE, Recorder

DISPLACEMENT = 0.008
"""the site's [limits] displacement (m), inside the actuator's 10 mm stroke; [limits] force 500 N holds at 5 mm"""
CLIENTS = ("coordinator A", "coordinator B", "SimApp C", "UI-SIMCOR D")
POINTS = {"MDL-00-01": {"x": "u"}}
"""the UI-SIMCOR control point of the site's DOF"""


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[SiteServer, dict[str, str]]]:
    """The site server, and the addresses of its SimApp and UI-SIMCOR ports (free loopback ports)."""
    config = {"dt": 0.01, "setup": {"kind": "one-actuator", "dof": "u"}, "gate": {"increment": INCREMENT,
              "start_tolerance": 0.02}, "actuators": [{"stroke": STROKE, "force": 600.0}], "backend": {"recorder": {}},
              "limits": {"displacement": DISPLACEMENT, "force": 500.0}}
    with mock.patch.dict(CONTROLS, {"recorder": f"{Recorder.__module__}:Recorder"}):
        site = SiteServer(partial(build_module, "experimental", config), "lab", "127.0.0.1:0", link_listen=None)
        labs = serve_protocols(site.servicer, {"openfresco": "127.0.0.1:0", "simcor": "127.0.0.1:0"},
                               {"openfresco": {"dt": 0.01}, "simcor": {"control_points": POINTS, "dt": 0.01}}, 2**20)
        try:
            yield site, {option: lab.address for option, lab in labs.items()}
        finally:
            for lab in labs.values():
                lab.stop()
            site.stop()


class Client:
    """One of the site's clients, each over its own socket: a coordinator (gRPC), a SimApp client (OpenSees'
    genericClient's side) or a UI-SIMCOR client."""

    def __init__(self, server: SiteServer, ports: dict[str, str], name: str) -> None:
        self.name, self.n, self.k, self.target = name, 0, 0, 0.0
        self.grpc = RemoteModule(server.address, transport="unary", deadline_s=5.0) if "coord" in name else None
        self.module = self.grpc or (
            OpenFrescoModule.from_config({"address": ports["openfresco"], "dofs": ["u"], "server": "elem-server",
                                          "deadline_s": 5.0}) if name.startswith("SimApp") else
            SimCorModule.from_config({"address": ports["simcor"], "dofs": ["u"], "control_points": POINTS,
                                      "deadline_s": 5.0}))
        self.open = False

    def start(self) -> None:
        """Open a session and take the reading at rest."""
        self.n, self.target = 0, 0.0
        self.module.open(Session(0.01, ("u",), run_id=self.name, iterating=True))
        self.open = True
        try:
            self.step(0.0)
        except (SessionEnded, ModuleError):  # not started (a hold, a refusal): its session ends, no other waits
            self.stop()
            raise

    def step(self, change: float) -> None:
        """The next step, ``change`` (m) from the last target accepted (a new step ID even after a refusal); a
        lab protocol's client refused is answered NaN (its session ended)."""
        self.k += 1
        self.module.propose(self.k, Command(self.n * 0.01, np.array([self.target + change])))
        result = self.module.execute(self.k)
        if np.isnan(result.force).any():
            raise SessionEnded(f"{self.name}: refused")
        self.module.commit(self.k)
        self.n, self.target = self.n + 1, self.target + change

    def stop(self) -> None:
        self.open = False
        try:
            self.module.close()
        except ModuleError:  # a lab protocol's session the site ended already
            pass


ACTIONS = st.lists(st.one_of(
    st.tuples(st.just("open"), st.sampled_from(range(len(CLIENTS)))),  # any client, open or not
    st.tuples(st.just("step"), st.floats(-0.0015, 0.0025)),  # the rest: by the client whose session is open
    st.tuples(st.just("step"), st.floats(-0.0015, 0.0025)),  # toward the holds (5 mm, 6 mm) and limits (8 mm)
    st.tuples(st.just("step"), st.floats(-0.0015, 0.0025)),
    st.tuples(st.just("restore"), st.sampled_from([None, [], [float("nan")], [0.5], [0.004]])),
    st.tuples(st.just("push"), st.sampled_from([-0.0015, 0.0015])),  # six steps on: past the holds and limits
    st.tuples(st.just("close"), st.none()),
    st.tuples(st.just("clear"), st.none())), min_size=10, max_size=40)


@pytest.mark.timeout(120)  # real sockets: a hang fails here, not at the CI's limit
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.sampled_from(range(len(CLIENTS))), ACTIONS)
def test_no_command_beyond_the_limits_or_while_held_whichever_port(server, first, actions) -> None:
    server, ports = server
    Recorder.log = []
    clients = [Client(server, ports, name) for name in CLIENTS]
    actions = [("open", first), *actions]
    try:
        for kind, value in actions:
            holder = next((c for c in clients if c.open), None)
            client = clients[value] if kind == "open" else holder
            if client is None:
                continue
            held = server.servicer.interlock().reason is not None
            sent = len(Recorder.log)
            was_open = client.open
            try:
                act(client, kind, value, server)
            except (SessionEnded, ModuleError):  # a lab protocol's session ends at its first refusal; a
                client.open = client.open and client.grpc is not None  # coordinator's stays open until it closes
            if held and kind != "clear":
                assert len(Recorder.log) == sent, "a command reached the control while the site was held"
            if kind == "open" and holder is not None and not was_open:
                assert not client.open, f"{client.name} opened a second session at a site that moves something"
    finally:
        for client in clients:
            if client.open:
                client.stop()
            elif client.grpc is None:
                client.module.close()  # its socket (a refused session's too)
            if client.grpc is not None:
                client.grpc.disconnect()
        server.servicer.interlock().clear("the property's operator")
    for before, command in Recorder.log:
        assert abs(command) <= DISPLACEMENT
        assert abs(command - before) <= INCREMENT * (1 + 1e-12)


def act(client: Client, kind: str, value: object, server: SiteServer) -> None:
    """One action of the sequence by ``client``."""
    if kind == "open" and not client.open:
        client.start()
    elif kind == "step":
        client.step(value)  # type: ignore[arg-type]
    elif kind == "push":
        for _ in range(6):
            client.step(value)  # type: ignore[arg-type]
    elif kind == "close":
        client.stop()
    elif kind == "clear":
        server.servicer.interlock().clear("the property's operator")
    elif kind == "restore" and client.grpc is not None:
        data = json.loads(client.grpc.checkpoint())
        if value is not None:
            data["now"] = value
        client.grpc.restore(json.dumps(data).encode())
