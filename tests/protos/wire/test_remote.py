"""RemoteModule against sites served in this process on 127.0.0.1 (real gRPC, real sockets)."""

from __future__ import annotations

import json
import threading
import time
from concurrent import futures
from pathlib import Path

import grpc
import numpy as np
import pytest

from hybridsim.wire.network import Network
from hybridsim.wire.remote import RemoteModule
from hybridsim.v1 import module_pb2 as pb
from hybridsim.v1 import module_pb2_grpc as pb_grpc
from hybridsim.wire import link
from hybridsim.modules.base import StepLedger
from hybridsim.wire.contract import Command, Description, Dof, ModuleError, Session, StepRefused
from hybridsim.modules.linear import LinearModule
from hybridsim.wire.server import SiteServer
from tests.conftest import free_port

STIFFNESS = [[2000.0, -1000.0], [-1000.0, 2000.0]]
MODES = [("stream", False), ("stream", True), ("unary", False), ("unary", True), ("link", False), ("link", True)]


def linear() -> LinearModule:
    return LinearModule([Dof("x1"), Dof("x2")], STIFFNESS)


@pytest.fixture
def site():
    server = SiteServer(linear, "left")
    yield server
    server.stop(0)


def opened(address: str, **options) -> RemoteModule:
    module = RemoteModule(address, name="left", **options)
    module.open(Session(0.01, module.describe().dof_names))
    return module


def step(module: RemoteModule, n: int, displacement) -> np.ndarray:
    module.propose(n, Command(0.01 * n, np.asarray(displacement, float)))
    force = module.execute(n).force
    module.commit(n)
    return force


@pytest.mark.parametrize("transport, two_phase", MODES)
def test_a_remote_module_runs_steps_checkpoints_and_restores(site, transport, two_phase):
    module = opened(site.address, transport=transport, two_phase=two_phase, deadline_s=5)
    described = module.describe()
    assert (described.kind, described.dof_names) == ("linear", ("x1", "x2"))
    assert step(module, 0, [1e-3, 0.0]) == pytest.approx([2.0, -1.0])
    assert step(module, 1, [1e-3, 1e-3]) == pytest.approx([1.0, 1.0])
    state = module.checkpoint()
    assert json.loads(state)["committed_step"] == 1  # the noted commit of step 1 went out first
    module.propose(2, Command(0.02, np.array([5e-3, 0.0])))
    module.execute(2)
    module.restore(state)
    assert step(module, 3, [0.0, 1e-3]) == pytest.approx([-1.0, 2.0])
    stats = module.close()
    assert (stats["proposed"], stats["executed"], stats["committed"]) == (4, 4, 3)
    assert stats["wire_retries"] == 0
    module.disconnect()


def test_auto_takes_the_link_of_a_site_on_this_machine_and_the_stream_otherwise(site):
    assert opened(site.address).steps_on == "link"
    assert opened(site.address, network=Network()).steps_on == "stream"  # an emulated path is a TCP proxy
    undescribed = RemoteModule(site.address, name="left")
    undescribed.open(Session(0.01, ("x1", "x2")))
    assert undescribed.steps_on == "stream"  # auto goes by the site's Describe, and none was asked for
    server = SiteServer(linear, "nolink", link_listen=None)
    try:
        module = opened(server.address)
        assert module.steps_on == "stream" and step(module, 0, [1e-3, 0.0]) == pytest.approx([2.0, -1.0])
    finally:
        server.stop(0)


def test_auto_takes_no_tcp_link_whose_unix_socket_is_not_on_this_machine():
    """A site in a container behind a mapped loopback port: its Describe offers a Unix socket this filesystem does
    not have and a loopback TCP port that is the container's, not this machine's; only ``link`` insists on it."""
    server = SiteServer(linear, "contained")
    try:
        offers = RemoteModule(server.address, name="contained").describe().info[link.INFO_KEY].split(" ")
        Path(dict(zip(offers[::2], offers[1::2]))["unix"]).unlink()
        module = opened(server.address)
        assert module.steps_on == "stream" and step(module, 0, [1e-3, 0.0]) == pytest.approx([2.0, -1.0])
        insisting = opened(server.address, transport="link")
        assert insisting.steps_on == "link" and step(insisting, 0, [0.0, 1e-3]) == pytest.approx([-1.0, 2.0])
    finally:
        server.stop(0)


class CountingSpring(StepLedger):
    """1 DOF whose every application leaves a mark: force = k d + q * (applications so far).

    Applying a step twice would shift every later force by q, so the forces
    tell how many times each step was applied.
    """

    k, q = 1000.0, 0.5

    def __init__(self) -> None:
        super().__init__()
        self.applications = 0

    def describe(self) -> Description:
        return Description("test", (Dof("x"),))

    def _trial(self, step: int, command: Command):
        self.applications += 1
        return command.displacement, self.k * command.displacement + self.q * self.applications

    def _accept(self, step: int) -> None:
        """The mark is the state; nothing else to commit."""

    def _discard(self) -> None:
        """Nothing to discard."""


