"""The integrating side of the SimApp protocol: hybridsim drives an OpenSees or OpenFresco server.

``server`` says which kind listens at the address:

``adapter``      an OpenSees process with an ``adapter`` element (as OpenFresco's ECSimAdapter drives it):
                 sizes ``[n,0,0,0,0, n,0,0,n,0, dataSize]``; each step ``[3, d]`` then ``[10]`` answered with
                 ``[daqDisp, daqForce]``; no commit (every trial becomes a committed state of its model);
                 ``[99]`` ends its process.
``elem-server``  OpenFresco's ``startSimAppElemServer``/``startSimAppSiteServer`` (or a hybridsim site's
                 ``--openfresco``): sizes ``[n,n,n,0,1, n,0,0,n,0, dataSize]``; each step ``[3, d, v, a, t]``,
                 ``[6]`` answered with ``[daqDisp, daqForce]``, ``[5]`` at the commit; ``[99]`` at the end.
``lab-server``   OpenFresco's ``startLabServer`` (an ActorExpSite; or a hybridsim site's ``--openfresco``): the
                 ShadowExpSite handshake (endianness int, ``[1, tag, 2.8]``, ``[2, dataSize]`` and the two size
                 IDs), then as ``elem-server``; ``[99, tag]`` is answered ``[4, tag]``.
``generic-tcp``  a lab's own controller as OpenFresco's ECGenericTCP control drives it (or a hybridsim site's
                 ``--generic-tcp``, e.g. the virtual plant): sizes ``[n,0,0,0,1, n,0,0,n,0, dataSize]``; each
                 step ``[3, d, t]`` then ``[6]`` answered with ``[daqDisp, daqForce]``; no commit (the next
                 step commits it); ``[99]`` at the end.

Every receive has the client's deadline; a timeout or a lost connection is a ModuleError naming the address.
"""

from __future__ import annotations

import socket
from typing import Literal

import numpy as np

from hybridsim.wire.channels.base import Call, StepMessage
from hybridsim.wire.contract import ModuleError, StepResult
from hybridsim.wire.protocols.openfresco import codec
from hybridsim.wire.protocols.base import connect, quickack

Server = Literal["adapter", "elem-server", "lab-server", "generic-tcp"]
SERVERS: tuple[Server, ...] = ("adapter", "elem-server", "lab-server", "generic-tcp")
COMMITS: tuple[Server, ...] = ("elem-server", "lab-server")
"""the servers that take a commit (the others commit every trial they are given)"""


