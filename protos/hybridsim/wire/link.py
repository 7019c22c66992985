"""The step link, the site's end: one lockstep step per fixed binary frame, beside a site's gRPC service.

gRPC stays the control plane (Describe, Open, Checkpoint, Restore, Close);
the link carries only what ``Steps`` carries, in the cheapest form Python can
read and write: a struct header and the vectors as raw little-endian
doubles.  It is what a lab's real-time controller uses to reach an actuator
controller (a fixed frame over a deterministic link, not an RPC stack).

Every message is a frame: ``uint32`` payload length, then the payload,
whose first byte says what it is (all integers little-endian; the specification, field by field
against module.proto's StepRequest and StepReply, is protos/hybridsim/v1/step_link.md)::

    client -> site
      HELLO  u8 1, u16 major, u16 minor, u16 len, token, u16 len, session id
      STEP   u8 2, u8 flags, i64 step, i64 commit step, f64 time, u32 n,
             n doubles displacement [, n velocity] [, n acceleration]
             flags: 1 commit, 2 command, 4 execute, 8 velocity, 16 acceleration
    site -> client
      WELCOME u8 1
      RESULT  u8 2, i64 step, u32 n, n doubles displacement, n doubles force
      DONE    u8 3, i64 step                        (a step that did not execute)
      ERROR   u8 4, u8 has refused step, i64 refused step, u8 len, status name, message (UTF-8)

The semantics are those of a ``Steps`` message (module.proto): commit, then
propose, then execute, stopping at the first refusal; a resent frame is
answered from the module's record.  The HELLO binds the connection to the
open session and carries the site's access token (compared in constant
time; checked before any step frame is read).  The link serves on loopback
unless the site is told its network is trusted; a site with mutual TLS
does not serve it, token or not (the link has no TLS, so it could not check
its clients' certificates as the site's gRPC service does).  A malformed frame is answered with
an INVALID_ARGUMENT error and the connection is closed.  The client's end is
:mod:`hybridsim.wire.channels.link`.
"""

from __future__ import annotations

import errno
import functools
import hmac
import logging
import os
import socket
import stat
import struct
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

import numpy as np

from hybridsim.v1 import module_pb2 as pb
from hybridsim.wire import codec
from hybridsim.wire.contract import Command, StepResult
from hybridsim.wire.security import _digest, is_loopback
from hybridsim.wire.sockets import Receiver, kernel_timeout, timed_out

log = logging.getLogger("hybridsim.site")

INFO_KEY = "hybridsim.link"
"""key of a site's Describe info that gives its link: "tcp HOST:PORT" [" unix PATH"] [" netns ID"], PATH
percent-encoded (RFC 3986: a space is %20; a path of letters, digits, "/_.-~" reads as itself), ID the site's
network namespace (:func:`network_namespace`); absent: no link"""
UNIX = "unix:"
"""prefix of a link address that is the path of a Unix domain socket (a site on the same machine)"""

HELLO, STEP = 1, 2
WELCOME, RESULT, DONE, ERROR = 1, 2, 3, 4
COMMIT, COMMAND, EXECUTE, VELOCITY, ACCELERATION = 1, 2, 4, 8, 16
UNAVAILABLE = "UNAVAILABLE"
"""the status of an ERROR frame that a client may retry (as gRPC's UNAVAILABLE): the site has no connection free"""
_FLAGS = COMMIT | COMMAND | EXECUTE | VELOCITY | ACCELERATION

_LENGTH = struct.Struct("<I")
_HELLO = struct.Struct("<BHH")
_TEXT = struct.Struct("<H")
_STEP = struct.Struct("<BBqqdI")
_RESULT = struct.Struct("<BqI")
_DONE = struct.Struct("<Bq")
_ERROR = struct.Struct("<BBqB")
_COUNTER = struct.Struct("<d")
HELLO_TIMEOUT_S = 5.0
"""how long a new connection may take to send its HELLO (s)"""
IDLE_TIMEOUT_S = 600.0
"""how long the site keeps a link connection that sends nothing (s): far longer than any pause between the
steps of a live run, and a client whose connection was closed reconnects and resends at its next step"""
KEEPALIVE_S = {"TCP_KEEPIDLE": 30, "TCP_KEEPINTVL": 10, "TCP_KEEPCNT": 3}
"""TCP keepalive of an accepted link connection, where the platform has these options: probe after 30 s of
silence, every 10 s, give up after 3 unanswered (a client gone without a FIN frees its slot within 60 s)"""


