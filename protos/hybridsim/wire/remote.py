"""A module at another site, reached over gRPC: the client side of hybridsim.v1.

:class:`RemoteModule` implements the module interface of hybridsim.modules.base, so
the coordinator drives a daemon exactly as it drives an in-process module.

One step is one round trip: ``propose(n, command)`` keeps the command,
``execute(n)`` sends it with the order to execute (the site checks it
before anything moves) and with the commit of the previous step, which
``commit(n)`` only notes.  ``checkpoint``, ``restore`` and ``close`` send a
noted commit first.  ``two_phase=True`` sends the proposal on its own
round trip instead, for sites where every site must accept before any site
moves (NTCP's propose/execute split at experimental sites).

``transport="link"`` carries the steps (and only they) as fixed binary
frames on the site's step link (:mod:`hybridsim.wire.link`: a Unix socket or TCP
beside the gRPC service); everything else stays on gRPC.  The default, ``"auto"``, takes the
link where the site's Unix socket is on this machine, else the ``Steps`` stream.

Every call has a deadline (``deadline_s``).  An unreachable site is retried
until the deadline runs out (the step IDs make a resent step harmless: the
site answers a repeated execute from its record); a silent or dead site
raises :class:`~hybridsim.wire.contract.ModuleError` within the deadline.  Every error
names the site, its address, the call and the step.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Literal, TypeVar, get_args

import grpc

from hybridsim.wire.credentials import ClientCredentials
from hybridsim.wire.latency import Latency
from hybridsim.v1 import module_pb2 as pb
from hybridsim.v1 import module_pb2_grpc as pb_grpc
from hybridsim.wire import codec, link
from hybridsim.wire.contract import Command, Description, ModuleError, Record, Session, StepRefused, StepResult
from hybridsim.wire.security import is_loopback

Transport = Literal["auto", "stream", "unary", "link"]
T = TypeVar("T")

_RETRY_FIRST_S = 0.02
_RETRY_MAX_S = 0.5
_TLS_REFUSED = "Tls handshake failed"
"""in the details of a connection whose TLS handshake the client refused (the site's certificate): not retried"""


class _StepStream:
    """One open ``Steps`` call: one request out, one reply back, cancelled when a reply is late."""

    def __init__(self, stub: pb_grpc.ModuleStub, watch_tick_s: float) -> None:
        self._requests: queue.SimpleQueue[pb.StepRequest | None] = queue.SimpleQueue()
        self._call = stub.Steps(iter(self._requests.get, None))
        self._due: float | None = None
        self._late = False
        self._closed = threading.Event()
        threading.Thread(target=self._watch, args=(watch_tick_s,), name="hybridsim-stream-watch", daemon=True).start()

    def exchange(self, request: pb.StepRequest, timeout_s: float) -> pb.StepReply:
        """Send ``request``; return its reply, or raise TimeoutError after ``timeout_s`` (s)."""
        if self._late:
            raise ConnectionError("the step stream was cancelled as its last reply came at the deadline")
        self._due = time.monotonic() + timeout_s
        self._requests.put(request)
        try:
            return next(self._call)
        except grpc.RpcError:
            if self._late:
                raise TimeoutError from None
            raise
        except StopIteration:
            raise ConnectionError("the site ended the step stream") from None
        finally:
            self._due = None

    def close(self) -> None:
        """Half-close the stream (the site ends it) and stop the watchdog."""
        self._closed.set()
        self._requests.put(None)

    def _watch(self, tick_s: float) -> None:
        while not self._closed.wait(tick_s):
            due = self._due
            if due is not None and time.monotonic() > due:
                self._late = True
                self._call.cancel()
                return


class RemoteModule:
    """The module served by a ``hybridsim site`` daemon at ``address``.

    RemoteModule(address, name="", deadline_s=10.0, transport="auto", two_phase=False, latency=None,
                 credentials=None, link_address=None)

    address     HOST:PORT of the site (e.g. "127.0.0.1:50051", "left:50051")
    name        the site's name in error messages (default: the address)
    deadline_s  the longest one call may take, retries included (s); the
                first call (describe) also waits this long for a site
                that is still starting
    transport   "stream" (one bidirectional Steps call for the session),
                "unary" (one Step call per step), "link" (each step as
                one fixed binary frame on the site's step link, TCP beside
                the gRPC service: see hybridsim.wire.link; the fastest, for a site
                on the same machine or a trusted network; the other calls
                stay on gRPC) or "auto" (the link where the Unix socket
                its last ``describe`` offered is on this machine, else the
                stream; the stream when ``latency`` is given), decided at
                ``open``
    two_phase   send each proposal on its own round trip (see module doc)
    latency     a :class:`hybridsim.wire.latency.Latency` added to every round
                trip (emulates a distant lab)
    credentials a :class:`hybridsim.wire.credentials.ClientCredentials`: TLS
                (with a client certificate for mutual TLS) and/or the
                site's access token; None: plaintext without a token
    link_address HOST:PORT at which this client reaches the site's step link
                (e.g. through a tunnel); default: the address its Describe gives

    One call at a time per instance; different instances may be driven from
    different threads in parallel.  ``close()`` ends the session,
    ``disconnect()`` the connection.
    """

    is_remote = True
    """calls wait on the network: the coordinator calls several modules in parallel"""

    def __init__(self, address: str, name: str = "", deadline_s: float = 10.0, transport: Transport = "auto",
                 two_phase: bool = False, latency: Latency | None = None,
                 max_message_bytes: int = codec.DEFAULT_MAX_MESSAGE_BYTES,
                 credentials: ClientCredentials | None = None, link_address: str | None = None) -> None:
        if not deadline_s > 0:
            raise ValueError(f"deadline_s must be a positive number of seconds, not {deadline_s!r}")
        if transport not in get_args(Transport):
            raise ValueError(f"transport must be one of {', '.join(get_args(Transport))}, not {transport!r}")
        if transport == "link" and latency is not None:
            raise ValueError("latency emulation delays gRPC calls: use transport 'stream' or 'unary' with it")
        self.address = address
        self.name = name or address
        self.deadline_s = float(deadline_s)
        self.transport = transport
        self.steps_on: Transport = "stream" if transport == "auto" else transport
        """the transport the steps of the open session take ("auto" resolved at ``open``)"""
        self.two_phase = two_phase
        self._latency = latency
        self._credentials = credentials or ClientCredentials()
        self._max_message_bytes = max_message_bytes
        self._channel: grpc.Channel | None = None
        self._stub: pb_grpc.ModuleStub | None = None
        self._stream: _StepStream | None = None
        self._link_override = link_address
        self._link_address = link_address
        self._link: link.LinkConnection | None = None
        self._session_id = ""
        self._pending: tuple[int, Command] | None = None
        self._commit: int | None = None
        self.stats = {"wire_round_trips": 0, "wire_retries": 0}

    @property
    def label(self) -> str:
        """How messages name this site: 'site NAME at ADDRESS'."""
        return f"site {self.name} at {self.address}"

    # -- the module interface ---------------------------------------------
    def describe(self) -> Description:
        reply = self._unary("describe", None, self._connected().Describe, pb.DescribeRequest(version=codec.PROTOCOL))
        self._check_version(reply.version)
        description = codec.description_from_proto(reply)
        self._link_address = self._link_override or link.link_address(description.info, is_loopback(self.address))
        return description

    def open(self, session: Session) -> None:
        self._end_stream()
        if self.transport == "link" and self._link_address is None:
            self.describe()
        self.steps_on = self._steps_transport()
        reply = self._unary("open", None, self._connected().Open, codec.session_to_proto(session))
        self._check_version(reply.version)
        self._session_id = reply.session_id
        self._pending = None
        self._commit = None

    def propose(self, step: int, command: Command) -> None:
        if not self.two_phase:
            self._pending = (step, command)
            return
        self._send_step("propose", step, command, execute=False)

    def execute(self, step: int) -> StepResult:
        pending = self._pending[1] if self._pending is not None and self._pending[0] == step else None
        result = self._send_step("execute", step, pending, execute=True)
        self._pending = None
        if result is None or result.step != step:
            answered = "no result" if result is None else f"step {result.step}"
            raise ModuleError(f"{self.label}: execute of step {step} was answered with {answered}")
        return result

    def commit(self, step: int) -> None:
        """Note the commit; it travels with the next step (or checkpoint, restore, close)."""
        self._commit = step

    def checkpoint(self) -> bytes:
        self._flush_commit()
        request = pb.CheckpointRequest(session_id=self._session_id)
        return self._unary("checkpoint", None, self._connected().Checkpoint, request).state

    def restore(self, state: bytes) -> None:
        self._flush_commit()
        self._pending = None
        self._unary("restore", None, self._connected().Restore, pb.RestoreRequest(session_id=self._session_id, state=state))

    def records(self) -> list[Record]:
        """The site's own records of the open session (the noted commit goes first); none from an older site."""
        if not self._session_id:
            return []
        self._flush_commit()
        request = pb.RecordsRequest(session_id=self._session_id)

        def attempt(timeout: float) -> list[Record]:
            try:
                return codec.records_from_proto(self._connected().Records(request, timeout=timeout))
            except grpc.RpcError as exc:
                if exc.code() is grpc.StatusCode.UNIMPLEMENTED:
                    return []  # a site older than the Records call keeps no records to give
                raise

        return self._with_retries("records", None, attempt)

    def close(self) -> dict[str, float]:
        """End the session (sending a noted commit first); return the site's counters and the wire's."""
        stats: dict[str, float] = {}
        try:
            if self._session_id:
                self._flush_commit()
                reply = self._unary("close", None, self._connected().Close, pb.CloseRequest(session_id=self._session_id))
                stats = dict(reply.stats)
        finally:
            self._session_id = ""
            self._end_stream()
        return {**stats, **{k: float(v) for k, v in self.stats.items()}}

    def disconnect(self) -> None:
        """Close the connection (after ``close``); a later call connects again."""
        self._end_stream()
        if self._channel is not None:
            self._channel.close()
        self._channel = self._stub = None
        self._link_address = self._link_override

    def _steps_transport(self) -> Transport:
        if self.transport != "auto":
            if self.transport == "link" and self._link_address is None:
                raise ModuleError(f"{self.label}: the site serves no step link (a site with mutual TLS serves "
                                  "none): use transport 'stream'")
            if self.transport == "link" and self._token_in_clear_text():
                raise ModuleError(f"{self.label}: the access token would travel to the step link at "
                                  f"{self._link_address} in clear text (the link has no TLS): use transport 'stream', "
                                  "or a link_address on loopback behind a tunnel")
            return self.transport
        # auto takes only the site's Unix socket, found on this filesystem in a folder private to the site's
        # user: a loopback TCP port in a Describe may be another machine's (a container behind a mapped port)
        on_this_machine = self._link_address is not None and self._link_address.startswith(link.UNIX)
        return "link" if on_this_machine and self._latency is None else "stream"

    def _token_in_clear_text(self) -> bool:
        """Whether the step link would carry the access token beyond this machine (the link has no TLS)."""
        address = self._link_address
        return bool(self._credentials.token) and address is not None and not (
            address.startswith(link.UNIX) or is_loopback(address))

    # -- steps on the wire -------------------------------------------------
    def _send_step(self, what: str, step: int, command: Command | None, execute: bool) -> StepResult | None:
        """One lockstep message (the noted commit, ``command`` if given, execute if asked); the result if executed."""
        if self.steps_on == "link":
            try:
                frame = link.step_frame(step, self._commit, command, execute)
            except ValueError as exc:  # vectors of different lengths: the site would refuse them the same way
                raise self._refused(step, str(exc)) from None
            reply = self._with_retries(what, step, lambda timeout: self._link_exchange(frame, timeout))
            self._commit = None
            return reply if isinstance(reply, StepResult) else None
        request = pb.StepRequest(session_id=self._session_id, step=step, execute=execute)
        if self._commit is not None:
            request.commit_step = self._commit
        if command is not None:
            request.command.CopyFrom(codec.command_to_proto(command))
        if self.steps_on == "stream":
            answer = self._with_retries(what, step, lambda timeout: self._stream_exchange(request, timeout))
        else:
            answer = self._unary(what, step, self._connected().Step, request)
        self._commit = None
        return codec.result_from_proto(answer.result) if answer.HasField("result") else None

    def _flush_commit(self) -> None:
        if self._commit is not None:
            step = self._commit
            self._unary("commit", step, self._connected().Commit, pb.CommitRequest(session_id=self._session_id, step=step))
            self._commit = None

    def _stream_exchange(self, request: pb.StepRequest, timeout_s: float) -> pb.StepReply:
        """One request and its reply on the session's stream; a failed stream is dropped (the next opens anew)."""
        if self._stream is None:
            self._stream = _StepStream(self._connected(), watch_tick_s=min(0.05, self.deadline_s / 10))
        try:
            return self._stream.exchange(request, timeout_s)
        except BaseException:
            self._end_stream()
            raise

    def _link_exchange(self, frame: bytes, timeout_s: float) -> StepResult | int:
        """One frame and its reply on the session's link; a failed connection is dropped (the next connects anew)."""
        try:
            if self._link is None:
                assert self._link_address is not None
                self._link = link.LinkConnection(self._link_address, self._credentials.token, self._session_id,
                                                 timeout_s, self._max_message_bytes)
            return self._link.exchange(frame, timeout_s)
        except link.LinkError:
            raise  # the site answered: the connection is sound
        except BaseException as exc:
            self._end_stream()
            if isinstance(exc, OSError) and not isinstance(exc, (TimeoutError, ConnectionError)):
                raise ConnectionError(exc.strerror or str(exc)) from None  # e.g. no route: retried like a refusal
            raise

    def _end_stream(self) -> None:
        """Drop the session's Steps stream and step link connection, if open."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if self._link is not None:
            self._link.close()
            self._link = None

    # -- calls, deadlines, retries, errors ---------------------------------
    def _connected(self) -> pb_grpc.ModuleStub:
        if self._stub is None:
            options = [("grpc.max_send_message_length", self._max_message_bytes),
                       ("grpc.max_receive_message_length", self._max_message_bytes),
                       ("grpc.initial_reconnect_backoff_ms", 50),
                       ("grpc.min_reconnect_backoff_ms", 50),
                       ("grpc.max_reconnect_backoff_ms", 500)]
            try:
                self._channel = self._credentials.channel(self.address, options)
            except ValueError as exc:
                raise ModuleError(f"{self.label}: {exc}") from None
            if self._latency is not None:
                self._channel = grpc.intercept_channel(self._channel, self._latency)
            self._stub = pb_grpc.ModuleStub(self._channel)
        return self._stub

    def _unary(self, what: str, step: int | None, rpc: Callable[..., T], request: object) -> T:
        return self._with_retries(what, step, lambda timeout: rpc(request, timeout=timeout))

    def _with_retries(self, what: str, step: int | None, attempt: Callable[[float], T]) -> T:
        """Run ``attempt(timeout_s)``, again while the site is unreachable and the deadline allows."""
        deadline = time.monotonic() + self.deadline_s
        pause = _RETRY_FIRST_S
        while True:
            try:
                self.stats["wire_round_trips"] += 1
                return attempt(max(deadline - time.monotonic(), 0.0))
            except (grpc.RpcError, link.LinkError, link.MalformedFrame, TimeoutError, ConnectionError) as exc:
                retryable = isinstance(exc, ConnectionError) or (
                    isinstance(exc, grpc.RpcError) and exc.code() is grpc.StatusCode.UNAVAILABLE
                    and _TLS_REFUSED not in (exc.details() or "")) or (
                    isinstance(exc, link.LinkError) and exc.code == link.UNAVAILABLE)
                if retryable and time.monotonic() + pause < deadline:
                    self.stats["wire_retries"] += 1
                    time.sleep(pause)
                    pause = min(2 * pause, _RETRY_MAX_S)
                    continue
                raise self._error(exc, what, step) from None

    def _error(self, exc: Exception, what: str, step: int | None) -> ModuleError:
        """A StepRefused for a refused step, else a ModuleError naming the site, the call and the step."""
        where = f"{self.label}: {what}" + ("" if step is None else f" of step {step}")
        if isinstance(exc, TimeoutError):
            return ModuleError(f"{where}: no reply within the deadline of {self.deadline_s:g} s")
        if isinstance(exc, ConnectionError):
            return ModuleError(f"{where}: {exc}" if self.steps_on != "link" else
                               f"{where}: step link to {self._link_address} lost: {exc}")
        if isinstance(exc, link.MalformedFrame):
            return ModuleError(f"{where}: the site's step link sent a malformed reply: {exc}")
        if isinstance(exc, link.LinkError):
            if exc.step is not None:
                return self._refused(exc.step, str(exc))
            return ModuleError(f"{where}: {exc.code}: {exc}")
        assert isinstance(exc, grpc.RpcError)
        code, details = exc.code(), exc.details() or ""
        refused = dict(exc.trailing_metadata() or ()).get(codec.REFUSED_STEP_KEY)
        if refused is not None:
            return self._refused(int(refused), details)
        if code is grpc.StatusCode.DEADLINE_EXCEEDED:
            return ModuleError(f"{where}: no reply within the deadline of {self.deadline_s:g} s")
        if code is grpc.StatusCode.UNAVAILABLE and _TLS_REFUSED in details:
            return ModuleError(f"{where}: the site's certificate is not trusted: {details}; tls.ca must be the CA "
                               "that signed it, and the address a name it holds")
        if code is grpc.StatusCode.UNAVAILABLE:
            hint = "" if "Socket closed" not in details else (
                "; a site that serves TLS closes the connection of a plaintext client and of a client whose "
                "certificate it does not accept: check the module's tls table (ca, cert, key)")
            return ModuleError(f"{where}: site unreachable for {self.deadline_s:g} s: {details}{hint}")
        return ModuleError(f"{where}: {code.name}: {details}")

    def _refused(self, step: int, details: str) -> StepRefused:
        return StepRefused(step, f"{self.label}: {details.removeprefix(f'step {step} refused: ')}")

    def _check_version(self, version: pb.ProtocolVersion) -> None:
        refusal = codec.version_refusal(version, self.label)
        if refusal:
            raise ModuleError(refusal)
