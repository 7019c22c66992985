"""The bytes of OpenSees/OpenFresco's SimApp TCP protocol (OpenSees' TCP_Socket channel; OpenFresco's FrescoGlobals).

The integrating side connects and first sends one *sizes* message, 11 int32: ``sizeCtrl`` (the numbers of
displacements, velocities, accelerations, forces and times it will command), ``sizeDaq`` (the same five
for what it reads back) and ``dataSize``.  Every later message, both ways, is exactly ``dataSize``
float64.  Element 0 of a request is the action (:data:`ACTIONS`); a command is packed from element 1 as
``[disp | vel | accel | force | time]`` sized by ``sizeCtrl``, measured data from element 0 sized by
``sizeDaq``; an n x n matrix goes column-major from element 0; replies are zero-padded.  Numbers are in
the machine's own byte order (OpenSees converts nothing): this module uses the native order, which is
little-endian on every machine OpenSees and OpenFresco ship for.
"""

from __future__ import annotations

import math
import socket
import struct
from dataclasses import dataclass

import numpy as np

from hybridsim.wire.protocols.base import receive_into

OPEN, SETUP, SET_TRIAL, EXECUTE, COMMIT, GET_DAQ = 1, 2, 3, 4, 5, 6
GET_DISP, GET_VEL, GET_ACCEL, GET_FORCE, GET_TIME = 7, 8, 9, 10, 11
GET_INITIAL_STIFF, GET_TANGENT_STIFF, GET_DAMP, GET_MASS = 12, 13, 14, 15
SHUTDOWN, DIE = 98, 99
ACTIONS = {OPEN: "open", SETUP: "setup", SET_TRIAL: "setTrialResponse", EXECUTE: "execute", COMMIT: "commitState",
           GET_DAQ: "getDaqResponse", GET_DISP: "getDisp", GET_VEL: "getVel", GET_ACCEL: "getAccel",
           GET_FORCE: "getForce", GET_TIME: "getTime", GET_INITIAL_STIFF: "getInitialStiff",
           GET_TANGENT_STIFF: "getTangentStiff", GET_DAMP: "getDamp", GET_MASS: "getMass", SHUTDOWN: "shutdown",
           DIE: "DIE"}
REPLIED = frozenset({GET_DAQ, GET_DISP, GET_VEL, GET_ACCEL, GET_FORCE, GET_TIME, GET_INITIAL_STIFF, GET_TANGENT_STIFF,
                     GET_DAMP, GET_MASS})
"""the requests a client waits for numbers after"""
COMPLETED, RECEIVED = 0, 4
"""OpenFresco's return codes in a lab server's replies (OF_ReturnType_completed, OF_ReturnType_received)"""
RESPONSES = ("disp", "vel", "accel", "force", "time")
NETWORK_DATA_SIZE = 256
"""OpenFresco's default dataSize, also the size of a lab-server handshake's messages (OF_Network_dataSize)"""
VERSION = 2.8
"""the OpenFresco version a lab server answers a ShadowExpSite with (atof of OPF_VERSION "2.8.0 ...")"""

INIT_LINE_BYTES = 16385
"""an ECGenericTCP init-file line: byte 0 is 2 (setup), then the line's text, NUL-padded"""

SIZES = struct.Struct("=11i")
INT = struct.Struct("=i")
DOUBLE = np.dtype("=f8")


