"""A site's module served over OpenSees/OpenFresco's SimApp protocol (``hybridsim site KIND --openfresco HOST:PORT``).

Two kinds of client connect to the same address; the first bytes tell them apart:

*element client* (OpenSees' ``genericClient`` element, OpenFresco's experimental elements and
``ECSimAdapter``-style clients): the sizes message, then actions 1-15, 98, 99 as OpenFresco's
``startSimAppElemServer`` answers them.  The initial and tangent stiffness (12, 13) are the module's
initial stiffness, measured by a pre-test when the session opens (logged); damping and mass (14, 15)
come from the module's description (zero where it has none).

*lab client* (OpenFresco's ``ShadowExpSite``, as ``startLabServer`` of an ``ActorExpSite`` answers it):
a 4-byte endianness probe, ``[1, tag, version]`` answered ``[0, tag, 2.8]``, ``[2, dataSize]`` with the
two 5-int size IDs, then 3, 6, 5 each step and ``[99, tag]`` answered ``[4, tag]``.  A client whose first
int32 is 1 and that sends nothing more for :data:`PROBE_WAIT_S` is a lab client (an element client sends
its 11 sizes at once).

Each connection is one session of the site's servicer (:class:`~hybridsim.wire.protocols.base.ChannelSession`):
``setTrialResponse`` proposes and executes a step, unless its displacement equals the uncommitted trial's
(genericClient sends the same displacement twice per alpha-OS step: the actuators move once);
``commitState`` commits it.  A refusal (limits, a hold, a bad vector) ends the session with a line in the
site's log; the protocol has no error message, so from then on every request that waits for numbers is
answered with NaN (:meth:`_Client.refused`: nothing reaches the module) until the client says DIE, leaves or
asks nothing for :data:`REFUSED_IDLE_S`.
Closing the connection instead would hang OpenSees, whose TCP channel reads a closed socket forever; NaN ends
its analysis: a Newton step fails its convergence test, an explicit step runs on NaN to the script's end.
A wrong action code, a sizes message that does not fit or a client gone mid-message closes the connection;
the site keeps serving.
"""

from __future__ import annotations

import logging
import math
import select
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hybridsim.wire.contract import FORCE_CONTROLLED, Command, ModuleError
from hybridsim.wire.protocols.openfresco import codec
from hybridsim.wire.protocols.base import ChannelSession, ProtocolServer, SessionEnded, receive

log = logging.getLogger("hybridsim.site")

REFUSED_IDLE_S = 5.0
"""after a refusal, how long the site waits for the client's next request before it closes the connection (s): a
client that asks nothing more (a script that checks nothing) is let go; OpenSees asks at once"""
PROBE_WAIT_S = 0.25
"""how long the site waits for more bytes after a first int32 of 1 before taking the client for a ShadowExpSite (s)"""


@dataclass(frozen=True)
class SimAppOptions:
    """The site configuration's ``[openfresco]`` table."""

    dt: float | None = None
    """the client's integration step (s); default: the module's control sample, else 1 s (the protocol has none),
    which no rate limit uses (a site with ``[limits] velocity`` refuses the session)"""
    pretest_amplitude: float = 1e-5
    """the pre-test's probe (m, rad) that measures the stiffness an element client asks for"""
    tag: int = 1
    """the site's tag in a lab server's replies"""

    @classmethod
    def from_table(cls, table: Any) -> "SimAppOptions":
        if table is None:
            return cls()
        if not isinstance(table, Mapping):
            raise ModuleError("[openfresco] must be a table, e.g. [openfresco] dt = 0.01")
        unknown = sorted(set(table) - {"dt", "pretest_amplitude", "tag"})
        if unknown:
            raise ModuleError(f"unknown key openfresco.{unknown[0]}; allowed: dt, pretest_amplitude, tag")
        for key in ("dt", "pretest_amplitude"):
            value = table.get(key)
            if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ModuleError(f"openfresco.{key} must be a positive number (s for dt, m for the amplitude)")
        tag = table.get("tag", 1)
        if not isinstance(tag, int) or isinstance(tag, bool):
            raise ModuleError("openfresco.tag must be an integer (the site's tag in a lab server's replies)")
        return cls(table.get("dt"), float(table.get("pretest_amplitude", 1e-5)), tag)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """``np.array_equal`` of two vectors (NaN differs from everything, -0.0 equals 0.0) in a tenth of its time
    for the few values of a step: Python's float comparison of their lists."""
    return a.shape == b.shape and a.tolist() == b.tolist()


