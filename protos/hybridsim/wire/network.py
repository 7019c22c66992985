"""Network emulation: a TCP proxy in front of a site that delays, jitters and loses what passes through it.

Every way a step travels (gRPC unary calls and the ``Steps`` stream, the step link on TCP, OpenFresco's
SimApp and UI-SIMCOR's LabVIEW protocols) is a TCP byte stream, so one proxy emulates a distant lab
for all of them, on loopback, without touching the machine's network::

    with NetworkEmulator(Network(round_trip_s=0.020, jitter_s=0.002, loss=0.001, seed=1)) as network:
        address = network.route("127.0.0.1:50051")   # connect here instead: 127.0.0.1:PORT of a proxy

What each chunk of bytes read from one side (one TCP segment or a few, as the sender wrote them) meets
on its way to the other side:

- **latency**: half the round trip, ``round_trip_s / 2``, one way;
- **jitter**: the one-way delay of each chunk varies uniformly within ``± jitter_s`` (as netem's
  ``delay D J``), so a round trip lies within ``round_trip_s ± 2 jitter_s``;
- **loss**: each segment of ``MSS_BYTES`` (the chunk's ``ceil(len / MSS_BYTES)`` segments) is lost
  with probability ``loss``.  TCP never loses bytes: it sends the segment again.  A lockstep protocol
  has one message in flight, so no duplicate ACKs come to trigger a fast retransmit: Linux sends it
  again after its tail-loss probe or retransmission timeout, about the smoothed round trip plus its
  200 ms minimum (``retransmit_s``, default ``round_trip_s + 0.2``), doubling at each further loss of
  the same segment (exponential backoff).  So a lost packet becomes a **late** message, never a missing
  one, and everything sent after it on that connection waits behind it (TCP delivers in order:
  head-of-line blocking).  The gRPC channels and the link retry only an unreachable site
  (:mod:`hybridsim.wire.remote`'s retry rule); a late reply is waited for until the call's deadline,
  and one later than the deadline is a deadline error, never a step sent twice.

Not emulated: a lost SYN (connections open once, before the steps), bandwidth limits, and the loss of
ACKs (a later ACK covers them).  Linux's netem does the same at the kernel's queue where the kernel has
it (``sch_netem``); :func:`netem_refusal` says whether it does here.
"""

from __future__ import annotations

import math
import queue
import random
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any

from hybridsim.wire.link import accept, close_socket

MSS_BYTES = 1448
"""bytes of a TCP segment on an Ethernet path (1500-byte MTU, IPv4 and TCP headers with timestamps)"""
RTO_MIN_S = 0.2
"""Linux's minimum retransmission timeout (TCP_RTO_MIN, s)"""
MAX_BACKOFFS = 6
"""retransmissions of one segment counted at most (64 times the first timeout, well past any deadline)"""
_CHUNK_BYTES = 65536