class LinkError(Exception):
    """An ERROR frame: the site refused the step or the connection (status name, message, refused step)."""

    def __init__(self, code: str, message: str, step: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.step = step


class MalformedFrame(Exception):
    """A frame that does not follow the link's format."""


@dataclass(frozen=True)
class StepFrame:
    """A decoded STEP frame: what a ``StepRequest`` says."""

    step: int
    commit_step: int | None
    command: Command | None
    execute: bool


# -- frames ------------------------------------------------------------------------
def _framed(payload: bytes) -> bytes:
    return _LENGTH.pack(len(payload)) + payload


def hello_frame(token: str | None, session_id: str) -> bytes:
    token_bytes, session_bytes = (token or "").encode(), session_id.encode()
    return _framed(_HELLO.pack(HELLO, codec.PROTOCOL.major, codec.PROTOCOL.minor) + _TEXT.pack(len(token_bytes))
                   + token_bytes + _TEXT.pack(len(session_bytes)) + session_bytes)


def step_frame(step: int, commit_step: int | None, command: Command | None, execute: bool) -> bytes:
    """The STEP frame of one lockstep message."""
    flags = (COMMIT if commit_step is not None else 0) | (EXECUTE if execute else 0)
    if command is None:
        return _framed(_STEP.pack(STEP, flags, step, commit_step or 0, 0.0, 0))
    vectors = [np.asarray(command.displacement, dtype="<f8")]
    n = vectors[0].size
    if vectors[0].shape != (n,):
        raise ValueError(f"displacement must be a vector, not an array of shape {vectors[0].shape}")
    for flag, name, values in ((VELOCITY, "velocity", command.velocity),
                               (ACCELERATION, "acceleration", command.acceleration)):
        if values is not None:
            flags |= flag
            vectors.append(np.asarray(values, dtype="<f8"))
            if vectors[-1].shape != (n,):
                raise ValueError(f"{name} has {vectors[-1].size} values, the displacement {n} (a step frame "
                                 "carries vectors of one length)")
    header = _STEP.pack(STEP, flags | COMMAND, step, commit_step or 0, float(command.time), n)
    return _framed(header + b"".join(v.tobytes() for v in vectors))


def parse_step(payload: bytes) -> StepFrame:
    """The STEP frame in ``payload``; MalformedFrame when it is not one."""
    if len(payload) < _STEP.size:
        raise MalformedFrame(f"a step frame has at least {_STEP.size} bytes, this one {len(payload)}")
    kind, flags, step, commit_step, time, n = _STEP.unpack_from(payload)
    if kind != STEP:
        raise MalformedFrame(f"expected a step frame (kind {STEP}), got kind {kind}")
    if flags & ~_FLAGS or (flags & (VELOCITY | ACCELERATION) and not flags & COMMAND):
        raise MalformedFrame(f"unknown or inconsistent flags {flags:#04x}")
    vectors = 1 + bool(flags & VELOCITY) + bool(flags & ACCELERATION) if flags & COMMAND else 0
    if len(payload) != _STEP.size + 8 * n * vectors:
        raise MalformedFrame(f"a step frame of {vectors} vector(s) of {n} values has "
                             f"{_STEP.size + 8 * n * vectors} bytes, this one {len(payload)}")
    command = None
    if flags & COMMAND:
        values = np.frombuffer(payload, dtype="<f8", offset=_STEP.size).astype(float)
        parts = iter(values.reshape(vectors, n))
        command = Command(time, next(parts), next(parts) if flags & VELOCITY else None,
                          next(parts) if flags & ACCELERATION else None)
    return StepFrame(step, commit_step if flags & COMMIT else None, command, bool(flags & EXECUTE))


def result_frame(step: int, result: StepResult | None) -> bytes:
    if result is None:
        return _framed(_DONE.pack(DONE, step))
    n = len(result.displacement)
    values = np.concatenate((np.asarray(result.displacement, "<f8"), np.asarray(result.force, "<f8")))
    return _framed(_RESULT.pack(RESULT, result.step, n) + values.tobytes() + _counters(result.counters))


def _counters(counters: Mapping[str, float] | None) -> bytes:
    """A RESULT's counters section: nothing without counters, else ``u8 count`` and per counter ``u8 len``, its
    name, ``f64`` value (names of 1 to 255 bytes, at most 255 counters)."""
    if not counters:
        return b""
    if len(counters) > 255:
        raise ValueError(f"a step result carries at most 255 counters, not {len(counters)}")
    out = bytearray((len(counters),))
    for name, value in counters.items():
        encoded = name.encode()
        if not 0 < len(encoded) <= 255:
            raise ValueError(f"a counter's name has 1 to 255 bytes, not {len(encoded)}: {name[:40]!r}")
        out += bytes((len(encoded),)) + encoded + _COUNTER.pack(value)
    return bytes(out)


def _parse_counters(payload: bytes, at: int) -> dict[str, float] | None:
    """The counters section of a RESULT from byte ``at`` on (None: none); MalformedFrame if it is not one."""
    if at == len(payload):
        return None
    count, at, counters = payload[at], at + 1, {}
    for _ in range(count):
        length = payload[at] if at < len(payload) else 0
        name, at = payload[at + 1:at + 1 + length], at + 1 + length
        if at + _COUNTER.size > len(payload) or not length:
            raise MalformedFrame("a RESULT's counters section is cut short")
        counters[name.decode(errors="replace")] = _COUNTER.unpack_from(payload, at)[0]
        at += _COUNTER.size
    if at != len(payload) or not counters:
        raise MalformedFrame("a RESULT's counters section does not end the frame")
    return counters


def error_frame(code: str, message: str, refused_step: int | None) -> bytes:
    code_bytes = code.encode()
    return _framed(_ERROR.pack(ERROR, refused_step is not None, refused_step or 0, len(code_bytes)) + code_bytes
                   + message.encode("utf-8", errors="replace"))


def parse_reply(payload: bytes) -> StepResult | int:
    """A RESULT as a StepResult, a DONE as its step; an ERROR raises LinkError."""
    kind = payload[0] if payload else None
    if kind == RESULT and len(payload) >= _RESULT.size:
        _, step, n = _RESULT.unpack_from(payload)
        end = _RESULT.size + 16 * n
        if len(payload) >= end:
            values = np.frombuffer(payload, dtype="<f8", offset=_RESULT.size, count=2 * n).astype(float)
            return StepResult(step, values[:n], values[n:], _parse_counters(payload, end))
    elif kind == DONE and len(payload) == _DONE.size:
        return _DONE.unpack(payload)[1]
    elif kind == ERROR and len(payload) >= _ERROR.size:
        _, refused, step, length = _ERROR.unpack_from(payload)
        code = payload[_ERROR.size:_ERROR.size + length].decode(errors="replace")
        message = payload[_ERROR.size + length:].decode(errors="replace")
        raise LinkError(code, message, step if refused else None)
    raise MalformedFrame(f"not a reply frame ({len(payload)} bytes, kind {kind})")


def read_frame(connection: socket.socket, max_bytes: int, deadline: float | None = None) -> bytes | None:
    """The next frame's payload; None at a clean end of the connection before a frame.  ``deadline``
    (time.monotonic()): the whole frame must arrive by then (TimeoutError), however slowly it trickles."""
    header = _read_exactly(connection, _LENGTH.size, deadline, at_start=True)
    if header is None:
        return None
    (length,) = _LENGTH.unpack(header)
    if length > max_bytes:
        raise MalformedFrame(f"a frame of {length} bytes is over the limit of {max_bytes} bytes")
    return _read_exactly(connection, length, deadline) if length else b""


def next_frame(receiver: Receiver, max_bytes: int) -> bytes | None:
    """The next frame's payload from ``receiver`` (in one ``recv_into`` when it arrived whole); None at a clean
    end of the connection before a frame."""
    header = receiver.take(_LENGTH.size, at_start=True)
    if header is None:
        return None
    (length,) = _LENGTH.unpack(header)
    if length > max_bytes:
        raise MalformedFrame(f"a frame of {length} bytes is over the limit of {max_bytes} bytes")
    return receiver.take(length) if length else b""


def _read_exactly(connection: socket.socket, count: int, deadline: float | None,
                  at_start: bool = False) -> bytes | None:
    data = b""
    while len(data) < count:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the frame did not arrive in time")
            connection.settimeout(left)
        more = connection.recv(count - len(data))
        if not more:
            if at_start and not data:
                return None
            raise ConnectionError("the connection closed in the middle of a frame")
        data += more
    return data


# -- the site's end ----------------------------------------------------------------
StepHandler = Callable[[str, StepFrame], StepResult | None]
"""(session id, frame) -> the executed step's result (None when the frame did not execute); raises to refuse"""
StatusOf = Callable[[Exception], tuple[str, str, int | None]]
"""exception -> (status name, message, refused step), as the gRPC service reports it"""


class LinkServer:
    """Serves the step link on ``listen`` (HOST:PORT, port 0: a free one) with one thread per connection.

    ``token``: the site's access token that every HELLO must carry (None: no token, loopback only);
    ``max_connections`` sessions' connections at once, more are refused after their HELLO.  A connection
    holds one of those slots only once its HELLO was accepted: before, it holds one of ``max_pending``
    slots for at most :data:`HELLO_TIMEOUT_S` in all (however slowly its bytes arrive), so clients that
    never authenticate cannot take the slots of those that do.  ``unix_folder`` (a folder private to this user) also
    serves the link on a Unix domain socket there, for clients on this machine: a shorter way through
    the kernel than TCP on loopback, and one that other users cannot even connect to.  A connection that
    sends nothing for ``idle_timeout_s`` (s) is closed, and TCP keepalive (:data:`KEEPALIVE_S`) closes one
    whose client vanished without a word, so that neither holds a slot for ever.
    """

    def __init__(self, site: str, handle: StepHandler, status_of: StatusOf, listen: str, token: str | None,
                 max_frame_bytes: int = codec.DEFAULT_MAX_MESSAGE_BYTES, max_connections: int = 8,
                 unix_folder: Path | None = None, idle_timeout_s: float = IDLE_TIMEOUT_S,
                 max_pending: int = 64) -> None:
        host, _, port = listen.rpartition(":")
        self.site = site
        self._handle, self._status_of = handle, status_of
        self._expected = None if token is None else _digest(codec.bearer(token))
        self._max_frame_bytes = max_frame_bytes
        self._max_connections = max_connections
        self._idle_timeout_s = idle_timeout_s
        self._slots = threading.BoundedSemaphore(max_connections)
        self._pending = threading.BoundedSemaphore(max_pending)
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._listener = socket.create_server((host.strip("[]"), int(port)),
                                              family=socket.AF_INET6 if ":" in host else socket.AF_INET)
        self.port = self._listener.getsockname()[1]
        self.address = f"{host}:{self.port}"
        listeners = [self._listener]
        self.unix_path = None if unix_folder is None else self._unix(Path(unix_folder) / "link.sock", listeners)
        self._listeners = listeners
        self._threads = [threading.Thread(target=self._accept, args=(listener,), name=f"site-{site}-link", daemon=True)
                         for listener in listeners]
        for thread in self._threads:
            thread.start()

    def _unix(self, path: Path, listeners: list[socket.socket]) -> Path | None:
        """``path`` once a Unix socket listens there (added to ``listeners``); None where none can."""
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            unix.bind(str(path))
            unix.listen()
        except OSError as exc:  # e.g. a path longer than the 107 bytes a socket address holds
            unix.close()
            log.info("site %s: no step link on a Unix socket at %s: %s", self.site, path, exc)
            return None
        listeners.append(unix)
        return path

    @property
    def info(self) -> str:
        """The value of :data:`INFO_KEY` in the site's Describe info."""
        namespace = network_namespace()
        return (f"tcp {self.address}" + ("" if self.unix_path is None else
                                         f" unix {quote(str(self.unix_path))} uid {os.getuid()}")
                + ("" if namespace is None else f" netns {namespace}"))

    def stop(self) -> None:
        """Stop accepting and close every connection (and remove the Unix socket)."""
        for listener in self._listeners:
            close_socket(listener)  # the shutdown wakes the thread blocked in accept()
        for thread in self._threads:
            thread.join(2.0)  # before closing the connections: one accepted meanwhile is closed too
        with self._lock:
            connections, self._connections = set(self._connections), set()
        for connection in connections:
            close_socket(connection)
        if self.unix_path is not None:
            self.unix_path.unlink(missing_ok=True)

    def _accept(self, listener: socket.socket) -> None:
        while (accepted := accept(listener, f"site {self.site}: step link")) is not None:
            connection, peer = accepted
            peer = peer or f"the Unix socket {self.unix_path}"  # a Unix socket's client has no address
            if not self._pending.acquire(blocking=False):
                log.warning("site %s: step link connection from %s refused: too many connections before their "
                            "HELLO", self.site, peer)
                _send_quietly(connection, error_frame(UNAVAILABLE, f"site {self.site} has too many step link "
                                                      "connections waiting for their HELLO", None))
                close_socket(connection)
                continue
            with self._lock:
                self._connections.add(connection)
            threading.Thread(target=self._serve, args=(connection, peer), name=f"site-{self.site}-link-conn",
                             daemon=True).start()

    def _serve(self, connection: socket.socket, peer: object) -> None:
        slot = False
        try:
            try:
                if connection.family != socket.AF_UNIX:
                    _tune_tcp(connection)
                session = self._hello(connection, peer, time.monotonic() + HELLO_TIMEOUT_S)
            finally:
                self._pending.release()
            if session is None:
                return
            slot = self._slots.acquire(blocking=False)
            if not slot:
                log.warning("site %s: step link session from %s refused: too many connections", self.site, peer)
                connection.sendall(error_frame(UNAVAILABLE, f"site {self.site} serves at most "
                                               f"{self._max_connections} step link connections at once", None))
                return
            connection.sendall(_framed(bytes((WELCOME,))))
            kernel_timeout(connection, self._idle_timeout_s)  # a timeout ends the connection below
            receiver = Receiver(connection)
            while True:
                payload = next_frame(receiver, self._max_frame_bytes)
                if payload is None:
                    return
                try:
                    frame = parse_step(payload)
                except MalformedFrame as exc:
                    log.warning("site %s: malformed step frame from %s: %s", self.site, peer, exc)
                    connection.sendall(error_frame("INVALID_ARGUMENT", f"malformed step frame: {exc}", None))
                    return
                try:
                    reply = result_frame(frame.step, self._handle(session, frame))
                except Exception as exc:  # noqa: BLE001 - every failure becomes an ERROR frame
                    code, message, step = self._status_of(exc)
                    reply = error_frame(code, message, step)
                connection.sendall(reply)
        except MalformedFrame as exc:
            log.warning("site %s: step link from %s: %s", self.site, peer, exc)
            _send_quietly(connection, error_frame("INVALID_ARGUMENT", f"malformed frame: {exc}", None))
        except OSError as exc:
            if timed_out(exc):
                log.info("site %s: step link connection from %s closed: it sent nothing within its timeout",
                         self.site, peer)
            # else the client went away (or the link is stopping): nothing to answer
        finally:
            with self._lock:
                self._connections.discard(connection)
            close_socket(connection)
            if slot:
                self._slots.release()

    def _hello(self, connection: socket.socket, peer: object, deadline: float) -> str | None:
        """The session id of a valid HELLO, all of it received by ``deadline`` (time.monotonic()); None after
        refusing it (the WELCOME is the caller's to send, once the connection has its slot)."""
        payload = read_frame(connection, 4096, deadline)
        if payload is None:
            return None
        try:
            kind, major, minor = _HELLO.unpack_from(payload)
            offset = _HELLO.size
            (length,) = _TEXT.unpack_from(payload, offset)
            token = payload[offset + _TEXT.size:offset + _TEXT.size + length].decode()
            offset += _TEXT.size + length
            (length,) = _TEXT.unpack_from(payload, offset)
            session = payload[offset + _TEXT.size:offset + _TEXT.size + length].decode()
            if kind != HELLO or offset + _TEXT.size + length != len(payload):
                raise ValueError("not a hello frame")
        except (struct.error, ValueError) as exc:
            raise MalformedFrame(f"the first frame must be a HELLO: {exc}") from None
        if self._expected is not None and not hmac.compare_digest(_digest(codec.bearer(token)), self._expected):
            log.warning("site %s: step link from %s refused (%s)", self.site, peer, "wrong token" if token else "no token")
            message = (f"site {self.site} refused the access token: it is not this site's token" if token else
                       f"site {self.site} needs an access token (token_file in the experiment's module table)")
            connection.sendall(error_frame("UNAUTHENTICATED", message, None))
            return None
        if major != codec.PROTOCOL.major:
            connection.sendall(error_frame("FAILED_PRECONDITION", codec.version_refusal(
                pb.ProtocolVersion(major=major, minor=minor), f"client at {peer}") or "", None))
            return None
        return session


def serves_link(listen: str, client_certificates: bool, insecure: bool) -> str | None:
    """Why a site of this access may not serve its link on ``listen``; None when it may.

    ``client_certificates``: the site accepts only clients with a certificate of its CA (mutual TLS)."""
    if client_certificates:
        return ("a site with mutual TLS does not serve the step link (the link has no TLS to check its clients' "
                "certificates with; a token alone would let in a client without one): its clients use the gRPC stream")
    if not is_loopback(listen) and not insecure:
        return (f"--link-listen {listen}: the step link has no TLS, it serves on loopback only unless the network "
                "is trusted (--insecure)")
    return None


def link_address(info: dict[str, str], same_machine: bool = False) -> str | None:
    """The address of the link a site's Describe info offers: HOST:PORT, or for a client on the site's
    machine (``same_machine``) its Unix socket (:data:`UNIX` + path) where that exists in a folder private
    to the site's user (the ``uid`` the site reports; a site that reports none: this client's user), so
    that a socket another user planted at that path is never sent the HELLO; None: no link."""
    words = info.get(INFO_KEY, "").split(" ")
    offers = dict(zip(words[::2], words[1::2]))
    unix = unquote(offers.get("unix", ""))
    uid = int(offers["uid"]) if offers.get("uid", "").isdigit() else os.getuid()
    if same_machine and unix and private_socket_owner(Path(unix)) == uid:
        return UNIX + unix
    tcp = offers.get("tcp") or None
    if tcp and _only_inside(tcp) and offers.get("netns", network_namespace()) != network_namespace():
        return None  # the site's own loopback, in another network namespace (a container): not this client's
    return tcp


@functools.cache
def network_namespace() -> str | None:
    """This process's network namespace as BOOT_ID:INODE (Linux; None elsewhere): a loopback address names the
    same listener only for processes of one namespace, on one boot of one machine."""
    try:
        return f"{Path('/proc/sys/kernel/random/boot_id').read_text().strip()}:{os.stat('/proc/self/ns/net').st_ino}"
    except OSError:
        return None


def _only_inside(address: str) -> bool:
    """Whether HOST:PORT reaches its listener only from inside its network namespace (loopback, 0.0.0.0, ::)."""
    host = address.rpartition(":")[0].strip("[]")
    return is_loopback(address) or host in ("0.0.0.0", "::")


def private_socket_owner(path: Path) -> int | None:
    """The user who owns the Unix socket ``path`` and its folder, when the folder is private to that user
    (no access for group or others); None otherwise (no socket there, or a folder others may write in)."""
    try:
        folder, socket_stat = path.parent.stat(), path.stat()
    except OSError:
        return None
    if not stat.S_ISSOCK(socket_stat.st_mode) or folder.st_mode & 0o077 or socket_stat.st_uid != folder.st_uid:
        return None
    return folder.st_uid


def _tune_tcp(connection: socket.socket) -> None:
    """No Nagle delay, and keepalive probes (:data:`KEEPALIVE_S`, those the platform has) on a TCP connection."""
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in KEEPALIVE_S.items():
        if hasattr(socket, name):
            connection.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)


def _send_quietly(connection: socket.socket, data: bytes) -> None:
    try:
        connection.sendall(data)
    except OSError:
        pass


def close_socket(connection: socket.socket) -> None:
    """Shut ``connection`` down (waking a thread blocked on it) and close it, whatever its state."""
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    connection.close()


ACCEPT_RETRY_S = 0.1
"""after an accept refused for want of resources, a listener waits this long (s) and accepts again"""
_SCARCE = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
"""accept errors that pass (a file descriptor or memory frees up): the listener keeps listening"""


def accept(listener: socket.socket, name: str) -> tuple[socket.socket, object] | None:
    """The next connection of ``listener`` and its peer; None once the listener is closed.  An accept that fails
    for want of file descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) is tried again every
    :data:`ACCEPT_RETRY_S` (logged once per shortage, naming ``name``), never taken for a closed listener."""
    scarce = False
    while True:
        try:
            return listener.accept()
        except OSError as exc:
            if exc.errno not in _SCARCE:
                return None  # the listener was closed
            if not scarce:
                log.warning("%s: cannot accept a connection: %s; trying again every %g s", name, exc.strerror,
                            ACCEPT_RETRY_S)
            scarce = True
            time.sleep(ACCEPT_RETRY_S)