def _same_force(a: Command, b: Command) -> bool:
    """Both commands carry the same force targets (or none)."""
    return (a.force is None) == (b.force is None) and (a.force is None or _same(a.force, b.force))


class SimAppServer:
    """Serves the servicer's module to SimApp clients on ``listen`` (see the module docstring)."""

    protocol = "openfresco"

    def __init__(self, servicer: Any, listen: str, table: Any = None, max_message_bytes: int = 4 * 2**20) -> None:
        self._servicer = servicer
        self._options = SimAppOptions.from_table(table)
        self._max_data_size = max_message_bytes // 8
        self._server = ProtocolServer(self.protocol, listen, self._connection)
        self.address, self.port = self._server.address, self._server.port

    def stop(self) -> None:
        self._server.stop()

    def _dt(self) -> float | None:
        """The step the site gives its SimApp sessions (s): ``[openfresco] dt``, else its control sample; None:
        neither (the protocol carries none)."""
        return self._options.dt or self._servicer.describe_module().control_dt

    def _connection(self, connection: socket.socket, peer: str) -> None:
        first = receive(connection, codec.INT.size, "the sizes message")
        if first is None:
            return
        if codec.INT.unpack(first)[0] == 1 and not select.select([connection], [], [], PROBE_WAIT_S)[0]:
            _LabClient(self, connection, peer).run()
            return
        rest = receive(connection, codec.SIZES.size - codec.INT.size, "the sizes message")
        if rest is None:
            raise ConnectionError("the client closed the connection in the middle of the sizes message")
        _ElementClient(self, connection, peer).run(codec.Sizes.unpack(first + rest))


class GenericTCPServer(SimAppServer):
    """Serves the servicer's module as a lab's controller that OpenFresco's ECGenericTCP control drives
    (``hybridsim site plant --generic-tcp HOST:PORT``): the sizes message, optional init-file lines
    (16385-byte messages whose first byte is 2, logged), then ``3`` and ``6`` each control step and ``99`` at
    the end.  The protocol has no commit: each ``3`` is a new step (the same target twice is two samples)
    and commits the one before; its time is the message's when the client sends one (sizeCtrl time = 1),
    else k dt."""

    protocol = "generic-tcp"

    def _connection(self, connection: socket.socket, peer: str) -> None:
        data = receive(connection, codec.SIZES.size, "the sizes message")
        if data is not None:
            _ControllerClient(self, connection, peer).run(codec.Sizes.unpack(data))


