"""The link channel: the session's steps on the site's step link (:mod:`hybridsim.wire.link`).

Each step is one fixed binary frame each way on a stream socket, the site's Unix socket for a client
on its machine or TCP, without the gRPC stack between them (about ten times faster than the stream
on loopback: docs/wire_speed.md).  The frame carries exactly the fields of module.proto's
StepRequest and StepReply (protos/hybridsim/v1/step_link.md); it is kept, rather than those
messages, because it measured more than 10 % faster per round trip (docs/wire_speed.md).
"""

from __future__ import annotations

import logging
import socket
import struct
from pathlib import Path

from hybridsim.wire import codec, link
from hybridsim.wire.channels.base import Call, Endpoints, Retry, StepMessage
from hybridsim.wire.channels.stream import StreamChannel
from hybridsim.wire.contract import StepResult
from hybridsim.wire.security import is_loopback
from hybridsim.wire.sockets import Receiver, kernel_timeout

log = logging.getLogger(__name__)

_MIN_TIMEOUT_S = 1e-4
"""the shortest socket timeout a client sets (s): a timeout of 0 would make the socket non-blocking"""
TIMEOUT_KEPT = 0.9
"""a step keeps the socket's timeout while it is between this fraction of the step's timeout and all of it"""


class LinkConnection:
    """A client's connection to a site's link, bound to the open session by its HELLO."""

    def __init__(self, address: str, token: str | None, session_id: str, timeout_s: float,
                 max_frame_bytes: int = codec.DEFAULT_MAX_MESSAGE_BYTES) -> None:
        """``address``: HOST:PORT, or :data:`~hybridsim.wire.link.UNIX` + the path of the site's Unix socket."""
        self._max_frame_bytes = max_frame_bytes
        if address.startswith(link.UNIX):
            self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._socket.settimeout(max(timeout_s, _MIN_TIMEOUT_S))
            try:
                self._socket.connect(address.removeprefix(link.UNIX))
                _check_peer(self._socket, address.removeprefix(link.UNIX))
            except BaseException:
                self.close()
                raise
        else:
            host, _, port = address.rpartition(":")
            self._socket = socket.create_connection((host.strip("[]"), int(port)),
                                                    timeout=max(timeout_s, _MIN_TIMEOUT_S))
            self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._receiver = Receiver(self._socket)
        self._timeout_s = max(timeout_s, _MIN_TIMEOUT_S)
        try:
            kernel_timeout(self._socket, self._timeout_s)
            reply = self._round_trip(link.hello_frame(token, session_id))
            if reply != bytes((link.WELCOME,)):
                link.parse_reply(reply)  # an ERROR raises link.LinkError
                raise link.MalformedFrame("the site answered the HELLO with a step reply")
        except BaseException:
            self.close()
            raise

    def exchange(self, frame: bytes, timeout_s: float) -> StepResult | int:
        """Send a STEP frame; its reply (see :func:`hybridsim.wire.link.parse_reply`), or TimeoutError after at most
        ``timeout_s`` (s) and at least :data:`TIMEOUT_KEPT` of it (the socket's timeout is set again only
        outside that band: a step's send and receive are then one system call each)."""
        timeout_s = max(timeout_s, _MIN_TIMEOUT_S)
        if not TIMEOUT_KEPT * timeout_s <= self._timeout_s <= timeout_s:
            self._timeout_s = TIMEOUT_KEPT * timeout_s
            kernel_timeout(self._socket, self._timeout_s)
        return link.parse_reply(self._round_trip(frame))

    def _round_trip(self, frame: bytes) -> bytes:
        """Send ``frame``; the site's next frame, or TimeoutError when the send or the reply took longer than the
        socket's timeout."""
        try:
            self._socket.sendall(frame)
            reply = link.next_frame(self._receiver, self._max_frame_bytes)
        except BlockingIOError:  # a blocking socket's kernel timeout (hybridsim.wire.sockets)
            raise TimeoutError("the step link's send or reply did not finish in time") from None
        if reply is None:
            raise ConnectionError("the site closed the step link")
        return reply

    def close(self) -> None:
        link.close_socket(self._socket)


def _check_peer(connection: socket.socket, path: str) -> None:
    """Refuse (ConnectionRefusedError) a Unix socket served by another user than the owner of its private folder:
    the HELLO carries the token and the session."""
    owner = link.private_socket_owner(Path(path))
    if not hasattr(socket, "SO_PEERCRED"):
        return
    _pid, uid, _gid = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                                 struct.calcsize("3i")))
    if owner is None or uid != owner:
        raise ConnectionRefusedError(f"the step link's Unix socket {path} is served by user {uid}, not by the owner "
                                     "of its private folder: not the site's")


class LinkChannel:
    """The session's connection to the site's step link, made at the first step; a lost one is made anew.

    A site whose link is full (every slot taken) answers the HELLO with UNAVAILABLE: when the link was
    chosen by "auto" (:attr:`Endpoints.stream_fallback`), the session's steps then go on the gRPC stream
    instead (logged), the same contract over the other channel; asked for by name, it is retried."""

    def __init__(self, site: Endpoints) -> None:
        address = site.link_address
        if address is None:
            raise site.error("the site serves no step link (a site with mutual TLS serves none): use transport "
                             "'stream'")
        if site.token and not (address.startswith(link.UNIX) or is_loopback(address)):
            raise site.error(f"the access token would travel to the step link at {address} in clear text (the link "
                             "has no TLS): use transport 'stream', or a link_address on loopback behind a tunnel")
        self._address, self._token, self._max_frame_bytes = address, site.token, site.max_message_bytes
        self._site = site
        self._connection: LinkConnection | None = None
        self._fallback: StreamChannel | None = None

    def exchange(self, message: StepMessage, call: Call, timeout_s: float) -> StepResult | None:
        if self._fallback is not None:
            return self._fallback.exchange(message, call, timeout_s)
        connecting = self._connection is None
        try:
            frame = link.step_frame(message.step, message.commit_step, message.command, message.execute)
        except ValueError as exc:  # vectors of different lengths: the site would refuse them the same way
            raise call.refused(message.step, str(exc)) from None
        try:
            if self._connection is None:
                self._connection = LinkConnection(self._address, self._token, message.session_id, timeout_s,
                                                  self._max_frame_bytes)
            reply = self._connection.exchange(frame, timeout_s)
        except link.LinkError as exc:  # the site answered: the connection is sound
            if exc.step is not None:
                raise call.refused(exc.step, str(exc)) from None
            if connecting and exc.code == link.UNAVAILABLE and self._site.stream_fallback:
                log.warning("%s: the step link at %s is full (%s): the steps go on the gRPC stream", self._site.label,
                            self._address, exc)
                self.close()
                self._fallback = StreamChannel(self._site)
                return self._fallback.exchange(message, call, timeout_s)
            error = call.error(f"{exc.code}: {exc}")
            raise (Retry(error) if exc.code == link.UNAVAILABLE else error) from None
        except BaseException as exc:
            self.close()
            if isinstance(exc, TimeoutError):
                raise call.late() from None
            if isinstance(exc, link.MalformedFrame):
                raise call.error(f"the site's step link sent a malformed reply: {exc}") from None
            if isinstance(exc, OSError):  # a refused or reset connection, no route: retried
                lost = str(exc) if isinstance(exc, ConnectionError) else exc.strerror or str(exc)
                raise Retry(call.error(f"step link to {self._address} lost: {lost}")) from None
            raise
        return reply if isinstance(reply, StepResult) else None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._fallback is not None:
            self._fallback.close()
