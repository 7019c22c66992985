"""The site's gRPC server, spoken to with raw hybridsim.v1 stubs over 127.0.0.1.

The hosted module is a 2-DOF linear spring pair K = [[2, -1], [-1, 2]] kN/m,
so every restoring force below is K d worked by hand.
"""

from __future__ import annotations

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from hybridsim.v1 import module_pb2 as pb
from hybridsim.v1 import module_pb2_grpc as pb_grpc
from hybridsim.wire import codec
from hybridsim.modules.base import StepLedger
from hybridsim.wire.contract import Command, Description, Dof, StepRefused
from hybridsim.modules.linear import LinearModule
from hybridsim.wire.server import SiteServer

STIFFNESS = [[2000.0, -1000.0], [-1000.0, 2000.0]]
V1 = pb.ProtocolVersion(major=1, minor=0)
V2 = pb.ProtocolVersion(major=2, minor=0)


def linear() -> LinearModule:
    return LinearModule([Dof("x1"), Dof("x2")], STIFFNESS)


@pytest.fixture
def site():
    server = SiteServer(linear, "left", max_message_bytes=64 * 1024)
    yield server
    server.stop(0)


@pytest.fixture
def channel(site):
    with grpc.insecure_channel(site.address) as channel:
        yield channel


@pytest.fixture
def stub(channel):
    return pb_grpc.ModuleStub(channel)


def open_session(stub) -> str:
    return stub.Open(pb.OpenRequest(version=V1, dt=0.01, dof_names=["x1", "x2"]), timeout=5).session_id


def refusal(call, *args) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call(*args, timeout=5)
    return info.value


def test_serves_health_and_reflection(channel):
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "hybridsim.v1.Module"):
        assert health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status == \
            health_pb2.HealthCheckResponse.SERVING
    services = ProtoReflectionDescriptorDatabase(channel).get_services()
    assert {"hybridsim.v1.Module", "grpc.health.v1.Health"} <= set(services)


def test_unary_calls_run_a_step_of_the_module(stub):
    described = stub.Describe(pb.DescribeRequest(version=V1), timeout=5)
    assert (described.version.major, described.site, described.kind) == (1, "left", "linear")
    assert [(d.name, d.kind) for d in described.dofs] == [("x1", "translation"), ("x2", "translation")]
    token = open_session(stub)
    stub.Propose(pb.ProposeRequest(session_id=token, step=0, command=pb.Command(time=0.01, displacement=[1e-3, 2e-3])),
                 timeout=5)
    result = stub.Execute(pb.ExecuteRequest(session_id=token, step=0), timeout=5).result
    # K d = [2*1 - 2, -1 + 2*2] N for d in mm and K in kN/m
    assert (result.step, list(result.displacement)) == (0, [1e-3, 2e-3])
    assert list(result.force) == pytest.approx([0.0, 3.0], abs=1e-12)
    stub.Commit(pb.CommitRequest(session_id=token, step=0), timeout=5)
    stats = stub.Close(pb.CloseRequest(session_id=token), timeout=5).stats
    assert (stats["proposed"], stats["executed"], stats["committed"]) == (1, 1, 1)


def test_the_stream_commits_the_previous_step_and_answers_a_resent_step_from_the_record(stub):
    token = open_session(stub)

    def message(step: int) -> pb.StepRequest:
        request = pb.StepRequest(session_id=token, step=step, execute=True,
                                 command=pb.Command(time=0.01 * step, displacement=[1e-3 * step, 0.0]))
        if step:
            request.commit_step = step - 1
        return request

    first = list(stub.Steps(iter([message(0), message(1), message(2)]), timeout=5))
    assert [list(r.result.force) for r in first] == [[0.0, 0.0], pytest.approx([2.0, -1.0]), pytest.approx([4.0, -2.0])]
    # the reply of step 2 "was lost": the client sends the same message again on a new stream
    again = list(stub.Steps(iter([message(2)]), timeout=5))
    assert list(again[0].result.force) == list(first[2].result.force)
    stats = stub.Close(pb.CloseRequest(session_id=token), timeout=5).stats
    # step 2 executed once; the resent commit, proposal and execute were each answered from the record
    assert (stats["proposed"], stats["executed"], stats["committed"], stats["retried"]) == (3, 3, 2, 3)


def test_a_coordinator_of_another_major_version_is_refused_and_the_next_one_is_served(stub):
    for call, request in ((stub.Describe, pb.DescribeRequest(version=V2)),
                          (stub.Open, pb.OpenRequest(version=V2, dt=0.01, dof_names=["x1", "x2"]))):
        error = refusal(call, request)
        assert error.code() is grpc.StatusCode.FAILED_PRECONDITION
        assert "speaks hybridsim protocol 2.0, this end speaks 1.0" in error.details()
    assert stub.Describe(pb.DescribeRequest(version=V1), timeout=5).kind == "linear"