class _Client:
    """One connection: its sizes, its session, the trial it proposed."""

    role = ""

    def __init__(self, server: SimAppServer, connection: socket.socket, peer: str) -> None:
        self.server, self.connection, self.peer = server, connection, peer
        self.site = server._servicer.site
        self.session = ChannelSession(server._servicer, f"OpenFresco {self.role}", peer, server._dt())
        self.sizes: codec.Sizes | None = None
        self.command: Command | None = None
        self._trial: tuple[bytes, Command] | None = None
        """the last setTrialResponse's bytes and the command made of them"""
        self._buffer = bytearray()
        """what every request of the session is read into (``8 dataSize`` bytes once the sizes are known)"""

    def start(self, sizes: codec.Sizes, matrices: bool) -> bool:
        """Check ``sizes`` and open the session; False (logged) when they do not fit."""
        forced = self.session.description.info.get(FORCE_CONTROLLED, "")
        refusal = sizes.refusal(self.session.n, self.server._max_data_size, matrices,
                                len(forced.split(",")) if forced else 0)
        if refusal:
            log.warning("site %s: OpenFresco %s at %s refused: %s (sizes %s)", self.site, self.role, self.peer,
                        refusal, sizes)
            return False
        self.sizes = sizes
        self._buffer = bytearray(8 * sizes.data_size)
        try:
            self.session.open()
        except SessionEnded:  # another session is open (logged): answered as any refusal
            self.refused()
            return False
        return True

    def serve(self) -> None:
        """Answer requests until the client says DIE or leaves."""
        assert self.sizes is not None
        try:
            while True:
                message = codec.read_vector(self.connection, self.sizes.data_size, into=self._buffer)
                if message is None:
                    self.session.close(f"the OpenFresco {self.role} at {self.peer} closed the connection")
                    return
                if not self.answer(codec.action_of(message), message, self.sizes):
                    return
        except SessionEnded:
            self.refused()
        except ConnectionError as exc:
            self.session.close(f"lost: {exc}")
            log.warning("site %s: OpenFresco %s at %s: %s", self.site, self.role, self.peer, exc)
        except OSError:  # the idle timeout (logged by the listener): the session must not outlive its connection
            self.session.close(f"the OpenFresco {self.role} at {self.peer} went silent past the idle timeout")
            raise

    def answer(self, action: int | None, message: np.ndarray, sizes: codec.Sizes) -> bool:
        """Act on one request (``action`` its code, None if not a whole number); False ends the connection."""
        raise NotImplementedError

    def refused(self) -> None:
        """The session ended on a refusal (logged): answer every request that waits for numbers with NaN, ignore
        the others, until the client says DIE (a lab client's is acknowledged) or leaves."""
        assert self.sizes is not None
        size = self.sizes.data_size
        self.connection.settimeout(REFUSED_IDLE_S)
        try:
            while (message := codec.read_vector(self.connection, size)) is not None:
                action = codec.action_of(message)
                if action in codec.REPLIED:
                    self.send(np.full(size, np.nan).astype(codec.DOUBLE).tobytes())
                elif action in (codec.SHUTDOWN, codec.DIE):
                    if self.role == _LabClient.role:
                        self.send(codec.padded(np.array([codec.RECEIVED, self.server._options.tag]), size))
                    return
        except (ConnectionError, TimeoutError):
            return

    def trial(self, message: np.ndarray) -> None:
        """setTrialResponse: a new step, unless the displacement is the uncommitted trial's, or the committed
        state's at its time (genericClient's first trial, at t = 0 and rest)."""
        assert self.sizes is not None
        raw = message.tobytes()
        if self._trial is not None and self._trial[1] is self.command and raw == self._trial[0]:
            return  # the same message again (alpha-OS sends each trial twice): same command, same time
        parts = codec.unpack_parts(message, self.sizes.ctrl, 1)
        time = float(parts["time"][0]) if parts["time"].size else 0.0
        command = Command(time, parts["disp"], parts["vel"] if parts["vel"].size else None,
                          parts["accel"] if parts["accel"].size else None, parts["force"] if parts["force"].size else None)
        last = self.command
        if last is not None and _same(command.displacement, last.displacement) and _same_force(command, last) and (
                self.session.uncommitted or command.time == last.time):
            return  # the same trial again (alpha-OS sends it twice), or the committed state it is at
        self.command = command
        self._trial = (raw, command)
        self.session.propose(command, execute=True)

    def daq(self) -> dict[str, np.ndarray]:
        """What the module measured at the last step, by response name."""
        result, n = self.session.executed, self.session.n
        zeros = np.zeros(n)
        command = self.command
        return {"disp": zeros if result is None else result.displacement,
                "vel": zeros if command is None or command.velocity is None else command.velocity,
                "accel": zeros if command is None or command.acceleration is None else command.acceleration,
                "force": zeros if result is None else result.force,
                "time": np.array([0.0 if command is None else command.time])}

    def send(self, data: bytes) -> None:
        self.connection.sendall(data)

    def wrong(self, message: np.ndarray) -> bool:
        """Log a wrong action code and end the session (after it the stream cannot be trusted)."""
        reason = f"wrong action code {message[0]:g} (expected one of {sorted(codec.ACTIONS)})"
        log.warning("site %s: OpenFresco %s at %s refused: %s", self.site, self.role, self.peer, reason)
        self.session.close(f"ended: {reason}")
        return False


