"""What the labs' protocols share: a TCP listener, the servicer's session as trials and commits, the byte helpers.

The labs' protocols (``openfresco/``, ``simcor/`` beside this file) carry no session, no step number, no
credentials and no way to report an error.  A :class:`ChannelSession` gives them a session of the site's :class:`~hybridsim.wire.server.ModuleServicer`: steps are numbered here, and every
propose, execute and commit goes through the servicer's step logic, so that the checks, limits, holds
and refusals are those of gRPC and a retried execute is answered from the module's record.  A refusal
ends the session: its message goes to the site's log (these protocols cannot carry it) and the
connection closes; the site keeps serving.

These protocols have no authentication: a :class:`ProtocolServer` listens on loopback only unless told
that its network is trusted (tunnel them, e.g. over SSH or WireGuard).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable

import numpy as np

from hybridsim.wire.contract import Command, Description, ModuleError, Session, StepResult
from hybridsim.wire.link import accept, close_socket
from hybridsim.wire.sockets import kernel_timeout, timed_out

log = logging.getLogger("hybridsim.site")

_QUICKACK = getattr(socket, "TCP_QUICKACK", None)


def quickack(connection: socket.socket) -> None:
    """Acknowledge at once what arrives next (Linux clears TCP_QUICKACK after a while: re-arm it after each
    receive).  A peer that leaves Nagle's algorithm on (OpenSees' genericClient) otherwise waits for the
    delayed ACK of its previous message: 40-200 ms per step instead of well under 1 ms."""
    if _QUICKACK is not None:
        try:
            connection.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)
        except OSError:
            pass


def receive(connection: socket.socket, count: int, what: str) -> bytes | None:
    """Exactly ``count`` bytes (TCP_QUICKACK re-armed after each receive); None when the peer closed the
    connection before the first byte; ConnectionError when it closed in the middle of ``what``."""
    data = bytearray(count)
    return bytes(data) if receive_into(connection, memoryview(data), what) else None


def receive_into(connection: socket.socket, buffer: memoryview, what: str) -> bool:
    """Fill ``buffer`` (a message's bytes, read in place: no copy, one ``recv_into`` when the message is there
    whole), re-arming TCP_QUICKACK after each receive; False when the peer closed the connection before the first
    byte; ConnectionError when it closed in the middle of ``what``."""
    count, got = len(buffer), 0
    while got < count:
        chunk = connection.recv_into(buffer[got:])
        quickack(connection)
        if not chunk:
            if not got:
                return False
            raise ConnectionError(f"the client closed the connection in the middle of {what} ({got} of {count} bytes)")
        got += chunk
    return True


def connect(address: str, deadline_s: float, label: str) -> socket.socket:
    """A TCP connection to ``address`` (HOST:PORT) with Nagle off, tried again while it is refused (a server
    that is still starting) until ``deadline_s`` (s) has passed; ModuleError naming ``label`` if none."""
    host, _, port = address.rpartition(":")
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            connection = socket.create_connection((host.strip("[]"), int(port)), timeout=deadline_s)
            break
        except ConnectionRefusedError as exc:
            if time.monotonic() + 0.05 > deadline:
                raise ModuleError(f"{label}: cannot connect within {deadline_s:g} s: {exc.strerror} (nothing listens "
                                  f"at {address}: start its server first)") from None
            time.sleep(0.05)
        except (OSError, ValueError) as exc:
            raise ModuleError(f"{label}: cannot connect: {exc}") from None
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


MAX_CONNECTIONS = 8
"""connections one protocol listener serves at once; another is closed at once (logged), so that a client opening
many cannot exhaust the site's threads and file descriptors (a session needs one)"""
IDLE_TIMEOUT_S = 600.0
"""a connection that sends nothing for this long is closed: a half-open one whose peer is gone without a word"""
class ProtocolServer:
    """Serves one protocol on ``listen`` (HOST:PORT, port 0: a free one): one thread per connection runs
    ``handle(connection, peer)``; the connection is closed when it returns or raises, or after
    :data:`IDLE_TIMEOUT_S` of silence; at most :data:`MAX_CONNECTIONS` at once; an accept that fails for want of
    file descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) is tried again, never ends the listener."""

    def __init__(self, name: str, listen: str, handle: Callable[[socket.socket, str], None]) -> None:
        host, _, port = listen.rpartition(":")
        self.name = name
        self._handle = handle
        try:
            self._listener = socket.create_server((host.strip("[]"), int(port)),
                                                  family=socket.AF_INET6 if ":" in host else socket.AF_INET)
        except OSError as exc:
            raise ModuleError(f"cannot serve {name} on {listen}: {exc.strerror}") from None
        self.port = self._listener.getsockname()[1]
        self.address = f"{host}:{self.port}"
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, name=f"{name}-accept", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while (accepted := accept(self._listener, self.name)) is not None:
            connection, peer = accepted
            with self._lock:
                full = len(self._connections) >= MAX_CONNECTIONS
                if not full:
                    self._connections.add(connection)
            if full:
                log.warning("%s: connection from %s:%s refused: %d connections are open, the most a listener serves",
                            self.name, peer[0], peer[1], MAX_CONNECTIONS)
                close_socket(connection)
                continue
            kernel_timeout(connection, IDLE_TIMEOUT_S)  # no poll before each receive and send of a message
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            quickack(connection)
            threading.Thread(target=self._serve, args=(connection, f"{peer[0]}:{peer[1]}"),
                             name=f"{self.name}-{peer[1]}", daemon=True).start()

    def _serve(self, connection: socket.socket, peer: str) -> None:
        try:
            self._handle(connection, peer)
        except OSError as exc:
            log.warning("%s: connection from %s lost: %s", self.name, peer,
                        f"nothing arrived for {IDLE_TIMEOUT_S:g} s" if timed_out(exc) else exc)
        except Exception:  # noqa: BLE001 - one connection's failure must not stop the site
            log.exception("%s: connection from %s failed", self.name, peer)
        finally:
            with self._lock:
                self._connections.discard(connection)
            close_socket(connection)

    def stop(self) -> None:
        """Stop accepting and close every connection."""
        close_socket(self._listener)
        self._thread.join(2.0)
        with self._lock:
            connections, self._connections = set(self._connections), set()
        for connection in connections:
            close_socket(connection)