@dataclass(frozen=True)
class Network:
    """An emulated network path between a coordinator and a site (see the module's docstring)."""

    round_trip_s: float = 0.0
    """mean round trip (s); each way takes half"""
    jitter_s: float = 0.0
    """each chunk's one-way delay varies uniformly within ± this (s); at most half the round trip"""
    loss: float = 0.0
    """probability that a TCP segment is lost (then sent again after ``retransmit_s``), in [0, 0.5]"""
    retransmit_s: float | None = None
    """wait before a lost segment is sent again (s); None: ``round_trip_s`` + 0.2 s (Linux's minimum RTO)"""
    seed: int | None = None
    """seed of the jitter and loss draws (None: a fresh one)"""

    def __post_init__(self) -> None:
        for name in ("round_trip_s", "jitter_s", "loss"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a non-negative number, not {value!r}")
        if self.jitter_s > self.round_trip_s / 2:
            raise ValueError(f"jitter_s ({self.jitter_s:g} s) may be at most half of round_trip_s "
                             f"({self.round_trip_s:g} s): a one-way delay cannot be negative")
        if self.loss > 0.5:
            raise ValueError(f"loss must be at most 0.5 (a fraction of the segments), not {self.loss:g}")
        if self.retransmit_s is not None and not (math.isfinite(self.retransmit_s) and self.retransmit_s > 0):
            raise ValueError(f"retransmit_s must be a positive number of seconds, not {self.retransmit_s!r}")

    @property
    def first_retransmit_s(self) -> float:
        """The wait before a lost segment is sent the first time again (s)."""
        return self.retransmit_s if self.retransmit_s is not None else self.round_trip_s + RTO_MIN_S

    @property
    def idle(self) -> bool:
        """Whether the path adds nothing (no delay, no jitter, no loss)."""
        return self.round_trip_s == 0 and self.jitter_s == 0 and self.loss == 0

    def describe(self) -> str:
        """'20 ms round trip ± 2 ms jitter, 0.1 % loss' (for logs and summaries)."""
        words = f"{1e3 * self.round_trip_s:g} ms round trip"
        if self.jitter_s:
            words += f" ± {1e3 * self.jitter_s:g} ms jitter"
        if self.loss:
            words += f", {100 * self.loss:g} % loss (resent after {1e3 * self.first_retransmit_s:g} ms)"
        return words


class _Path:
    """One direction's draws: when a chunk read now is delivered, in order after the chunks before it."""

    def __init__(self, network: Network, rng: random.Random, counters: dict[str, float], lock: threading.Lock):
        self._network, self._rng, self._counters, self._lock = network, rng, counters, lock
        self._last = 0.0

    def due(self, read_at: float, size: int) -> float:
        """The wall time (time.monotonic, s) at which ``size`` bytes read at ``read_at`` reach the other side."""
        net = self._network
        with self._lock:  # one generator for the emulator: its draws, and so a seeded run, do not depend on threads
            one_way = net.round_trip_s / 2 + (self._rng.uniform(-net.jitter_s, net.jitter_s) if net.jitter_s else 0.0)
            resent = 0.0
            segments = max(1, -(-size // MSS_BYTES))
            lost = 0
            if net.loss:
                for _ in range(segments):
                    wait, timeout = 0.0, net.first_retransmit_s
                    for _ in range(MAX_BACKOFFS):
                        if self._rng.random() >= net.loss:
                            break
                        lost += 1
                        wait += timeout
                        timeout *= 2
                    resent = max(resent, wait)
            self._counters["segments"] += segments
            self._counters["lost_segments"] += lost
            self._counters["max_resend_wait_s"] = max(self._counters["max_resend_wait_s"], resent)
        due = max(self._last, read_at + max(one_way, 0.0) + resent)
        self._last = due
        return due


class _Connection:
    """One proxied connection: two directions, each a reader that timestamps chunks and a writer that
    sends them when due; closed when both directions have ended or either fails."""

    def __init__(self, client: socket.socket, server: socket.socket, up: _Path, down: _Path,
                 on_close: Any) -> None:
        self._sockets = (client, server)
        self._on_close = on_close
        self._ended = 0
        self._lock = threading.Lock()
        self._closed = False
        for source, sink, path, name in ((client, server, up, "up"), (server, client, down, "down")):
            pending: queue.SimpleQueue[tuple[float, bytes | None]] = queue.SimpleQueue()
            threading.Thread(target=self._read, args=(source, path, pending), name=f"netem-{name}-read",
                             daemon=True).start()
            threading.Thread(target=self._write, args=(sink, pending), name=f"netem-{name}-write",
                             daemon=True).start()

    def _read(self, source: socket.socket, path: _Path, pending: queue.SimpleQueue) -> None:
        while True:
            try:
                data = source.recv(_CHUNK_BYTES)
            except OSError:
                data = b""
            now = time.monotonic()
            if not data:  # the FIN travels like a segment, behind the data before it
                pending.put((path.due(now, 0), None))
                return
            pending.put((path.due(now, len(data)), data))

    def _write(self, sink: socket.socket, pending: queue.SimpleQueue) -> None:
        try:
            while True:
                due, data = pending.get()
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                if data is None:
                    sink.shutdown(socket.SHUT_WR)
                    break
                sink.sendall(data)
        except OSError:
            self.close()
            return
        with self._lock:
            self._ended += 1
            both = self._ended == 2
        if both:
            self.close()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for sock in self._sockets:
            close_socket(sock)
        self._on_close(self)


class NetworkProxy:
    """Listens on 127.0.0.1 (port ``port``, 0: a free one) and forwards every connection to ``target``
    (HOST:PORT) across the emulated ``network``; ``address`` is where to connect instead of the target."""

    def __init__(self, target: str, network: Network, rng: random.Random, counters: dict[str, float],
                 lock: threading.Lock, port: int = 0) -> None:
        host, _, target_port = target.rpartition(":")
        if not host or not target_port.isdigit():
            raise ValueError(f"network emulation goes through TCP: give HOST:PORT, not {target!r}")
        self.target = (host.strip("[]"), int(target_port))
        self._network, self._rng, self._counters, self._lock = network, rng, counters, lock
        self._listener = socket.create_server(("127.0.0.1", port))
        self.address = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self._connections: set[_Connection] = set()
        self._guard = threading.Lock()
        self._thread = threading.Thread(target=self._accept, name="netem-accept", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while (accepted := accept(self._listener, "network emulator")) is not None:  # None: closed; EMFILE waits
            client, _ = accepted
            try:
                server = socket.create_connection(self.target, timeout=10.0)
                server.settimeout(None)
            except OSError:
                close_socket(client)  # the site is not there: the client sees its connection closed, as without us
                continue
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            paths = [_Path(self._network, self._rng, self._counters, self._lock) for _ in range(2)]
            with self._guard:
                self._connections.add(_Connection(client, server, *paths, on_close=self._forget))

    def _forget(self, connection: _Connection) -> None:
        with self._guard:
            self._connections.discard(connection)

    def close(self) -> None:
        """Stop accepting and close every connection."""
        close_socket(self._listener)
        self._thread.join(2.0)
        with self._guard:
            connections = list(self._connections)
        for connection in connections:
            connection.close()


class NetworkEmulator:
    """The emulated path to one site: a :class:`NetworkProxy` per address of the site (its gRPC service,
    its step link, a lab protocol's port), made on first use; one seeded generator and one set of counters."""

    def __init__(self, network: Network) -> None:
        self.network = network
        self._rng = random.Random(network.seed)
        self._lock = threading.Lock()
        self._proxies: dict[str, NetworkProxy] = {}
        self.counters: dict[str, float] = {"segments": 0, "lost_segments": 0, "max_resend_wait_s": 0.0}
        """segments that passed (both ways), lost transmissions among them, the longest wait for a resend (s)"""

    def route(self, address: str, port: int = 0) -> str:
        """The loopback address through which ``address`` (HOST:PORT) is reached across the emulated path (a
        proxy on 127.0.0.1:``port`` when it is the first route to ``address``; 0: a free port)."""
        if address not in self._proxies:
            self._proxies[address] = NetworkProxy(address, self.network, self._rng, self.counters, self._lock, port)
        return self._proxies[address].address

    def stats(self) -> dict[str, float]:
        """The counters, named for a run's summary (``network_segments``, ...)."""
        with self._lock:
            return {f"network_{key}": float(value) for key, value in self.counters.items()}

    def close(self) -> None:
        """Close every proxy (and so every connection through it)."""
        proxies, self._proxies = list(self._proxies.values()), {}
        for proxy in proxies:
            proxy.close()

    def __enter__(self) -> "NetworkEmulator":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def netem_refusal() -> str | None:
    """Why Linux's netem cannot emulate the network here (None: it can): tried in a network namespace of its
    own, so nothing on the machine's own loopback changes."""
    try:
        done = subprocess.run(["unshare", "--net", "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot run tc in a network namespace of its own: {exc}"
    if done.returncode == 0:
        return None
    return (f"`tc qdisc add dev lo root netem` fails: {done.stderr.strip() or done.stdout.strip()} "
            "(the kernel has no sch_netem, or no permission to add it)")
