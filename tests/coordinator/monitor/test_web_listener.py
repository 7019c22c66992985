"""The monitor page's listener (hybridsim.coordinator.monitor.web) under a client that opens too many connections,
a connection that sends nothing and a process out of file descriptors (issue 31): real sockets on loopback."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from hybridsim.coordinator.monitor import web
from hybridsim.coordinator.monitor.web import MonitorHandler, MonitorWebServer
from tests.protos.wire.test_protocol_listener import connected_without_descriptors


@pytest.fixture
def page(monkeypatch) -> Iterator[tuple[str, int]]:
    """A page with a cap of 2 connections and an idle timeout of 0.3 s, watching a coordinator that is not there."""
    monkeypatch.setattr(web, "MAX_CONNECTIONS", 2)
    monkeypatch.setattr(MonitorHandler, "timeout", 0.3)
    server = MonitorWebServer(("127.0.0.1", 0), "127.0.0.1:1")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield "127.0.0.1", server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join(5.0)


def state(address: tuple[str, int]) -> int:
    """The status of GET /api/state."""
    connection = http.client.HTTPConnection(*address, timeout=5.0)
    try:
        connection.request("GET", "/api/state")
        return connection.getresponse().status
    finally:
        connection.close()


def test_connections_over_the_cap_are_closed_and_the_page_serves_on(page) -> None:
    held = [socket.create_connection(page, timeout=5.0) for _ in range(2)]
    with socket.create_connection(page, timeout=5.0) as extra:
        assert extra.recv(64) == b""  # closed at once: over the cap (a TimeoutError after 5 s if it were served)
    for c in held:
        c.close()
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        try:
            assert state(page) == 200
            return
        except (ConnectionError, http.client.RemoteDisconnected):
            time.sleep(0.05)  # the held connections' threads have not yet given their places back
    pytest.fail("the page did not serve again once the held connections closed")


def test_a_connection_that_sends_nothing_is_closed_after_the_idle_timeout(page) -> None:
    with socket.create_connection(page, timeout=5.0) as silent:
        start = time.monotonic()
        assert silent.recv(64) == b""  # closed by the page: a TimeoutError after 5 s if it were kept
        assert 0.25 < time.monotonic() - start < 4.0


def test_the_page_accepts_again_after_a_shortage_of_descriptors(page, monkeypatch) -> None:
    # a descriptor another thread frees may let the accept through during the 0.5 s shortage, before the request
    monkeypatch.setattr(MonitorHandler, "timeout", 5.0)
    with connected_without_descriptors(page) as client:
        client.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        reply = b""
        while chunk := client.recv(4096):  # a TimeoutError after 5 s if it was never accepted
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 200")
    assert state(page) == 200