@dataclass(frozen=True)
class Sizes:
    """The sizes message: what the client commands (``ctrl``), reads back (``daq``), and the vectors' length."""

    ctrl: tuple[int, int, int, int, int]
    daq: tuple[int, int, int, int, int]
    data_size: int

    @classmethod
    def unpack(cls, data: bytes) -> "Sizes":
        values = SIZES.unpack(data)
        return cls(tuple(values[:5]), tuple(values[5:10]), values[10])  # type: ignore[arg-type]

    def pack(self) -> bytes:
        return SIZES.pack(*self.ctrl, *self.daq, self.data_size)

    def refusal(self, n: int, max_data_size: int, matrices: bool, forced: int = 0) -> str | None:
        """Why a module of ``n`` DOFs (and ``forced`` force-controlled ones) cannot serve these sizes (None: it
        can); ``matrices``: n x n replies too."""
        if self.ctrl[0] != n:
            return f"the client commands {self.ctrl[0]} displacements, the module has {n} DOFs"
        for name, values in (("sizeCtrl", self.ctrl), ("sizeDaq", self.daq)):
            for response, size in zip(RESPONSES, values):
                if name == "sizeCtrl" and response == "force":
                    continue  # the forces the site declares (below)
                allowed = (0, 1) if response == "time" else (0, n)
                if size not in allowed:
                    return f"{name} {response} is {size}: give 0 or {allowed[1]}"
        if self.ctrl[3] and not forced:
            return ("force control (sizeCtrl force > 0) is not supported: the site declares no force-controlled DOF; "
                    "command displacements")
        if self.ctrl[3] not in (0, forced):
            return (f"the client commands {self.ctrl[3]} forces, the site declares {forced} force-controlled DOF(s): "
                    f"give sizeCtrl force = 0 or {forced}")
        if not 0 < self.data_size <= max_data_size:
            return f"dataSize {self.data_size} is outside 1..{max_data_size} (the site's message limit)"
        needed = max(1 + sum(self.ctrl), sum(self.daq), n * n if matrices else 0)
        if self.data_size < needed:
            return f"dataSize {self.data_size} cannot hold the vectors (it needs at least {needed})"
        return None


def read_vector(connection: socket.socket, data_size: int, what: str = "a message",
                into: bytearray | None = None) -> np.ndarray | None:
    """The next message of ``data_size`` doubles; None when the client closed the connection before it.  ``into``: a
    buffer of ``8 data_size`` bytes that every message of a connection is read into (the array is a view of it, valid
    until the next read: a step's messages cost no allocation); None: a new one."""
    buffer = bytearray(8 * data_size) if into is None else into
    return np.frombuffer(buffer, dtype=DOUBLE) if receive_into(connection, memoryview(buffer), what) else None


def padded(values: np.ndarray, data_size: int) -> bytes:
    """``values`` zero-padded to a message of ``data_size`` doubles."""
    message = np.zeros(data_size, dtype=DOUBLE)
    message[:values.size] = values
    return message.tobytes()


def matrix_message(matrix: np.ndarray, data_size: int) -> bytes:
    """An n x n matrix, column-major from element 0, zero-padded."""
    return padded(np.asarray(matrix, dtype=float).ravel(order="F"), data_size)


def unpack_parts(message: np.ndarray, sizes: tuple[int, ...], offset: int) -> dict[str, np.ndarray]:
    """The parts of a message packed ``[disp | vel | accel | force | time]`` from ``offset``, by name (empty: absent)."""
    values, parts, at = message[offset:offset + sum(sizes)].copy(), {}, 0  # one copy: the parts outlive the message
    for name, size in zip(RESPONSES, sizes):
        parts[name] = values[at:at + size]
        at += size
    return parts


def pack_parts(parts: dict[str, np.ndarray], sizes: tuple[int, ...], offset: int, data_size: int) -> bytes:
    """A message with ``parts`` packed ``[disp | vel | accel | force | time]`` from ``offset``, zero-padded."""
    values = [np.zeros(offset)]
    for name, size in zip(RESPONSES, sizes):
        if size:
            part = parts.get(name)
            values.append(np.zeros(size) if part is None or len(part) != size else np.asarray(part, dtype=float))
    return padded(np.concatenate(values), data_size)


def action_of(message: np.ndarray) -> int | None:
    """The action code of a request (None: element 0 is not a whole number)."""
    code = float(message[0])  # a Python float: math's checks cost a fifth of numpy's on a scalar
    return int(code) if math.isfinite(code) and code == int(code) else None