class DropReplyOnce(grpc.ServerInterceptor):
    """Lets the site execute step ``step``, then loses the reply once (the client sees UNAVAILABLE)."""

    def __init__(self, step: int) -> None:
        self.step = step
        self.dropped = 0

    def _lose(self, reply: pb.StepReply, context: grpc.ServicerContext) -> None:
        if reply.HasField("result") and reply.step == self.step and not self.dropped:
            self.dropped += 1
            context.abort(grpc.StatusCode.UNAVAILABLE, "reply lost on the way back")

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler_call_details.method.endswith("/Step"):
            def unary(request, context, behavior=handler.unary_unary):
                reply = behavior(request, context)
                self._lose(reply, context)
                return reply
            return handler._replace(unary_unary=unary)
        if handler_call_details.method.endswith("/Steps"):
            def stream(requests, context, behavior=handler.stream_stream):
                for reply in behavior(requests, context):
                    self._lose(reply, context)
                    yield reply
            return handler._replace(stream_stream=stream)
        return handler


@pytest.mark.parametrize("transport", ["stream", "unary"])
def test_a_step_resent_after_a_lost_reply_is_not_applied_twice(transport):
    springs: list[CountingSpring] = []
    dropper = DropReplyOnce(step=3)
    server = SiteServer(lambda: springs.append(CountingSpring()) or springs[-1], "lab", interceptors=[dropper])
    try:
        module = opened(server.address, transport=transport, deadline_s=5)
        d = 1e-3 * np.arange(1, 7)
        forces = [step(module, n, [d[n]])[0] for n in range(6)]
        stats = module.close()
    finally:
        server.stop(0)
    assert dropper.dropped == 1 and stats["wire_retries"] >= 1
    spring = springs[-1]
    assert spring.applications == 6
    assert forces == pytest.approx(CountingSpring.k * d + CountingSpring.q * np.arange(1, 7), abs=1e-12)
    assert stats["executed"] == 6 and stats["retried"] >= 1


class OtherVersionSite(pb_grpc.ModuleServicer):
    """A site that speaks protocol 2.0."""

    def Describe(self, request, context):
        return pb.DescribeReply(version=pb.ProtocolVersion(major=2, minor=3), site="future", kind="linear")


def test_a_site_of_another_major_version_is_refused():
    server = grpc.server(futures.ThreadPoolExecutor(2))
    pb_grpc.add_ModuleServicer_to_server(OtherVersionSite(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        module = RemoteModule(f"127.0.0.1:{port}", name="future", deadline_s=2)
        with pytest.raises(ModuleError) as info:
            module.describe()
        assert str(info.value) == (f"protocol version mismatch: the site future at 127.0.0.1:{port} speaks hybridsim "
                                   "protocol 2.3, this end speaks 1.0; run the same major version on both ends")
    finally:
        server.stop(0)


@pytest.mark.parametrize("address, cause", [
    ("127.0.0.1:{free_port}", "Connection refused"),
    ("no-such-site.invalid:50051", "no-such-site.invalid"),
])
def test_a_wrong_address_fails_within_the_deadline_naming_the_site_and_the_cause(address, cause):
    address = address.format(free_port=free_port())  # chosen when the test runs: each test worker collects alike
    module = RemoteModule(address, name="nowhere", deadline_s=1.0)
    start = time.monotonic()
    with pytest.raises(ModuleError) as info:
        module.describe()
    assert time.monotonic() - start < 1.5
    message = str(info.value)
    assert message.startswith(f"site nowhere at {address}: describe: site unreachable for 1 s: ")
    assert cause in message


def test_describe_waits_for_a_site_that_is_still_starting():
    port = free_port()
    servers: list[SiteServer] = []
    starter = threading.Timer(0.3, lambda: servers.append(SiteServer(linear, "late", f"127.0.0.1:{port}")))
    starter.start()
    try:
        assert RemoteModule(f"127.0.0.1:{port}", name="late", deadline_s=5).describe().dof_names == ("x1", "x2")
    finally:
        starter.join()
        for server in servers:
            server.stop(0)


@pytest.mark.parametrize("transport, two_phase", MODES)
def test_refused_commands_raise_step_refused_naming_the_site_and_the_next_step_runs(site, transport, two_phase):
    module = opened(site.address, transport=transport, two_phase=two_phase, deadline_s=5)
    for n, bad, reason in ((1, [1.0, 2.0, 3.0], "displacement has 3 values, the module has 2 DOFs"),
                           (2, [np.nan, 0.0], "displacement has non-finite values at DOF indices [0]")):
        with pytest.raises(StepRefused) as info:
            step(module, n, bad)
        assert info.value.step == n
        assert str(info.value) == f"step {n} refused: site left at {site.address}: {reason}"
    assert step(module, 3, [1e-3, 0.0]) == pytest.approx([2.0, -1.0])
    module.close()


class SlowSpring(LinearModule):
    """A linear module that takes ``delay_s`` to answer an execute."""

    delay_s = 1.0

    def _trial(self, step: int, command: Command):
        time.sleep(self.delay_s)
        return super()._trial(step, command)


@pytest.mark.parametrize("transport", ["stream", "unary", "link"])
def test_a_silent_site_raises_within_the_deadline(transport):
    server = SiteServer(lambda: SlowSpring([Dof("x1"), Dof("x2")], STIFFNESS), "slow")
    try:
        module = RemoteModule(server.address, name="slow", deadline_s=0.3, transport=transport)
        module.open(Session(0.01, ("x1", "x2")))
        module.propose(0, Command(0.0, np.zeros(2)))
        start = time.monotonic()
        with pytest.raises(ModuleError) as info:
            module.execute(0)
        assert time.monotonic() - start < 0.3 + 0.2
        assert str(info.value) == f"site slow at {server.address}: execute of step 0: no reply within the deadline of 0.3 s"
    finally:
        server.stop(0)
