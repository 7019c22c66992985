"""The gRPC server of a site: hosts any module behind the hybridsim.v1 Module service.

A site serves one module to one coordinator session at a time.  ``Open``
starts a session on a fresh module (built again by the factory when the
previous one was used), so a second coordinator, or the same one after a
crash, never inherits the step history of the first; the session token it
receives must accompany every later call, and a replaced session's calls
are refused.  Calls are serialised (one module, one lock).

Idempotency is the module's: a retried ``Execute(n)`` (unary, ``Step`` or
the ``Steps`` stream) reaches the module's ``execute(n)``, which answers from
its record (see hybridsim.modules.base.StepLedger) and never applies the step twice.

Errors become gRPC statuses with readable messages (see module.proto);
the server also serves grpc.health.v1 and reflection, refuses messages over
its size limit (RESOURCE_EXHAUSTED) and malformed ones (INVALID_ARGUMENT).
Who may call it is the :class:`~hybridsim.wire.security.SiteAccess`'s: mutual TLS,
an access token, or neither (then on loopback only, unless insecure).
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent import futures
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from hybridsim.v1 import module_pb2 as pb
from hybridsim.wire import codec, site_control
from hybridsim.wire.contract import (Command, Description, Module, ModuleError, Session, StepRefused, StepResult,
                                     check_vector, finish_run, module_records)
from hybridsim.wire.link import IDLE_TIMEOUT_S, INFO_KEY, LinkServer, StepFrame, serves_link
from hybridsim.wire.security import SiteAccess, is_loopback

log = logging.getLogger("hybridsim.site")

MAX_CONNECTIONS = 64
"""gRPC connections a site accepts at once (gRPC closes any more at once): a coordinator, the monitor, site-control
and health probes need a few; a client opening many cannot exhaust the site's file descriptors"""
HANDSHAKE_TIMEOUT_S = 120.0
"""a gRPC connection that completes no handshake within this long (s) is closed (gRPC's own default, named)"""

ModuleFactory = Callable[[], Module]


@dataclass
class _Session:
    """The open session: who opened it, when, and what it has done."""

    token: str
    peer: str
    dof_names: tuple[str, ...]
    run_id: str
    opened: float = field(default_factory=time.monotonic)


