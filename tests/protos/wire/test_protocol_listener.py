"""A lab protocol's listener (hybridsim.wire.protocols.base.ProtocolServer) under a client that opens too many
connections and a process out of file descriptors (issue 31): it refuses what is over its cap, and an accept
that fails for want of descriptors is tried again instead of ending the listener for good."""

from __future__ import annotations

import os
import resource
import socket
import threading
import time

import pytest

from hybridsim.wire.protocols import base
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


def test_an_accept_without_file_descriptors_is_tried_again(server) -> None:
    """Before: the accept loop took every OSError for a closed listener and stopped accepting for good."""
    address = ("127.0.0.1", server.port)
    client = socket.socket()  # its descriptor now: none is left when it connects
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) - 1, hard))
        client.connect(address)  # the kernel completes it; the listener's accept gets EMFILE
        time.sleep(5 * base.ACCEPT_RETRY_S)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    client.settimeout(5.0)
    assert client.recv(2) == b"ok"  # accepted once a descriptor was free again
    client.close()
    assert served(address)
