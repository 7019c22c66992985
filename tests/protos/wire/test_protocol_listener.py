"""A lab protocol's listener (hybridsim.wire.protocols.base.ProtocolServer) and the step link's (hybridsim.wire.link)
under a client that opens too many connections and a process out of file descriptors (issue 31): a protocol's
refuses what is over its cap, and on both an accept that fails for want of descriptors is tried again instead of
ending the listener for good."""

from __future__ import annotations

import os
import resource
import socket
import threading
import time

import pytest

from hybridsim.wire import link
from hybridsim.wire.protocols.base import MAX_CONNECTIONS, ProtocolServer


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


def test_the_step_link_accepts_again_after_a_shortage_of_descriptors() -> None:
    """Before: the step link's accept loop ended at the first EMFILE; a client then waited for ever."""
    from functools import partial

    from hybridsim.modules.registry import build_module
    from hybridsim.wire.server import SiteServer

    site = SiteServer(partial(build_module, "linear", {"dofs": ["x"], "stiffness": [[1.0]]}), "s", "127.0.0.1:0")
    try:
        host, _, port = site._link.address.rpartition(":")  # type: ignore[union-attr]
        connected_without_descriptors((host, int(port))).close()  # the accept (or the next) meets EMFILE
        with socket.create_connection((host, int(port)), timeout=5.0) as client:
            client.sendall(b"\xff" * 64)  # not a HELLO: the link answers and closes
            assert b"INVALID_ARGUMENT" in client.recv(4096)  # never accepted: TimeoutError after 5 s
    finally:
        site.stop()
