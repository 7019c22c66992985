"""The coordinator's side of hybridsim.v1.Monitor: the Watch stream and the token-guarded Hold/Resume/Abort.

Every observer's stream runs on a thread of the server's pool and reads only
its own queue; the pool has threads beyond the observer limit, so a control
call always finds one even when every observer has stalled.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import grpc

from hybridsim.coordinator.control import RunControl
from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.ports import BUSY, in_use
from hybridsim.coordinator.monitor.frames import is_terminal
from hybridsim.coordinator.monitor.publisher import Publisher, TooManyObservers
from hybridsim.v1 import monitor_pb2 as pb
from hybridsim.v1 import monitor_pb2_grpc as pb_grpc
from hybridsim.wire.link import IDLE_TIMEOUT_S
from hybridsim.wire.server import connection_limits

log = logging.getLogger(__name__)

CONTROL_WORKERS = 4
"""server threads kept free of observer streams, for the control calls"""
FIRST_STEP_WAIT_S = 0.5
"""how often a Watch waiting for the first step checks that its observer is still there (s)"""


class MonitorServicer(pb_grpc.MonitorServicer):
    def __init__(self, publisher: Publisher, control: RunControl, token: str) -> None:
        self.publisher, self.control, self._token = publisher, control, token.encode()

    def Watch(self, request: pb.WatchRequest, context: grpc.ServicerContext) -> Iterator[pb.MonitorEvent]:
        try:
            watched = None
            while watched is None and context.is_active() and not self.publisher.ended:
                watched = self.publisher.watch(FIRST_STEP_WAIT_S)
        except TooManyObservers as exc:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        if watched is None:
            if self.publisher.ended:  # no step to show: the observer still learns why the run ended
                context.abort(grpc.StatusCode.ABORTED, f"the run ended before its first step: "
                                                       f"{self.publisher.final_state}")
            return
        info, backlog, subscription = watched
        context.add_callback(subscription.close)
        try:
            yield pb.MonitorEvent(info=info)
            for frame in backlog:
                yield pb.MonitorEvent(frame=frame)
            while not subscription.closed or subscription.pending:
                frame = subscription.take(timeout_s=1.0)
                if frame is None:
                    continue
                event = pb.MonitorEvent(frame=frame)
                event.frame.progress.dropped_frames = subscription.dropped
                yield event
                if is_terminal(frame.progress.state):
                    return
        finally:
            self.publisher.unsubscribe(subscription)

    def Hold(self, request: pb.ControlRequest, context: grpc.ServicerContext) -> pb.ControlReply:
        self._authorize(request, context, "Hold")
        self.control.hold()
        return pb.ControlReply(state="held", step=self.publisher.latest_step)

    def Resume(self, request: pb.ControlRequest, context: grpc.ServicerContext) -> pb.ControlReply:
        self._authorize(request, context, "Resume")
        self.control.resume()
        return pb.ControlReply(state="running", step=self.publisher.latest_step)

    def Abort(self, request: pb.ControlRequest, context: grpc.ServicerContext) -> pb.ControlReply:
        self._authorize(request, context, "Abort")
        self.control.abort()
        return pb.ControlReply(state="aborting", step=self.publisher.latest_step)

    def _authorize(self, request: pb.ControlRequest, context: grpc.ServicerContext, call: str) -> None:
        if not request.token:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, f"{call} needs the run's access token")
        if not hmac.compare_digest(request.token.encode(), self._token):
            log.warning("monitor: %s refused: wrong token from %s", call, context.peer())
            context.abort(grpc.StatusCode.UNAUTHENTICATED, f"{call} refused: the token is not this run's")
        if self.publisher.ended:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"{call}: the run has ended")
        log.info("monitor: %s from %s", call, context.peer())


def listen_address(text: str, option: str = "--monitor") -> str:
    """``PORT`` (on loopback) or ``HOST:PORT`` as a bind address; UsageError naming ``option`` and the fix."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", text
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"{option} {text!r}: give PORT or HOST:PORT (e.g. 127.0.0.1:50070; port 0 picks a free one)")
    return f"{host or '127.0.0.1'}:{int(port)}"


class MonitorServer:
    """A gRPC server of hybridsim.v1.Monitor for one run, with the site's connection cap and idle timeout."""

    def __init__(self, address: str, publisher: Publisher, control: RunControl, token: str) -> None:
        self.requested = listen_address(address)
        workers = publisher.max_observers + CONTROL_WORKERS
        # a connection per observer or control client, twice over for reconnections whose old one is closing
        self._server = grpc.server(ThreadPoolExecutor(workers, thread_name_prefix="hybridsim-monitor"),
                                   options=connection_limits(2 * workers, IDLE_TIMEOUT_S))
        pb_grpc.add_MonitorServicer_to_server(MonitorServicer(publisher, control, token), self._server)
        self.address = ""

    def start(self) -> str:
        """Bind and serve; the bound ``host:port``."""
        if in_use(self.requested):
            raise UsageError(f"--monitor {self.requested}: cannot listen there: {BUSY}")
        try:
            port = self._server.add_insecure_port(self.requested)
        except RuntimeError:
            port = 0
        if port == 0:
            raise UsageError(f"--monitor {self.requested}: cannot listen there (port in use or host not local)")
        self._server.start()
        self.address = f"{self.requested.rpartition(':')[0]}:{port}"
        return self.address

    def stop(self, grace_s: float = 1.0) -> None:
        self._server.stop(grace_s).wait()
