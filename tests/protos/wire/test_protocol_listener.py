"""A site's listeners under a client that opens too many connections, connections that send nothing and a process
out of file descriptors (issue 31): a lab protocol's (hybridsim.wire.protocols.base.ProtocolServer), the step link's
(hybridsim.wire.link) and the gRPC port's (hybridsim.wire.server.SiteServer, which also serves site-control and
health).  Each refuses what is over its cap, closes a silent connection after its idle timeout, and tries an accept
that failed for want of descriptors again instead of ending the listener for good."""

from __future__ import annotations

import os
import resource
import socket
import threading
import time

from functools import partial

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from hybridsim.modules.registry import build_module
from hybridsim.wire import link
from hybridsim.wire.protocols import base
from hybridsim.wire.protocols.base import MAX_CONNECTIONS, ProtocolServer
from hybridsim.wire.server import SiteServer

LINEAR = partial(build_module, "linear", {"dofs": ["x"], "stiffness": [[1.0]]})


def greeting(connection: socket.socket, peer: str) -> None:
    """Say ok, then wait until the client leaves."""
    connection.sendall(b"ok")
    while connection.recv(64):
        pass


def served(address: tuple[str, int], timeout_s: float = 5.0) -> bool:
    with socket.create_connection(address, timeout=timeout_s) as client:
        try:
            return client.recv(2) == b"ok"
        except TimeoutError:
            return False


@pytest.fixture
def server():
    listening = ProtocolServer("test protocol", "127.0.0.1:0", greeting)
    yield listening
    listening.stop()


def test_connections_over_the_cap_are_closed_and_the_listener_serves_on(server) -> None:
    address = ("127.0.0.1", server.port)
    clients = [socket.create_connection(address, timeout=5.0) for _ in range(MAX_CONNECTIONS)]
    assert all(c.recv(2) == b"ok" for c in clients)
    with socket.create_connection(address, timeout=5.0) as extra:
        assert extra.recv(2) == b""  # closed at once: over the cap
    for c in clients:
        c.close()
    deadline = time.monotonic() + 5.0
    while server._connections and time.monotonic() < deadline:
        time.sleep(0.01)
    assert served(address)


def connected_without_descriptors(address: tuple[str, int]) -> socket.socket:
    """A client connected while this process (the listener's) has no file descriptor left, for a few retries."""
    client = socket.socket()  # its descriptor now: none is left when it connects
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        lowest_free = os.open(os.devnull, os.O_RDONLY)  # the number a new descriptor would take
        os.close(lowest_free)
        resource.setrlimit(resource.RLIMIT_NOFILE, (lowest_free, hard))  # no new descriptor at all
        client.connect(address)  # the kernel completes it; the listener's accept gets EMFILE
        time.sleep(5 * link.ACCEPT_RETRY_S)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    client.settimeout(5.0)
    return client


def test_an_accept_without_file_descriptors_is_tried_again(server) -> None:
    """Before: the accept loop took every OSError for a closed listener and stopped accepting for good."""
    address = ("127.0.0.1", server.port)
    client = connected_without_descriptors(address)
    assert client.recv(2) == b"ok"  # accepted once a descriptor was free again
    client.close()
    assert served(address)


def test_a_protocol_connection_that_sends_nothing_is_closed_after_the_idle_timeout(monkeypatch) -> None:
    """A half-open connection (its peer gone without a word) must not hold one of the listener's slots for ever."""
    monkeypatch.setattr(base, "IDLE_TIMEOUT_S", 0.3)  # read at each accept
    listening = ProtocolServer("test protocol", "127.0.0.1:0", greeting)
    try:
        with socket.create_connection(("127.0.0.1", listening.port), timeout=5.0) as silent:
            start = time.monotonic()
            assert silent.recv(2) == b"ok"
            assert silent.recv(64) == b""  # closed by the site: a TimeoutError after 5 s if it were not
            assert 0.25 < time.monotonic() - start < 4.0
    finally:
        listening.stop()


def test_the_step_link_accepts_again_after_a_shortage_of_descriptors() -> None:
    """Before: the step link's accept loop ended at the first EMFILE; a client then waited for ever."""
    site = SiteServer(LINEAR, "s", "127.0.0.1:0")
    try:
        host, _, port = site._link.address.rpartition(":")  # type: ignore[union-attr]
        connected_without_descriptors((host, int(port))).close()  # the accept (or the next) meets EMFILE
        with socket.create_connection((host, int(port)), timeout=5.0) as client:
            client.sendall(b"\xff" * 64)  # not a HELLO: the link answers and closes
            assert b"INVALID_ARGUMENT" in client.recv(4096)  # never accepted: TimeoutError after 5 s
    finally:
        site.stop()


def grpc_answer(address: str, timeout_s: float = 2.0) -> str:
    """The site's health check over a new channel: SERVING, or the gRPC status of the failed call."""
    with grpc.insecure_channel(address) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=timeout_s)
        except grpc.RpcError as exc:
            return exc.code().name
    return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)


@pytest.fixture(params=["address", "health_address"])
def grpc_port(request) -> Iterator[str]:
    """HOST:PORT of a site with a cap of 2 gRPC connections and an idle timeout of 0.5 s: its own gRPC port
    (Module, SiteControl, health) or its plaintext health port."""
    serving = SiteServer(LINEAR, "listener", link_listen=None, health_listen="127.0.0.1:0", max_connections=2,
                         idle_timeout_s=0.5)
    yield getattr(serving, request.param)
    serving.stop()


def test_grpc_connections_over_the_cap_are_closed_and_the_site_serves_on(grpc_port) -> None:
    port = grpc_port
    address = ("127.0.0.1", int(port.rpartition(":")[2]))
    held = [socket.create_connection(address, timeout=5.0) for _ in range(2)]
    assert all(c.recv(9) for c in held)  # the site's SETTINGS frame: accepted, each holds one of the 2 places
    with socket.create_connection(address, timeout=5.0) as extra:
        assert extra.recv(9) == b""  # closed at once: over the cap
    assert grpc_answer(port) == "UNAVAILABLE"
    for c in held:
        c.close()
    deadline = time.monotonic() + 5.0
    while (answer := grpc_answer(port)) != "SERVING" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert answer == "SERVING"


def test_a_grpc_connection_that_sends_nothing_is_closed_after_the_idle_timeout(grpc_port) -> None:
    port = grpc_port
    with socket.create_connection(("127.0.0.1", int(port.rpartition(":")[2])), timeout=5.0) as silent:
        start, received = time.monotonic(), b""
        while chunk := silent.recv(4096):  # a TimeoutError after 5 s if the site kept it
            received += chunk
        assert 0.4 < time.monotonic() - start < 4.0
    # gRPC's GOAWAY before it closed: the idle timeout's or the handshake's, both at 0.5 s here
    assert b"connection idle" in received or b"handshake timeout" in received


def test_the_grpc_port_accepts_again_after_a_shortage_of_descriptors(grpc_port) -> None:
    port = grpc_port
    connected_without_descriptors(("127.0.0.1", int(port.rpartition(":")[2]))).close()
    assert grpc_answer(port, 5.0) == "SERVING"
