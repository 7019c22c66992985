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

The steps go through a **channel** (:mod:`hybridsim.wire.channels`): the ``Steps``
stream, one unary ``Step`` call each, or the site's step link (a Unix socket or TCP beside
the gRPC service), each carrying what module.proto's StepRequest and StepReply say and translating
its own errors.  The remote module keeps the control plane (describe, open, checkpoint, restore,
close, on gRPC) and the retry rule, and chooses the channel at ``open``: ``transport="auto"``
takes the link where the site's Unix socket is on this machine, else the stream.

Every call has a deadline (``deadline_s``).  An unreachable site is retried
until the deadline runs out (the step IDs make a resent step harmless: the
site answers a repeated execute from its record); a silent or dead site
raises :class:`~hybridsim.wire.contract.ModuleError` within the deadline.  Every error
names the site, its address, the call and the step.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import grpc

from hybridsim.v1 import module_pb2 as pb
from hybridsim.v1 import module_pb2_grpc as pb_grpc
from hybridsim.wire import codec, link, site_control
from hybridsim.wire.channels import CHANNELS, Transport
from hybridsim.wire.channels.base import Call, Channel, Endpoints, Retry, StepMessage
from hybridsim.wire.channels.rpc import call_rpc, rpc_failure
from hybridsim.wire.contract import Command, Description, ModuleError, Record, Session, StepResult
from hybridsim.wire.credentials import ClientCredentials
from hybridsim.wire.network import Network, NetworkEmulator
from hybridsim.wire.security import is_loopback

T = TypeVar("T")

_RETRY_FIRST_S = 0.02
_RETRY_MAX_S = 0.5