class SessionEnded(Exception):
    """The session ended (a refusal, logged by the servicer); the protocol closes its connection."""


class ChannelSession:
    """One session of the site's servicer, as a lab's protocol sees it: numbered proposals, executes and commits.

    Every call goes through ``servicer.channel_step`` (the step logic of gRPC); a failure is logged as the
    gRPC service reports it, ends the session and raises :class:`SessionEnded`.
    """

    def __init__(self, servicer: object, protocol: str, peer: str, dt: float | None) -> None:
        """``dt``: the step the site's configuration gives this protocol's sessions (s); None: it gives none (the
        protocol carries none: the session's dt is a placeholder, ``Session.dt_declared`` False)."""
        self._servicer = servicer
        self.protocol, self.peer = protocol, peer
        self.description: Description = servicer.describe_module()  # type: ignore[attr-defined]
        self.n = len(self.description.dofs)
        self.dt = dt or 1.0
        """the session's step (s): the k-th step's time is k dt when the protocol sends none"""
        self._session = Session(self.dt, self.description.dof_names, run_id=f"{protocol} at {peer}",
                                iterating=True, dt_declared=dt is not None)
        """iterating: a lab's client may send several trials of one step (an implicit integrator's Newton
        iterations), each taking the one before back"""
        self._token = ""
        self.step = 0
        """the last step proposed (0: none)"""
        self.executed: StepResult | None = None
        """the result of the last step executed"""
        self.committed = 0
        """the last step committed (0: none)"""

    def open(self) -> None:
        self._token = self._call(lambda: self._servicer.open_channel_session(self._session, self.peer))

    def close(self, reason: str) -> None:
        if self._token:
            self._servicer.close_channel_session(self._token, reason)  # type: ignore[attr-defined]
            self._token = ""

    @property
    def uncommitted(self) -> bool:
        """Whether the last executed step awaits its commit."""
        return self.executed is not None and self.executed.step > self.committed

    def propose(self, command: Command, execute: bool, commit_first: bool = False) -> StepResult | None:
        """Propose ``command`` as a new step (first committing an executed one when ``commit_first``), and
        execute it when ``execute``; the result if executed."""
        commit = self.executed.step if commit_first and self.uncommitted else None  # type: ignore[union-attr]
        self.step += 1
        result = self._step(self.step, commit, command, execute)
        if commit is not None:
            self.committed = commit
        return result

    def execute(self) -> StepResult:
        """Execute the last step proposed (a retried execute is answered from the module's record)."""
        result = self._step(self.step, None, None, True)
        assert result is not None
        return result

    def commit(self) -> None:
        """Commit the last step executed; nothing when it is committed already."""
        if self.uncommitted:
            step = self.executed.step  # type: ignore[union-attr]
            self._step(step, step, None, False)
            self.committed = step

    def pretest(self, amplitude: float) -> np.ndarray:
        """The module's initial stiffness by central differences of ``amplitude`` (m, rad) at each DOF
        (trials, never committed), then zero displacement committed: the coordinator's pre-test."""
        stiffness = np.zeros((self.n, self.n))
        for j in range(self.n):
            probe = np.zeros(self.n)
            probe[j] = amplitude
            plus = self.propose(Command(0.0, probe), execute=True).force.copy()  # type: ignore[union-attr]
            minus = self.propose(Command(0.0, -probe), execute=True).force.copy()  # type: ignore[union-attr]
            stiffness[:, j] = (plus - minus) / (2 * amplitude)
        self.propose(Command(0.0, np.zeros(self.n)), execute=True)
        self.commit()
        return stiffness

    def _step(self, step: int, commit: int | None, command: Command | None, execute: bool) -> StepResult | None:
        result = self._call(lambda: self._servicer.channel_step(self._token, step, commit, command, execute))
        if result is not None:
            self.executed = result
        return result

    def _call(self, call: Callable[[], object]) -> object:
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - every failure ends the session, as a gRPC status would report it
            message = self._servicer.reported(exc)  # type: ignore[attr-defined]
            self.close(f"ended after a refusal on the {self.protocol} channel of {self.peer}: {message}")
            raise SessionEnded(message) from None