@pytest.mark.parametrize("command, expected", [
    (pb.Command(displacement=[1.0, 2.0, 3.0]), "step 4 refused: displacement has 3 values, the module has 2 DOFs"),
    (pb.Command(displacement=[1.0, float("nan")]), "step 4 refused: displacement has non-finite values at DOF indices [1]"),
    (pb.Command(displacement=[1.0, 2.0], velocity=[float("inf"), 0.0]),
     "step 4 refused: velocity has non-finite values at DOF indices [0]"),
])
def test_bad_vectors_are_refused_and_the_session_goes_on(stub, command, expected):
    token = open_session(stub)
    error = refusal(stub.Propose, pb.ProposeRequest(session_id=token, step=4, command=command))
    assert (error.code(), error.details()) == (grpc.StatusCode.INVALID_ARGUMENT, expected)
    assert dict(error.trailing_metadata())[codec.REFUSED_STEP_KEY] == "4"
    reply = stub.Step(pb.StepRequest(session_id=token, step=4, command=pb.Command(displacement=[0.0, 1e-3]),
                                     execute=True), timeout=5)
    assert list(reply.result.force) == pytest.approx([-1.0, 2.0])


def test_malformed_and_oversized_messages_are_refused_and_the_site_stays_up(channel, stub):
    raw = channel.unary_unary("/hybridsim.v1.Module/Propose")
    error = refusal(raw, b"\xff\xff\xff")
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith("malformed hybridsim.v1.ProposeRequest message")
    big = pb.ProposeRequest(step=0, command=pb.Command(displacement=np.ones(10_000))).SerializeToString()
    error = refusal(raw, big)  # 80 kB against the site's 64 KiB limit
    assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "larger than max" in error.details()
    assert stub.Echo(pb.EchoRequest(payload=b"still here"), timeout=5).payload == b"still here"


def test_calls_need_the_open_session_and_a_new_session_gets_a_fresh_module(stub):
    error = refusal(stub.Execute, pb.ExecuteRequest(session_id="", step=0))
    assert (error.code(), error.details()) == (grpc.StatusCode.FAILED_PRECONDITION,
                                               "site left has no open session: call Open first")
    first = open_session(stub)
    stub.Step(pb.StepRequest(session_id=first, step=7, command=pb.Command(displacement=[0.0, 0.0]), execute=True),
              timeout=5)
    second = open_session(stub)
    error = refusal(stub.Commit, pb.CommitRequest(session_id=first, step=7))
    assert error.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert f"session {first} is not the open session of site left (a newer session {second}" in error.details()
    # step 0 after step 7: accepted, because the new session has a module of its own
    reply = stub.Step(pb.StepRequest(session_id=second, step=0, command=pb.Command(displacement=[1e-3, 1e-3]),
                                     execute=True), timeout=5)
    assert list(reply.result.force) == pytest.approx([1.0, 1.0])


class StrokeLimitedSpring(StepLedger):
    """1 DOF, k = 1 kN/m, refuses |d| > 10 mm; a command of exactly 5 mm breaks its sensor."""

    def describe(self) -> Description:
        return Description("test", (Dof("x"),))

    def _check(self, step: int, command: Command) -> None:
        if abs(command.displacement[0]) > 0.010:
            raise StepRefused(step, f"stroke {command.displacement[0]:.3f} m exceeds the 0.010 m limit")

    def _trial(self, step: int, command: Command):
        if command.displacement[0] == 0.005:
            raise ZeroDivisionError("sensor read 0 counts")
        return command.displacement, 1000.0 * command.displacement

    def _accept(self, step: int) -> None:
        """Stateless."""

    def _discard(self) -> None:
        """Stateless."""


def test_a_refusal_of_the_module_and_a_failure_of_the_module_become_statuses():
    server = SiteServer(StrokeLimitedSpring, "lab")
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = pb_grpc.ModuleStub(channel)
            token = stub.Open(pb.OpenRequest(version=V1, dt=0.01, dof_names=["x"]), timeout=5).session_id
            step = pb.StepRequest(session_id=token, step=1, command=pb.Command(displacement=[0.02]), execute=True)
            error = refusal(stub.Step, step)
            assert (error.code(), error.details()) == (grpc.StatusCode.FAILED_PRECONDITION,
                                                       "step 1 refused: stroke 0.020 m exceeds the 0.010 m limit")
            assert dict(error.trailing_metadata())[codec.REFUSED_STEP_KEY] == "1"
            step.step, step.command.displacement[0] = 2, 0.005
            error = refusal(stub.Step, step)
            assert (error.code(), error.details()) == (grpc.StatusCode.INTERNAL,
                                                       "the module raised ZeroDivisionError: sensor read 0 counts")
            step.step, step.command.displacement[0] = 3, 0.002
            assert list(stub.Step(step, timeout=5).result.force) == pytest.approx([2.0])
    finally:
        server.stop(0)


def test_stopping_the_server_closes_the_open_session():
    hosted: list[LinearModule] = []

    def factory() -> LinearModule:
        hosted.append(linear())
        return hosted[-1]

    server = SiteServer(factory, "left")
    with grpc.insecure_channel(server.address) as channel:
        open_session(pb_grpc.ModuleStub(channel))
    assert hosted[-1].session.dt == 0.01
    server.stop(0)
    with pytest.raises(Exception, match="not open"):
        hosted[-1].session
