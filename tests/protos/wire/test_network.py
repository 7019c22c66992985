"""Network emulation (hybridsim.wire.network): the proxy's delays against their closed forms on a raw TCP echo, and
a reply later than the deadline (every channel across the network, against a real site process:
tests/coordinator/test_network_runs.py)."""

from __future__ import annotations

import math
import socket
import statistics
import threading
import time

import numpy as np
import pytest

from hybridsim.modules.linear import LinearModule
from hybridsim.wire.contract import Command, Dof, ModuleError, Session
from hybridsim.wire.network import Network, NetworkEmulator
from hybridsim.wire.remote import RemoteModule
from hybridsim.wire.server import SiteServer

STIFFNESS = [[2000.0, -1000.0], [-1000.0, 2000.0]]
MESSAGE = b"x" * 200
"""a 10-DOF step's size: one TCP segment each way"""


@pytest.fixture
def echo():
    """A raw TCP echo server on 127.0.0.1 (one connection at a time): its address."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with connection:
                while data := connection.recv(65536):
                    connection.sendall(data)

    threading.Thread(target=serve, daemon=True).start()
    yield f"127.0.0.1:{server.getsockname()[1]}"
    server.close()


def round_trips_s(address: str, count: int) -> list[float]:
    """Wall time of ``count`` echoes of MESSAGE through ``address`` (s), one after the other."""
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        times = []
        for _ in range(count):
            start = time.perf_counter()
            connection.sendall(MESSAGE)
            got = 0
            while got < len(MESSAGE):
                chunk = connection.recv(65536)
                assert chunk, "the connection was closed"
                got += len(chunk)
            times.append(time.perf_counter() - start)
    return times


@pytest.mark.parametrize("round_trip_s, jitter_s", [(0.005, 0.0), (0.020, 0.004)])
def test_every_round_trip_takes_the_emulated_round_trip_within_the_jitter(echo, round_trip_s, jitter_s):
    """A round trip is two one-way delays, each half the round trip ± the jitter: never shorter than
    round_trip_s - 2 jitter_s; scheduling only adds, so the median stays within a millisecond above
    round_trip_s (the uniform draws' median is the round trip itself)."""
    with NetworkEmulator(Network(round_trip_s, jitter_s, seed=1)) as network:
        times = round_trips_s(network.route(echo), 60)
        stats = network.stats()
    assert 120 <= stats["network_segments"] <= 122 and stats["network_lost_segments"] == 0  # and the FINs
    assert min(times) >= round_trip_s - 2 * jitter_s
    assert round_trip_s - jitter_s <= statistics.median(times) <= round_trip_s + 1e-3 + jitter_s


def test_a_lost_segment_arrives_late_by_the_retransmission_timeout_doubling_as_tcp_does(echo):
    """Loss p per segment, two segments per round trip.  Which round trips lost a segment, and how many times, is
    the emulator's count (read after each round trip), so the machine's scheduling cannot blur it (at load 20 an
    on-time round trip took 28-130 ms, more than a 50 ms resend): a share 1 - (1 - p)^2 of the round trips lose
    one; none is early (k lost transmissions add at least k r: r, 2r, 4r ... for repeated losses of one segment,
    and the two ways add); none loses a byte; and a round trip with one loss takes r longer than one without,
    measured against the round trips of the same run that lost nothing (medians, robust to scheduling)."""
    p, resend, count = 0.2, 0.05, 100
    with NetworkEmulator(Network(0.002, loss=p, retransmit_s=resend, seed=4)) as network:
        host, _, port = network.route(echo).rpartition(":")
        times, losses = [], []
        with socket.create_connection((host, int(port)), timeout=10) as connection:
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for n in range(count):
                message, lost = n.to_bytes(4, "big") * 50, network.stats()["network_lost_segments"]
                start = time.perf_counter()
                connection.sendall(message)
                echoed = b""
                while len(echoed) < len(message):
                    echoed += connection.recv(65536)
                times.append(time.perf_counter() - start)
                assert echoed == message  # late, never missing, in order
                losses.append(network.stats()["network_lost_segments"] - lost)
            stats = network.stats()  # before the FINs, which travel (and may be lost) too
    excess, lost = np.array(times) - 0.002, np.array(losses)
    late = lost > 0
    expected = count * (1 - (1 - p) ** 2)
    sd = math.sqrt(count * (1 - (1 - p) ** 2) * (1 - p) ** 2)
    assert abs(late.sum() - expected) < 4 * sd, (late.sum(), expected)
    assert np.all(excess[late] >= lost[late] * resend - 1e-3), np.sort(excess[late] / lost[late])
    once = lost == 1
    assert once.sum() >= 10
    added = np.median(excess[once]) - np.median(excess[~late])
    assert abs(added - resend) < 3e-3, (added, np.sort(excess[once]), np.median(excess[~late]))
    assert stats["network_lost_segments"] == lost.sum()
    assert stats["network_max_resend_wait_s"] >= resend


def test_the_network_refuses_a_negative_or_impossible_path():
    with pytest.raises(ValueError, match="round_trip_s must be a non-negative number"):
        Network(round_trip_s=-0.01)
    with pytest.raises(ValueError, match="jitter_s must be a non-negative number"):
        Network(0.01, jitter_s=float("nan"))
    with pytest.raises(ValueError, match=r"jitter_s \(0.006 s\) may be at most half of round_trip_s \(0.01 s\)"):
        Network(0.01, jitter_s=0.006)
    with pytest.raises(ValueError, match="loss must be at most 0.5"):
        Network(0.01, loss=0.9)
    assert Network(0.02).first_retransmit_s == pytest.approx(0.22)  # Linux: the RTT plus its 200 ms minimum RTO


@pytest.fixture
def site():
    server = SiteServer(lambda: LinearModule([Dof("x1"), Dof("x2")], STIFFNESS), "far")
    yield server
    server.stop(0)


def test_a_reply_later_than_the_deadline_is_a_deadline_error_not_a_resent_step(site):
    """A resend wait past the call's deadline: the call fails at the deadline naming it, as a silent site does."""
    module = RemoteModule(site.address, name="far", transport="link", deadline_s=0.5,
                          network=Network(0.002, loss=0.5, retransmit_s=2.0, seed=0))
    with pytest.raises(ModuleError) as info:
        module.open(Session(0.01, ("x1", "x2")))
        for n in range(20):
            module.propose(n, Command(0.01 * n, np.zeros(2)))
            module.execute(n)
            module.commit(n)
    assert "no reply within the deadline of 0.5 s" in str(info.value)
    module.disconnect()


def test_the_emulated_path_accepts_again_after_a_shortage_of_descriptors(echo):
    """Before: the emulator's accept loop took EMFILE for a closed listener and stopped forwarding for good.  (The
    connection made during the shortage may be closed: the emulator could not reach the target then.)"""
    from tests.protos.wire.test_protocol_listener import connected_without_descriptors

    with NetworkEmulator(Network(0.001, 0.0, seed=1)) as network:
        route = network.route(echo)
        host, _, port = route.rpartition(":")
        connected_without_descriptors((host, int(port))).close()
        assert round_trips_s(route, 1)  # served: a TimeoutError after 10 s if it was never accepted