class RemoteModule:
    """The module served by a ``hybridsim site`` daemon at ``address``.

    RemoteModule(address, name="", deadline_s=10.0, transport="auto", two_phase=False, network=None,
                 credentials=None, link_address=None)

    address     HOST:PORT of the site (e.g. "127.0.0.1:50051", "left:50051")
    name        the site's name in error messages (default: the address)
    deadline_s  the longest one call may take, retries included (s); the
                first call (describe) also waits this long for a site
                that is still starting
    transport   "stream" (one bidirectional Steps call for the session),
                "unary" (one Step call per step), "link" (each step as
                one fixed binary frame on the site's step link, a Unix socket or TCP
                beside the gRPC service: see hybridsim.wire.link; the fastest,
                for a site on the same machine or a trusted network; the
                other calls stay on gRPC) or "auto" (the link where the Unix socket
                its last ``describe`` offered is on this machine, else the
                stream; the stream across an emulated ``network``), decided at
                ``open``
    two_phase   send each proposal on its own round trip (see module doc)
    network     a :class:`hybridsim.wire.network.Network`: every connection to the
                site (gRPC, the step link on TCP) goes through a proxy that emulates
                it (latency, jitter, loss as TCP resends); a distant lab on loopback
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
                 two_phase: bool = False, network: Network | None = None,
                 max_message_bytes: int = codec.DEFAULT_MAX_MESSAGE_BYTES,
                 credentials: ClientCredentials | None = None, link_address: str | None = None) -> None:
        if not deadline_s > 0:
            raise ValueError(f"deadline_s must be a positive number of seconds, not {deadline_s!r}")
        if network is not None and link_address is not None and link_address.startswith(link.UNIX):
            raise ValueError("network emulation goes through TCP: give a HOST:PORT link_address, not a Unix socket")
        self.address = address
        self.name = name or address
        self.deadline_s = float(deadline_s)
        self.transport = transport
        self.steps_on: Transport = "stream" if transport == "auto" else transport
        """the channel the steps of the open session take ("auto" resolved at ``open``)"""
        self.two_phase = two_phase
        self._network = None if network is None else NetworkEmulator(network)
        self._credentials = credentials or ClientCredentials()
        self._max_message_bytes = max_message_bytes
        self._grpc: grpc.Channel | None = None
        self._stub: pb_grpc.ModuleStub | None = None
        self._link_override = link_address
        self._link_address = link_address
        self._steps: Channel | None = None
        self._session_id = ""
        self._pending: tuple[int, Command] | None = None
        self._commit: int | None = None
        self._run_completed = False
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
        same_machine = is_loopback(self.address) and self._network is None  # an emulated path is TCP
        self._link_address = self._link_override or link.link_address(description.info, same_machine)
        return description

    def open(self, session: Session) -> None:
        self._end_steps()
        if self.transport == "link" and self._link_address is None:
            self.describe()
        self.steps_on = self._steps_transport()
        link_address = self._link_address
        if self._network is not None and link_address is not None:
            link_address = self._network.route(link_address)
        endpoints = Endpoints(self.label, self._connected, link_address, self._credentials.token,
                              self._max_message_bytes, self.deadline_s, stream_fallback=self.transport == "auto")
        steps = CHANNELS[self.steps_on](endpoints)
        metadata = ((codec.TAKEOVER_KEY, "yes"),) if session.takeover else ()
        reply = self._unary("open", None, partial(self._connected().Open, metadata=metadata),
                            codec.session_to_proto(session))
        self._check_version(reply.version)
        self._steps = steps
        self._session_id = reply.session_id
        self._pending = None
        self._commit = None
        self._run_completed = False

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

    def records(self, since: int = 0, final: bool = True) -> list[Record]:
        """The site's own records of the open session (the noted commit goes first; ``since`` and ``final``:
        see :class:`hybridsim.wire.contract.Record`); none from an older site."""
        if not self._session_id:
            return []
        self._flush_commit()
        request = pb.RecordsRequest(session_id=self._session_id, since=since, partial=not final)

        def attempt(call: Call, timeout: float) -> list[Record]:
            try:
                return codec.records_from_proto(self._connected().Records(request, timeout=timeout))
            except grpc.RpcError as exc:
                if exc.code() is grpc.StatusCode.UNIMPLEMENTED:
                    return []  # a site older than the Records call keeps no records to give
                raise rpc_failure(exc, call) from None

        return self._with_retries("records", None, attempt)

    def hold(self, reason: str) -> None:
        """Hold the site with ``reason``: its gate refuses every command until an operator clears it (the site's
        operator service, :mod:`hybridsim.wire.site_control`)."""
        self._connected()
        site_control.call(self._grpc, "Hold", {"reason": reason}, self.deadline_s)

    def finish(self) -> None:
        """The run completed: the Close tells the site so (see :func:`hybridsim.wire.contract.finish_run`)."""
        self._run_completed = True

    def close(self) -> dict[str, float]:
        """End the session (sending a noted commit first); return the site's counters and the wire's."""
        stats: dict[str, float] = {}
        try:
            if self._session_id:
                self._flush_commit()
                request = pb.CloseRequest(session_id=self._session_id, run_completed=self._run_completed)
                reply = self._unary("close", None, self._connected().Close, request)
                stats = dict(reply.stats)
        finally:
            self._session_id = ""
            self._end_steps()
        network = self._network.stats() if self._network is not None else {}
        return {**stats, **{k: float(v) for k, v in self.stats.items()}, **network}

    def disconnect(self) -> None:
        """Close the connection (after ``close``); a later call connects again."""
        self._end_steps()
        if self._grpc is not None:
            self._grpc.close()
        self._grpc = self._stub = None
        self._link_address = self._link_override
        if self._network is not None:
            self._network.close()

    def _steps_transport(self) -> Transport:
        """The channel of the session's steps: the one asked for; for "auto", the link when it is on this machine."""
        if self.transport != "auto":
            return self.transport
        # auto takes only the site's Unix socket, found on this filesystem in a folder private to the site's
        # user: a loopback TCP port in a Describe may be another machine's (a container behind a mapped port)
        on_this_machine = self._link_address is not None and self._link_address.startswith(link.UNIX)
        return "link" if on_this_machine else "stream"

    # -- steps -------------------------------------------------------------
    def _send_step(self, what: str, step: int, command: Command | None, execute: bool) -> StepResult | None:
        """One lockstep message (the noted commit, ``command`` if given, execute if asked); the result if executed."""
        steps = self._steps
        if steps is None:
            raise ModuleError(f"{self.label}: {what} of step {step}: no open session (call open first)")
        message = StepMessage(self._session_id, step, self._commit, command, execute)
        result = self._with_retries(what, step, lambda call, timeout: steps.exchange(message, call, timeout))
        self._commit = None
        return result

    def _flush_commit(self) -> None:
        if self._commit is not None:
            step = self._commit
            self._unary("commit", step, self._connected().Commit, pb.CommitRequest(session_id=self._session_id, step=step))
            self._commit = None

    def _end_steps(self) -> None:
        """Close the channel of the session's steps, if open."""
        if self._steps is not None:
            self._steps.close()
            self._steps = None

    # -- calls, deadlines, retries -----------------------------------------
    def _connected(self) -> pb_grpc.ModuleStub:
        if self._stub is None:
            options = [("grpc.max_send_message_length", self._max_message_bytes),
                       ("grpc.max_receive_message_length", self._max_message_bytes),
                       ("grpc.initial_reconnect_backoff_ms", 50),
                       ("grpc.min_reconnect_backoff_ms", 50),
                       ("grpc.max_reconnect_backoff_ms", 500)]
            try:
                if self._network is None:
                    self._grpc = self._credentials.channel(self.address, options)
                else:
                    self._grpc = self._credentials.channel(self._network.route(self.address), options,
                                                           site=self.address)
            except (ValueError, OSError) as exc:
                raise ModuleError(f"{self.label}: {exc}") from None
            self._stub = pb_grpc.ModuleStub(self._grpc)
        return self._stub

    def _unary(self, what: str, step: int | None, rpc: Callable[..., T], request: Any) -> T:
        return self._with_retries(what, step, lambda call, timeout: call_rpc(rpc, request, call, timeout))

    def _with_retries(self, what: str, step: int | None, attempt: Callable[[Call, float], T]) -> T:
        """Run ``attempt(call, timeout_s)``, again while it raises Retry (an unreachable site) and the deadline allows."""
        call = Call(self.label, what, step, self.deadline_s)
        deadline = time.monotonic() + self.deadline_s
        pause = _RETRY_FIRST_S
        while True:
            self.stats["wire_round_trips"] += 1
            try:
                return attempt(call, max(deadline - time.monotonic(), 0.0))
            except Retry as retry:
                if time.monotonic() + pause >= deadline:
                    raise retry.error from None
                self.stats["wire_retries"] += 1
                time.sleep(pause)
                pause = min(2 * pause, _RETRY_MAX_S)

    def _check_version(self, version: pb.ProtocolVersion) -> None:
        refusal = codec.version_refusal(version, self.label)
        if refusal:
            raise ModuleError(refusal)
