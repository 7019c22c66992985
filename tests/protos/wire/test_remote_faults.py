"""Exactly-once steps over a network that fails: a real site daemon behind a TCP relay that cuts connections.

(The relay sits in front of the gRPC service, or, for transport "link", of the site's step link.)

The relay stands for the internet between the coordinator and a lab: every connection through it can be
cut at any moment, and it can swallow the site's next reply (the step was executed, the coordinator never
heard).  The coordinator's RemoteModule must resend within its deadline, with growing pauses, and the site
must answer a resent step from its record: every step is executed exactly once (the site's own counters)
and every force is K d.
"""

from __future__ import annotations

import socket
import threading
import time

import numpy as np
import pytest

from hybridsim.wire.daemons import LocalDaemon
from hybridsim.wire.remote import RemoteModule
from hybridsim.wire import link
from hybridsim.wire.contract import Command, ModuleError, Session
from tests.conftest import free_port

CONFIG = {"dofs": ["x1", "x2"], "stiffness": [[2000.0, -1000.0], [-1000.0, 2000.0]]}
K = np.array(CONFIG["stiffness"])


class CuttingRelay:
    """A TCP relay from 127.0.0.1:PORT to ``upstream`` whose connections can be cut (a flaky network)."""

    def __init__(self, upstream: str) -> None:
        host, port = upstream.rsplit(":", 1)
        self._upstream = (host, int(port))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self._lock = threading.Lock()
        self._connections: list[tuple[socket.socket, socket.socket]] = []
        self._swallow = threading.Event()
        self.cuts = 0
        self.swallowed = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        """Close every open connection, both ways, as a network failure would."""
        with self._lock:
            connections, self._connections = self._connections, []
            self.cuts += bool(connections)
        for pair in connections:
            for sock in pair:
                _shut(sock)

    def swallow_next_reply(self) -> None:
        """Cut the connection at the next bytes from the site, before they reach the coordinator."""
        self._swallow.set()

    def close(self) -> None:
        self._listener.close()
        self.cut()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
                server = socket.create_connection(self._upstream)
            except OSError:
                return
            with self._lock:
                self._connections.append((client, server))
            threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, from_site: bool) -> None:
        try:
            while data := source.recv(65536):
                if from_site and self._swallow.is_set():
                    self._swallow.clear()
                    self.swallowed += 1
                    self.cut()
                    return
                sink.sendall(data)
        except OSError:
            pass
        _shut(source)
        _shut(sink)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


@pytest.fixture(scope="module")
def daemon():
    with LocalDaemon("linear", CONFIG, name="lab") as site:
        yield site


def displacement(n: int) -> np.ndarray:
    return 1e-3 * np.array([np.sin(0.1 * n), np.cos(0.07 * n)])


@pytest.mark.parametrize("transport", ["stream", "unary", "link"])
def test_steps_through_cut_connections_and_lost_replies_are_each_executed_once(daemon, transport):
    if transport == "link":  # the relay cuts the step link; the gRPC calls (open, close) go direct
        described = RemoteModule(daemon.address, name="lab").describe()
        relay = CuttingRelay(link.link_address(described.info))
        module = RemoteModule(daemon.address, name="lab", deadline_s=10, transport=transport,
                              link_address=relay.address)
    else:
        relay = CuttingRelay(daemon.address)
        module = RemoteModule(relay.address, name="lab", deadline_s=10, transport=transport)
    module.open(Session(0.01, ("x1", "x2")))
    steps, forces = 300, []
    for n in range(steps):
        if n % 10 == 3:
            relay.swallow_next_reply()  # the step reaches the site and executes; its reply is lost
        elif n % 10 == 7:
            relay.cut()  # the connection is gone before the step is sent
        module.propose(n, Command(0.01 * n, displacement(n)))
        forces.append(module.execute(n).force)
        module.commit(n)
    stats = module.close()
    module.disconnect()
    cuts, swallowed = relay.cuts, relay.swallowed
    relay.close()
    expected = np.array([K @ displacement(n) for n in range(steps)])
    np.testing.assert_allclose(forces, expected, rtol=1e-15, atol=0)
    assert (stats["proposed"], stats["executed"], stats["committed"]) == (steps, steps, steps)
    # a lost reply comes back from the site's record (execute, and the proposal with it, answered again)
    assert stats["retried"] >= swallowed >= 25 and cuts >= 55
    assert stats["wire_retries"] >= swallowed  # gRPC reconnects by itself for a call not yet sent
    print(f"{transport}: {steps} steps through {cuts} cut connections ({swallowed} lost replies): "
          f"{stats['wire_retries']:g} resends, {stats['retried']:g} answers from the site's record, each step "
          "executed once")


def test_retries_back_off_within_the_deadline_and_the_step_is_not_confirmed():
    deadline_s = 1.0
    module = RemoteModule(f"127.0.0.1:{free_port()}", name="gone", deadline_s=deadline_s)
    start = time.monotonic()
    with pytest.raises(ModuleError, match="site unreachable for 1 s"):
        module.describe()
    elapsed = time.monotonic() - start
    # pauses of 0.02, 0.04, 0.08, 0.16, 0.32 s fit in 1 s, the next (0.5 s, the cap) would not: five resends,
    # where a fixed 0.02 s pause would make about fifty
    assert 3 <= module.stats["wire_retries"] <= 6
    assert 0.5 < elapsed < deadline_s + 0.3