class SimAppClient:
    """One connection to a SimApp server of kind ``server`` for ``n`` DOFs at ``address`` (HOST:PORT): a
    channel (:class:`hybridsim.wire.channels.base.Channel`) whose steps are SimApp messages."""

    def __init__(self, address: str, n: int, server: Server, deadline_s: float = 10.0,
                 data_size: int = codec.NETWORK_DATA_SIZE, tag: int = 1) -> None:
        if server not in SERVERS:
            raise ModuleError(f"server must be one of {', '.join(SERVERS)}, not {server!r}")
        self.address, self.n, self.server, self.deadline_s, self.tag = address, n, server, deadline_s, tag
        ctrl = {"adapter": (n, 0, 0, 0, 0), "generic-tcp": (n, 0, 0, 0, 1)}.get(server, (n, n, n, 0, 1))
        daq = (n, 0, 0, n, 0)
        self.sizes = codec.Sizes(ctrl, daq, max(data_size, 1 + sum(ctrl), sum(daq), n * n))
        self._connection: socket.socket | None = None
        self._time = 0.0
        """the time of the last command (s): what commitState carries"""

    @property
    def label(self) -> str:
        return f"OpenFresco {self.server} at {self.address}"

    def connect(self) -> None:
        self._connection = connect(self.address, self.deadline_s, self.label)
        if self.server == "lab-server":
            self._handshake()
        else:
            self._send(self.sizes.pack())

    def _handshake(self) -> None:
        self._send(codec.INT.pack(1))
        self._receive(codec.INT.size, "the endianness reply")
        self._send(codec.padded(np.array([codec.OPEN, self.tag, codec.VERSION]), codec.NETWORK_DATA_SIZE))
        reply = self._vector(codec.NETWORK_DATA_SIZE, "the open reply")
        if reply[2] != codec.VERSION:
            raise ModuleError(f"{self.label}: the lab server speaks OpenFresco {reply[2]:g}, this client "
                              f"{codec.VERSION:g}")
        self._send(codec.padded(np.array([codec.SETUP, self.sizes.data_size]), codec.NETWORK_DATA_SIZE))
        self._send(self.sizes.pack()[:-codec.INT.size])  # the two 5-int size IDs, without dataSize

    def trial(self, time: float, displacement: np.ndarray, velocity: np.ndarray | None,
              acceleration: np.ndarray | None) -> None:
        """setTrialResponse."""
        parts = {"disp": displacement, "vel": velocity, "accel": acceleration, "time": np.array([time])}
        self._send(codec.pack_parts(parts, self.sizes.ctrl, 1, self.sizes.data_size), codec.SET_TRIAL)

    def measured(self) -> tuple[np.ndarray, np.ndarray]:
        """The measured displacement and force (getForce of an adapter, getDaqResponse of the others)."""
        action = codec.GET_FORCE if self.server == "adapter" else codec.GET_DAQ
        self._send(codec.padded(np.array([action]), self.sizes.data_size))
        parts = codec.unpack_parts(self._vector(self.sizes.data_size, "the measured response"), self.sizes.daq, 0)
        return parts["disp"], parts["force"]

    def commit(self, time: float) -> None:
        """commitState (an adapter or a controller has none: every trial is committed already)."""
        if self.server in COMMITS:
            parts = {"time": np.array([time])}
            self._send(codec.pack_parts(parts, self.sizes.ctrl, 1, self.sizes.data_size), codec.COMMIT)

    def exchange(self, message: StepMessage, call: Call, timeout_s: float) -> StepResult | None:
        """One step as a channel carries it (hybridsim.wire.channels.base): the commit (commitState, with the
        time of the step it commits), the command (setTrialResponse), the execute (the measured response)."""
        try:
            if message.commit_step is not None:
                self.commit(self._time)
            if message.command is not None:
                command = message.command
                self._time = command.time
                self.trial(command.time, command.displacement, command.velocity, command.acceleration)
            if not message.execute:
                return None
            displacement, force = self.measured()
        except ModuleError as exc:
            raise call.error(str(exc).removeprefix(f"{self.label}: ")) from None
        return StepResult(message.step, displacement, force)

    def close(self) -> None:
        """DIE (a lab server answers it), then close the connection; never raises."""
        connection, self._connection = self._connection, None
        if connection is None:
            return
        try:
            message = codec.padded(np.array([codec.DIE, self.tag]), self.sizes.data_size)
            connection.sendall(message)
            if self.server == "lab-server":
                self._connection = connection
                self._vector(self.sizes.data_size, "the DIE reply")
        except (OSError, ModuleError):
            pass
        finally:
            self._connection = None
            connection.close()

    def _send(self, data: bytes, action: int | None = None) -> None:
        if action is not None:
            data = codec.DOUBLE.type(action).tobytes() + data[8:]
        try:
            self._open_connection().sendall(data)
        except OSError as exc:
            raise ModuleError(f"{self.label}: connection lost: {exc}") from None

    def _vector(self, data_size: int, what: str) -> np.ndarray:
        return np.frombuffer(self._receive(8 * data_size, what), dtype=codec.DOUBLE).astype(float)

    def _receive(self, count: int, what: str) -> bytes:
        connection = self._open_connection()
        data = bytearray()
        try:
            while len(data) < count:
                chunk = connection.recv(count - len(data))
                quickack(connection)
                if not chunk:
                    raise ModuleError(f"{self.label}: the server closed the connection while hybridsim waited "
                                      f"for {what} (see the server's log)")
                data += chunk
        except TimeoutError:
            raise ModuleError(f"{self.label}: no {what} within the deadline of {self.deadline_s:g} s") from None
        except OSError as exc:
            raise ModuleError(f"{self.label}: connection lost waiting for {what}: {exc}") from None
        return bytes(data)

    def _open_connection(self) -> socket.socket:
        if self._connection is None:
            raise ModuleError(f"{self.label}: not connected")
        return self._connection