class WireRefusal(Exception):
    """A call the site refuses before it reaches the module (bad vector, no session, version)."""

    def __init__(self, code: grpc.StatusCode, message: str, step: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.step = step


class ModuleServicer:
    """The hybridsim.v1 Module service over one module built by ``factory``.

    Methods hold the logic and raise; :func:`_method_handlers` wraps each one
    in the single place that turns exceptions into gRPC statuses.
    """

    def __init__(self, factory: ModuleFactory, site: str, describe_info: Mapping[str, str] | None = None) -> None:
        self.site = site
        self.describe_info = dict(describe_info or {})
        """added to the module's Describe info (the site's configuration: codec.config_info)"""
        self._factory = factory
        self._module = factory()
        self._module_used = False
        self._session: _Session | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.sessions = 0
        self.link_info = ""
        """the step link this site serves, as Describe reports it (hybridsim.wire.link.INFO_KEY); empty: none"""

    @property
    def kind(self) -> str:
        return self._module.describe().kind

    # -- session -----------------------------------------------------------
    def Describe(self, request: pb.DescribeRequest, context: grpc.ServicerContext) -> pb.DescribeReply:
        self._check_version(request.version, context)
        with self._lock:
            description = self._module.describe()
        if self.link_info or self.describe_info:
            link_info = {INFO_KEY: self.link_info} if self.link_info else {}
            description = replace(description, info={**description.info, **self.describe_info, **link_info})
        return codec.description_to_proto(self.site, description)

    def Open(self, request: pb.OpenRequest, context: grpc.ServicerContext) -> pb.OpenReply:
        self._check_version(request.version, context)
        with self._lock:
            if self._closed:
                raise WireRefusal(grpc.StatusCode.FAILED_PRECONDITION, f"site {self.site} is shutting down")
            takeover = dict(context.invocation_metadata() or ()).get(codec.TAKEOVER_KEY) == "yes"
            token = self._open(codec.session_from_proto(request), context.peer(), takeover)
            return pb.OpenReply(version=codec.PROTOCOL, session_id=token)

    def _open(self, session: Session, peer: str, takeover: bool = True) -> str:
        """Open ``session`` on a fresh module; its token.  Holds the lock.  While a session is open at a site
        that moves something (a module with ``exclusive_sessions``: an experimental site, a plant, a site
        with limits), only a ``takeover`` ends it (logged); else the Open is refused: a second coordinator
        must not drive a lab in the middle of another's test.  A numerical site's session is replaced."""
        if self._session is not None:
            held = self._session
            if not takeover and getattr(self._module, "exclusive_sessions", False):
                log.warning("site %s: Open from %s refused: session %s of run %s (opened by %s) is open", self.site,
                            peer, held.token, held.run_id or "-", held.peer)
                raise WireRefusal(grpc.StatusCode.FAILED_PRECONDITION,
                                  f"site {self.site} is in the session of run {held.run_id or '-'} (opened by "
                                  f"{held.peer} {time.monotonic() - held.opened:.0f} s ago); a coordinator takes "
                                  "it over only when asked to (hybridsim run/resume --takeover)")
            log.warning("site %s: session %s of run %s taken over by %s", self.site, held.token,
                        held.run_id or "-", peer)
            self._end_session(f"taken over by a new session from {peer}")
        if self._module_used:
            previous, self._module = self._module, self._factory()
            if hasattr(previous, "interlock"):  # a site's hold outlives its sessions (hybridsim.modules.experimental.gate)
                self._module.interlock = previous.interlock
        self._module_used = True
        self._module.open(session)
        self._session = _Session(secrets.token_hex(8), peer, session.dof_names, session.run_id)
        self.sessions += 1
        log.info("site %s: session %s opened by %s (run %s, %d DOFs, dt %g s)", self.site,
                 self._session.token, self._session.peer, session.run_id or "-", len(session.dof_names),
                 session.dt)
        return self._session.token

    def Close(self, request: pb.CloseRequest, context: grpc.ServicerContext) -> pb.CloseReply:
        with self._lock:
            self._require_session(request.session_id)
            if request.run_completed:
                finish_run(self._module)
            return pb.CloseReply(stats=self._end_session("closed by the coordinator" + (
                " (run completed)" if request.run_completed else "")))

    def close(self, reason: str) -> None:
        """End the open session, if any, and refuse new ones (the server is shutting down)."""
        with self._lock:
            self._closed = True
            if self._session is not None:
                self._end_session(reason)

    # -- steps -------------------------------------------------------------
    def Propose(self, request: pb.ProposeRequest, context: grpc.ServicerContext) -> pb.ProposeReply:
        with self._lock:
            self._require_session(request.session_id)
            self._propose(request.step, codec.command_from_proto(request.command))
            return pb.ProposeReply(step=request.step)

    def Execute(self, request: pb.ExecuteRequest, context: grpc.ServicerContext) -> pb.ExecuteReply:
        with self._lock:
            self._require_session(request.session_id)
            return pb.ExecuteReply(result=codec.result_to_proto(self._module.execute(request.step)))

    def Commit(self, request: pb.CommitRequest, context: grpc.ServicerContext) -> pb.CommitReply:
        with self._lock:
            self._require_session(request.session_id)
            self._module.commit(request.step)
            return pb.CommitReply(step=request.step)

    def Step(self, request: pb.StepRequest, context: grpc.ServicerContext) -> pb.StepReply:
        with self._lock:
            return self._step(request)

    def Steps(self, requests: Iterator[pb.StepRequest], context: grpc.ServicerContext) -> Iterator[pb.StepReply]:
        for request in requests:
            with self._lock:
                yield self._step(request)

    def link_step(self, session_id: str, frame: StepFrame) -> StepResult | None:
        """One step frame of the step link (hybridsim.wire.link): what ``Steps`` does with a StepRequest."""
        return self.channel_step(session_id, frame.step, frame.commit_step, frame.command, frame.execute)

    # -- the labs' protocols (hybridsim.wire.protocols.openfresco, hybridsim.wire.protocols.simcor) go through these ----------
    def describe_module(self) -> Description:
        """The module's description (what Describe answers)."""
        with self._lock:
            return self._module.describe()

    def open_channel_session(self, session: Session, peer: str) -> str:
        """Open a session as ``Open`` does, for a channel without gRPC (a lab's protocol); its token.  The same
        rule on every port: at a site that moves something a protocol session never takes over an open one."""
        with self._lock:
            if self._closed:
                raise WireRefusal(grpc.StatusCode.FAILED_PRECONDITION, f"site {self.site} is shutting down")
            return self._open(session, peer, takeover=False)

    def channel_step(self, session_id: str, step: int, commit_step: int | None, command: Command | None,
                     execute: bool) -> StepResult | None:
        """What one ``Steps`` message does: commit, propose, execute, as far as asked (same checks, same refusals)."""
        with self._lock:
            return self._do_step(session_id, step, commit_step, command, execute)

    def close_channel_session(self, session_id: str, reason: str) -> dict[str, float]:
        """End the session ``session_id`` if it is still the open one; its counters (empty if it was not)."""
        with self._lock:
            if self._session is None or self._session.token != session_id:
                return {}
            return self._end_session(reason)

    def _step(self, request: pb.StepRequest) -> pb.StepReply:
        command = codec.command_from_proto(request.command) if request.HasField("command") else None
        commit = request.commit_step if request.HasField("commit_step") else None
        return codec.step_reply(request.step, self._do_step(request.session_id, request.step, commit, command,
                                                            request.execute))

    def _do_step(self, session_id: str, step: int, commit_step: int | None, command: Command | None,
                 execute: bool) -> StepResult | None:
        """Commit the previous step, propose this one, execute it: as far as the request asks."""
        self._require_session(session_id)
        if commit_step is not None:
            self._module.commit(commit_step)
        if command is not None:
            self._propose(step, command)
        return self._module.execute(step) if execute else None

    def _propose(self, step: int, command: Command) -> None:
        """Refuse a vector of the wrong length or with NaN/Inf (INVALID_ARGUMENT), then propose."""
        n = len(self._session.dof_names)  # type: ignore[union-attr]
        for name in ("displacement", "velocity", "acceleration"):
            values = getattr(command, name)
            if values is not None:
                try:
                    check_vector(step, name, values, n)
                except StepRefused as exc:
                    raise WireRefusal(grpc.StatusCode.INVALID_ARGUMENT, str(exc), step) from None
        self._module.propose(step, command)

    # -- state -------------------------------------------------------------
    def Checkpoint(self, request: pb.CheckpointRequest, context: grpc.ServicerContext) -> pb.CheckpointReply:
        with self._lock:
            self._require_session(request.session_id)
            return pb.CheckpointReply(state=self._module.checkpoint())

    def Restore(self, request: pb.RestoreRequest, context: grpc.ServicerContext) -> pb.RestoreReply:
        with self._lock:
            self._require_session(request.session_id)
            self._module.restore(request.state)
            return pb.RestoreReply()

    def Records(self, request: pb.RecordsRequest, context: grpc.ServicerContext) -> Iterator[pb.RecordChunk]:
        with self._lock:
            self._require_session(request.session_id)
            records = module_records(self._module, request.since, not request.partial)
        yield from codec.records_to_proto(records)

    def Echo(self, request: pb.EchoRequest, context: grpc.ServicerContext) -> pb.EchoReply:
        return pb.EchoReply(payload=request.payload)

    def interlock(self) -> Any:
        """The site's hold (its module's, handed from session to session; None: a site without one), for the
        operator's service (:mod:`hybridsim.wire.site_control`)."""
        with self._lock:
            return getattr(self._module, "interlock", None)

    def reported(self, exc: Exception) -> str:
        """Log ``exc`` as the gRPC service reports a failure (a warning, a traceback if unexpected); its message."""
        return _reported(self.site, exc)[1]

    # -- helpers -----------------------------------------------------------
    def _end_session(self, reason: str) -> dict[str, float]:
        session, self._session = self._session, None
        assert session is not None
        stats = self._module.close()
        counts = ", ".join(f"{k} {v:g}" for k, v in stats.items())
        log.info("site %s: session %s %s after %.1f s: %s", self.site, session.token, reason,
                 time.monotonic() - session.opened, counts or "no counters")
        return stats

    def _require_session(self, token: str) -> None:
        if self._closed:
            raise WireRefusal(grpc.StatusCode.FAILED_PRECONDITION, f"site {self.site} is shutting down")
        if self._session is None:
            raise WireRefusal(grpc.StatusCode.FAILED_PRECONDITION, f"site {self.site} has no open session: call Open first")
        if token != self._session.token:
            raise WireRefusal(grpc.StatusCode.FAILED_PRECONDITION,
                              f"session {token or '(none)'} is not the open session of site {self.site} "
                              f"(a newer session {self._session.token} was opened by {self._session.peer})")

    def _check_version(self, version: pb.ProtocolVersion, context: grpc.ServicerContext) -> None:
        refusal = codec.version_refusal(version, f"coordinator at {context.peer()}")
        if refusal:
            raise WireRefusal(grpc.StatusCode.FAILED_PRECONDITION, refusal)


def _status_of(exc: Exception) -> tuple[grpc.StatusCode, str, int | None]:
    """The status, message and refused step (if any) that report ``exc``."""
    if isinstance(exc, WireRefusal):
        return exc.code, str(exc), exc.step
    if isinstance(exc, StepRefused):
        return grpc.StatusCode.FAILED_PRECONDITION, str(exc), exc.step
    if isinstance(exc, ModuleError):
        return grpc.StatusCode.FAILED_PRECONDITION, str(exc), None
    return grpc.StatusCode.INTERNAL, f"the module raised {type(exc).__name__}: {exc}", None


def _reported(site: str, exc: Exception) -> tuple[grpc.StatusCode, str, int | None]:
    """:func:`_status_of` ``exc``, logged (with the traceback of an unexpected exception)."""
    code, message, step = _status_of(exc)
    if code is grpc.StatusCode.INTERNAL:
        log.error("site %s: %s", site, message, exc_info=exc)
    else:
        log.warning("site %s: %s", site, message)
    return code, message, step


def _abort(site: str, context: grpc.ServicerContext, exc: Exception) -> NoReturn:
    code, message, step = _reported(site, exc)
    if step is not None:
        context.set_trailing_metadata(((codec.REFUSED_STEP_KEY, str(step)),))
    context.abort(code, message)
    raise AssertionError("unreachable: context.abort raises")


def _link_status(site: str, exc: Exception) -> tuple[str, str, int | None]:
    """The status (by name), message and refused step of the step link's ERROR frame for ``exc``."""
    code, message, step = _reported(site, exc)
    return code.name, message, step


class _Malformed:
    """A request that did not parse; the handler refuses it with INVALID_ARGUMENT."""

    def __init__(self, message_type: str, error: DecodeError) -> None:
        self.refusal = WireRefusal(grpc.StatusCode.INVALID_ARGUMENT, f"malformed {message_type} message: {error}")


def _tolerant_parser(message_class: Any) -> Callable[[bytes], Any]:
    def parse(data: bytes) -> Any:
        try:
            return message_class.FromString(data)
        except DecodeError as exc:
            return _Malformed(message_class.DESCRIPTOR.full_name, exc)
    return parse


def _parsed(request: Any) -> Any:
    if isinstance(request, _Malformed):
        raise request.refusal
    return request


def _guarded(site: str, behavior: Callable[..., Any], streaming: bool, replies: bool = False) -> Callable[..., Any]:
    """``behavior`` with malformed requests refused and exceptions reported as statuses.

    ``streaming``: a stream of requests (and of replies); ``replies``: one request, a stream of replies."""
    def unary(request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return behavior(_parsed(request), context)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a status
            _abort(site, context, exc)

    def stream(requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        try:
            yield from behavior((_parsed(r) for r in requests), context)
        except grpc.RpcError:
            return  # the client cancelled or went away: the call is over already
        except Exception as exc:  # noqa: BLE001 - every failure becomes a status
            _abort(site, context, exc)

    def reply_stream(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        try:
            yield from behavior(_parsed(request), context)
        except grpc.RpcError:
            return
        except Exception as exc:  # noqa: BLE001 - every failure becomes a status
            _abort(site, context, exc)

    return stream if streaming else reply_stream if replies else unary


def _method_handlers(servicer: ModuleServicer) -> dict[str, grpc.RpcMethodHandler]:
    """One handler per rpc of module.proto."""
    handlers = {}
    for method in pb.DESCRIPTOR.services_by_name["Module"].methods:
        request_class = getattr(pb, method.input_type.name)
        reply_class = getattr(pb, method.output_type.name)
        behavior = _guarded(servicer.site, getattr(servicer, method.name), method.client_streaming,
                            method.server_streaming)
        make = (grpc.stream_stream_rpc_method_handler if method.client_streaming else
                grpc.unary_stream_rpc_method_handler if method.server_streaming else grpc.unary_unary_rpc_method_handler)
        handlers[method.name] = make(behavior, request_deserializer=_tolerant_parser(request_class),
                                     response_serializer=reply_class.SerializeToString)
    return handlers


def connection_limits(max_connections: int, idle_timeout_s: float) -> list[tuple[str, int]]:
    """gRPC server options: at most ``max_connections`` connections (more are closed at once); one with no call in
    flight for ``idle_timeout_s`` (s) is closed, one without a handshake after min(that, HANDSHAKE_TIMEOUT_S)."""
    return [("grpc.max_allowed_incoming_connections", max_connections),
            ("grpc.max_connection_idle_ms", round(1000 * idle_timeout_s)),
            ("grpc.server_handshake_timeout_ms", round(1000 * min(idle_timeout_s, HANDSHAKE_TIMEOUT_S)))]


class SiteServer:
    """A running site: the Module service, grpc.health.v1 and reflection on ``listen``.

    ``listen`` is HOST:PORT; port 0 picks a free port, read it from :attr:`port`.
    Messages larger than ``max_message_bytes`` are refused both ways.
    ``access`` says who may call (default: anyone on loopback; any other
    address needs TLS, a token or ``SiteAccess(insecure=True)``).
    ``health_listen`` (a loopback HOST:PORT) serves grpc.health.v1 alone in
    plaintext, for a probe that holds no credentials (a compose healthcheck).
    ``link_listen`` (HOST:PORT; None: none) serves the step link (hybridsim.wire.link)
    beside the service, with the site's token, on TCP and on a Unix socket in
    a folder private to this user; Describe tells clients where.  A site with
    mutual TLS serves no link.  A link connection that sends nothing for
    ``link_idle_timeout_s`` (s) is closed (its client reconnects at its next step).  At most ``max_connections``
    gRPC connections at once (on ``listen``, and on ``health_listen``); one with no call in flight for ``idle_timeout_s`` (s) is closed (a client reconnects
    at its next call), one without a handshake after ``min(idle_timeout_s, HANDSHAKE_TIMEOUT_S)``, and keepalive
    pings close one whose peer vanished during a call.  gRPC's accept loop tries again after EMFILE.
    """

    def __init__(self, factory: ModuleFactory, site: str, listen: str = "127.0.0.1:0",
                 max_message_bytes: int = codec.DEFAULT_MAX_MESSAGE_BYTES, max_workers: int = 8,
                 interceptors: Sequence[grpc.ServerInterceptor] = (), access: SiteAccess = SiteAccess(),
                 health_listen: str | None = None, link_listen: str | None = "127.0.0.1:0",
                 link_idle_timeout_s: float = IDLE_TIMEOUT_S, describe_info: Mapping[str, str] | None = None,
                 max_connections: int = MAX_CONNECTIONS, idle_timeout_s: float = IDLE_TIMEOUT_S) -> None:
        refusal = access.listen_refusal(listen)
        if refusal:
            raise ModuleError(refusal)
        if health_listen is not None and not is_loopback(health_listen):
            raise ModuleError(f"--health-listen {health_listen}: the plaintext health port serves on loopback only "
                              "(e.g. 127.0.0.1:50052)")
        self.access = access
        self.servicer = ModuleServicer(factory, site, describe_info)
        options = [("grpc.max_receive_message_length", max_message_bytes),
                   ("grpc.max_send_message_length", max_message_bytes),
                   ("grpc.so_reuseport", 0),
                   # ping idle clients so that a vanished coordinator's stream frees its worker
                   ("grpc.keepalive_time_ms", 20_000), ("grpc.keepalive_timeout_ms", 10_000),
                   *connection_limits(max_connections, idle_timeout_s)]
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix=f"site-{site}"),
                                   interceptors=(*access.interceptors(site), *interceptors), options=options)
        handlers = _method_handlers(self.servicer)
        self._server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(codec.SERVICE_NAME, handlers),))
        self._server.add_registered_method_handlers(codec.SERVICE_NAME, handlers)
        self._server.add_generic_rpc_handlers((site_control.handler(self.servicer),))  # behind the same access
        self._health = health.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
        reflection.enable_server_reflection((codec.SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME),
                                            self._server)
        self.port = _bind(self._server, listen, None if access.tls is None else access.tls.server_credentials())
        self.address = f"{listen.rpartition(':')[0]}:{self.port}"
        self._health_server: grpc.Server | None = None
        self.health_address = ""
        if health_listen is not None:
            self._health_server = grpc.server(futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="site-health"),
                                              options=connection_limits(max_connections, idle_timeout_s))
            health_pb2_grpc.add_HealthServicer_to_server(self._health, self._health_server)
            self.health_address = f"{health_listen.rpartition(':')[0]}:{_bind(self._health_server, health_listen, None)}"
            self._health_server.start()
        self._link: LinkServer | None = None
        self._link_folder: Path | None = None
        try:
            self._link = self._start_link(link_listen, max_message_bytes, link_idle_timeout_s)
            self._server.start()
        except BaseException:  # stop what started before the failure: no folder, thread or port is left behind
            self._server.stop(0)
            self._stop_beside_grpc()
            raise
        for service in ("", codec.SERVICE_NAME):
            self._health.set(service, health_pb2.HealthCheckResponse.SERVING)
        log.info("site %s: %s module listening on %s (%s)%s%s", site, self.servicer.kind, self.address, access.mode,
                 f", health on {self.health_address}" if self.health_address else "",
                 f", step link on {self._link.address}" if self._link else "")

    def _start_link(self, listen: str | None, max_frame_bytes: int, idle_timeout_s: float) -> LinkServer | None:
        if listen is None:
            return None
        tls = self.access.tls
        refusal = serves_link(listen, tls is not None and tls.client_ca is not None, self.access.insecure)
        if refusal and is_loopback(listen):
            log.info("site %s: %s", self.servicer.site, refusal)
            return None
        if refusal:
            raise ModuleError(refusal)
        site = self.servicer.site
        self._link_folder = _private_folder() if hasattr(socket, "AF_UNIX") else None
        try:
            link = LinkServer(site, self.servicer.link_step, lambda exc: _link_status(site, exc), listen,
                              self.access.token, max_frame_bytes, unix_folder=self._link_folder,
                              idle_timeout_s=idle_timeout_s)
        except OSError as exc:  # the caller removes the folder
            raise ModuleError(f"--link-listen {listen}: cannot serve the step link there: {exc.strerror}") from None
        self.servicer.link_info = link.info
        return link

    def stop(self, grace_s: float = 0.5) -> None:
        """Report NOT_SERVING, end the session once the module call in flight returns, stop.

        Later calls are refused; idle streams are cancelled after ``grace_s``.
        """
        self._health.enter_graceful_shutdown()
        self.servicer.close("ended by the site's shutdown")
        self._server.stop(grace_s).wait()
        self._stop_beside_grpc()
        log.info("site %s: stopped after %d session(s)", self.servicer.site, self.servicer.sessions)

    def _stop_beside_grpc(self) -> None:
        """Stop the step link (and remove its folder) and the health server, those of them that run."""
        if self._link is not None:
            self._link.stop()
        self._remove_link_folder()
        if self._health_server is not None:
            self._health_server.stop(0).wait()

    def _remove_link_folder(self) -> None:
        if self._link_folder is not None:
            shutil.rmtree(self._link_folder, ignore_errors=True)

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the server stops; True if it did within ``timeout_s``."""
        return self._server.wait_for_termination(timeout_s)


LINK_FOLDER_PREFIX = "hybridsim-link-"
"""the name of a site's link folder in the temporary folder: this prefix, the site's process id, "-", a random part"""


def _private_folder() -> Path | None:
    """A new folder only this user may enter (for the link's Unix socket); None where none can be made.

    The folders that sites killed before they could stop (SIGKILL) left behind are removed first."""
    remove_stale_link_folders(Path(tempfile.gettempdir()))
    try:
        return Path(tempfile.mkdtemp(prefix=f"{LINK_FOLDER_PREFIX}{os.getpid()}-"))  # mode 0700
    except OSError as exc:
        log.info("no step link on a Unix socket: cannot make its folder: %s", exc)
        return None


def remove_stale_link_folders(folder: Path) -> list[Path]:
    """Remove this user's link folders in ``folder`` whose site process no longer runs; the removed ones."""
    removed = []
    for path in folder.glob(f"{LINK_FOLDER_PREFIX}*-*"):
        pid = path.name.removeprefix(LINK_FOLDER_PREFIX).partition("-")[0]
        try:
            ours = path.lstat().st_uid == os.getuid() and not path.is_symlink()
        except OSError:
            continue
        if ours and pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _bind(server: grpc.Server, listen: str, credentials: grpc.ServerCredentials | None) -> int:
    """Add the port ``listen`` (HOST:PORT), with TLS when ``credentials``; the bound port."""
    try:
        if credentials is None:
            return server.add_insecure_port(listen)
        return server.add_secure_port(listen, credentials)
    except RuntimeError as exc:
        raise ModuleError(f"cannot listen on {listen}: {exc}") from None