class _ElementClient(_Client):
    """A genericClient-like client: actions 1-15, 98, 99 as OpenFresco's SimAppElemServer answers them."""

    role = "element client"

    def __init__(self, server: SimAppServer, connection: socket.socket, peer: str) -> None:
        super().__init__(server, connection, peer)
        self.stiffness = np.zeros((self.session.n, self.session.n))
        self._matrices: dict[int, bytes] = {}
        """the messages of the matrices asked for, by action: the session's matrices do not change"""

    def run(self, sizes: codec.Sizes) -> None:
        """Serve the client that sent ``sizes`` as its first message."""
        if not self.start(sizes, matrices=True):
            return
        try:
            amplitude = self.server._options.pretest_amplitude
            self.stiffness = self.session.pretest(amplitude)
        except SessionEnded:
            self.refused()
            return
        self.command = Command(0.0, np.zeros(self.session.n))  # the rest state the pre-test committed
        log.info("site %s: OpenFresco element client at %s: initial and tangent stiffness by a pre-test "
                 "(probe %g): diagonal %s", self.site, self.peer, amplitude,
                 np.array2string(np.diag(self.stiffness), precision=6))
        self.serve()

    def answer(self, action: int | None, message: np.ndarray, sizes: codec.Sizes) -> bool:
        n = self.session.n
        description = self.session.description
        if action == codec.SET_TRIAL:
            self.trial(message)
        elif action == codec.COMMIT:
            self.session.commit()
        elif action in (codec.OPEN, codec.SETUP, codec.EXECUTE):
            pass  # open and setup do nothing here (as in OpenFresco); a trial executes when it arrives
        elif action == codec.GET_DAQ:
            self.send(codec.pack_parts(self.daq(), sizes.daq, 0, sizes.data_size))
        elif action in (codec.GET_DISP, codec.GET_VEL, codec.GET_ACCEL, codec.GET_FORCE, codec.GET_TIME):
            name = codec.RESPONSES[action - codec.GET_DISP]
            self.send(codec.padded(self.daq()[name], sizes.data_size))
        elif action in (codec.GET_INITIAL_STIFF, codec.GET_TANGENT_STIFF, codec.GET_DAMP, codec.GET_MASS):
            if action not in self._matrices:  # (genericClient asks for the damping twice a step)
                matrix = {codec.GET_DAMP: description.damping, codec.GET_MASS: description.mass}.get(action,
                                                                                                 self.stiffness)
                self._matrices[action] = codec.matrix_message(np.zeros((n, n)) if matrix is None else matrix,
                                                              sizes.data_size)
            self.send(self._matrices[action])
        elif action in (codec.SHUTDOWN, codec.DIE):
            self.session.close(f"closed by the OpenFresco element client at {self.peer} "
                               f"({codec.ACTIONS[action]})")
            return False
        else:
            return self.wrong(message)
        return True


class _LabClient(_Client):
    """A ShadowExpSite: the lab-server handshake, then 3, 6, 5 each step, [99, tag] answered [4, tag]."""

    role = "lab client"

    def run(self) -> None:
        self.send(codec.INT.pack(1))  # the endianness probe, answered in this machine's order
        hello = codec.read_vector(self.connection, codec.NETWORK_DATA_SIZE, "the open message")
        if hello is None:
            return
        tag = self.server._options.tag
        if codec.action_of(hello) != codec.OPEN:
            log.warning("site %s: OpenFresco lab client at %s refused: expected open [1, tag, version], got "
                        "action %r", self.site, self.peer, hello[0])
            return
        self.send(codec.padded(np.array([codec.COMPLETED, tag, codec.VERSION]), codec.NETWORK_DATA_SIZE))
        if hello[2] != codec.VERSION:
            log.warning("site %s: OpenFresco lab client at %s refused: it speaks OpenFresco %g, this site %g",
                        self.site, self.peer, hello[2], codec.VERSION)
            return
        setup = codec.read_vector(self.connection, codec.NETWORK_DATA_SIZE, "the setup message")
        if setup is None:
            return
        if codec.action_of(setup) != codec.SETUP:
            log.warning("site %s: OpenFresco lab client at %s refused: expected setup [2, dataSize], got "
                        "action %r", self.site, self.peer, setup[0])
            return
        ids = receive(self.connection, 2 * 5 * codec.INT.size, "the setup's size IDs")
        if ids is None:
            return
        if not (np.isfinite(setup[1]) and -2**31 <= setup[1] < 2**31):  # the sizes message holds a 32-bit int
            log.warning("site %s: OpenFresco lab client at %s refused: dataSize %g is not a 32-bit whole number",
                        self.site, self.peer, setup[1])
            return
        sizes = codec.Sizes.unpack(ids + codec.INT.pack(int(setup[1])))
        log.info("site %s: OpenFresco lab client (ShadowExpSite %g) at %s: sizes %s", self.site, hello[1],
                 self.peer, sizes)
        if self.start(sizes, matrices=False):
            self.serve()

    def answer(self, action: int | None, message: np.ndarray, sizes: codec.Sizes) -> bool:
        if action == codec.SET_TRIAL:
            self.trial(message)
        elif action == codec.GET_DAQ:
            self.send(codec.pack_parts(self.daq(), sizes.daq, 0, sizes.data_size))
        elif action == codec.COMMIT:
            self.session.commit()
        elif action == codec.DIE:
            self.send(codec.padded(np.array([codec.RECEIVED, self.server._options.tag]), sizes.data_size))
            self.session.close(f"closed by the OpenFresco lab client at {self.peer}")
            return False
        else:
            return self.wrong(message)
        return True



class _ControllerClient(_Client):
    """ECGenericTCP's side of a lab controller (see GenericTCPServer)."""

    role = "generic TCP client"

    def run(self, sizes: codec.Sizes) -> None:
        """Serve the controller client that sent ``sizes`` as its first message."""
        if self.start(sizes, matrices=False):
            self.serve()

    def answer(self, action: int | None, message: np.ndarray, sizes: codec.Sizes) -> bool:
        if action == codec.SET_TRIAL:
            parts = codec.unpack_parts(message, sizes.ctrl, 1)
            time = float(parts["time"][0]) if parts["time"].size else (self.session.step + 1) * self.session.dt
            self.command = Command(time, parts["disp"])
            self.session.propose(self.command, execute=True, commit_first=True)
        elif action == codec.GET_DAQ:
            if self.session.executed is None:  # a reading before any command: the module's reading at rest
                self.command = Command(0.0, np.zeros(self.session.n))
                self.session.propose(self.command, execute=True)
            self.send(codec.pack_parts(self.daq(), sizes.daq, 0, sizes.data_size))
        elif action == codec.COMMIT:
            self.session.commit()
        elif action == codec.DIE:
            self.session.commit()
            self.session.close(f"closed by the generic TCP client at {self.peer} (DIE)")
            return False
        elif not self._init_line(message):
            return self.wrong(message)
        return True

    def _init_line(self, message: np.ndarray) -> bool:
        """Read and log the rest of an init-file line (a 16385-byte message starting with byte 2); False if
        ``message`` is not the start of one."""
        raw = message.astype(codec.DOUBLE).tobytes()
        if raw[0] != codec.SETUP or len(raw) >= codec.INIT_LINE_BYTES:
            return False
        rest = receive(self.connection, codec.INIT_LINE_BYTES - len(raw), "an init-file line")
        if rest is None:
            raise ConnectionError("the client closed the connection in the middle of an init-file line")
        text = (raw + rest)[1:].split(b"\0", 1)[0].decode("ascii", errors="replace")
        log.info("site %s: generic TCP client at %s: init-file line %r (not used by this site)", self.site,
                 self.peer, text)
        return True
