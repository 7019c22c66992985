"""`hybridsim monitor COORDINATOR`: the web page of a running test, fed by one observer stream.

One thread watches the coordinator (hybridsim.v1.Monitor Watch) and keeps the
run's frames; every browser gets the history so far and then the live frames
as server-sent events.  A browser that falls behind is disconnected (its
EventSource reconnects and starts again from the history), so it never holds
up the others.  The controls (POST /api/hold, /api/resume, /api/abort with
the token in the X-Hybridsim-Token header) are passed to the coordinator,
which checks the token.  A page served on loopback answers only requests whose ``Host`` is a loopback
name (localhost, 127.0.0.1, [::1]): a page of another site that rebinds its own name to 127.0.0.1 gets
421 and reads nothing.  Routes::

    GET  /            the page
    GET  /events      server-sent events: link, info, frame
    GET  /api/state   the link and the last progress (JSON)
    POST /api/<call>  hold | resume | abort
"""

from __future__ import annotations

import json
import logging
import queue
import socket
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc

from hybridsim.coordinator.monitor.frames import merged_chunks
from hybridsim.coordinator.monitor.jsonview import frame_json, info_json, progress_json
from hybridsim.coordinator.monitor.page import render_page
from hybridsim.v1 import monitor_pb2 as pb
from hybridsim.v1 import monitor_pb2_grpc as pb_grpc
from hybridsim.wire.link import accept
from hybridsim.wire.security import is_loopback

log = logging.getLogger(__name__)

CONTROL_DEADLINE_S = 10.0
"""how long a Hold, Resume or Abort waits for the coordinator's answer (s): a coordinator busy on a loaded machine
answered after more than 3 s (the page showed 502 for a call the coordinator then carried out)"""
RETRY_S = 0.5
"""pause before watching again after a run ended or the coordinator was unreachable"""
RECONNECT_BACKOFF_MS = 500
"""the channel's reconnect backoff, capped: a coordinator that starts a new run on the same address is seen
within about a second (gRPC's default backoff grows to two minutes, and the page kept showing the last run)"""
BROWSER_QUEUE = 256
"""events a browser may fall behind before it is disconnected"""
MAX_CONNECTIONS = 32
"""connections the page serves at once; another is closed at once (logged): a client opening many cannot exhaust
the coordinator's threads and file descriptors (a browser holds two or three)"""
IDLE_TIMEOUT_S = 60.0
"""a connection that sends nothing (or takes nothing of the events stream, which sends a keep-alive every
15 s) for this long (s) is closed: a half-open one whose peer is gone without a word"""
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
_STATUS_OF_CODE = {grpc.StatusCode.UNAUTHENTICATED: HTTPStatus.UNAUTHORIZED,
                   grpc.StatusCode.FAILED_PRECONDITION: HTTPStatus.CONFLICT}


class RunFeed:
    """The run as browsers see it: its info, its frames so far, the link to the coordinator, the browsers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.info: pb.RunInfo | None = None
        self._frames: list[pb.Frame] = []
        self.progress: pb.Progress | None = None
        self.link = {"text": "connecting to the coordinator", "ok": False}
        self._browsers: set[queue.Queue[tuple[str, str] | None]] = set()

    def start_run(self, info: pb.RunInfo) -> None:
        with self._lock:
            self.info, self._frames, self.progress = info, [], None
            self._send("info", json.dumps(info_json(info)))

    def add(self, frame: pb.Frame) -> None:
        with self._lock:
            if self.info is None:
                return
            if len(frame.step):
                self._frames.append(frame)
            self.progress = frame.progress
            self._send("frame", json.dumps(frame_json(frame, self.info), allow_nan=False))

    def set_link(self, text: str, ok: bool) -> None:
        with self._lock:
            if self.link != {"text": text, "ok": ok}:
                self.link = {"text": text, "ok": ok}
                self._send("link", json.dumps(self.link))

    def join(self) -> tuple[list[tuple[str, str]], queue.Queue[tuple[str, str] | None]]:
        """A new browser: the events that bring it up to date and its queue of the events that follow."""
        with self._lock:
            events = [("link", json.dumps(self.link))]
            if self.info is not None:
                events.append(("info", json.dumps(info_json(self.info))))
                events += [("frame", json.dumps(frame_json(f, self.info), allow_nan=False))
                           for f in merged_chunks(self._frames)]
                if self.progress is not None:
                    events.append(("frame", json.dumps(frame_json(pb.Frame(progress=self.progress), self.info),
                                                       allow_nan=False)))
            browser: queue.Queue[tuple[str, str] | None] = queue.Queue(BROWSER_QUEUE)
            self._browsers.add(browser)
        return events, browser

    def leave(self, browser: queue.Queue[tuple[str, str] | None]) -> None:
        with self._lock:
            self._browsers.discard(browser)

    def _send(self, event: str, data: str) -> None:
        for browser in list(self._browsers):
            try:
                browser.put_nowait((event, data))
            except queue.Full:  # too far behind: end its stream; it reconnects from the history
                self._browsers.discard(browser)
                with browser.mutex:
                    browser.queue.clear()
                browser.put_nowait(None)


class CoordinatorLink:
    """The observer stream from the coordinator into a RunFeed (own thread), and the control calls."""

    def __init__(self, address: str, feed: RunFeed) -> None:
        self.address, self.feed = address, feed
        self._channel = grpc.insecure_channel(address, options=[
            ("grpc.initial_reconnect_backoff_ms", RECONNECT_BACKOFF_MS // 2),
            ("grpc.min_reconnect_backoff_ms", RECONNECT_BACKOFF_MS // 2),
            ("grpc.max_reconnect_backoff_ms", RECONNECT_BACKOFF_MS)])
        self._stub = pb_grpc.MonitorStub(self._channel)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="hybridsim-monitor-link", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._channel.close()

    def _watch(self) -> None:
        ended = ""  # why the last run ended before its first step (shown until the next run starts)
        while not self._stop.is_set():
            try:
                for event in self._stub.Watch(pb.WatchRequest()):
                    if event.HasField("info"):
                        ended = ""
                        self.feed.set_link(f"watching the coordinator at {self.address}", True)
                        self.feed.start_run(event.info)
                    else:
                        self.feed.add(event.frame)
                self.feed.set_link(f"the run ended; waiting for a new run at {self.address}", False)
            except grpc.RpcError as exc:
                if self._stop.is_set():
                    return
                if exc.code() == grpc.StatusCode.ABORTED:
                    ended = f"{exc.details()}; "
                    self.feed.set_link(f"{ended}waiting for a new run at {self.address}", False)
                else:
                    self.feed.set_link(f"{ended}no coordinator at {self.address} ({exc.code().name.lower()}); "
                                       "retrying", False)
            except ValueError:  # the channel was closed
                return
            self._stop.wait(RETRY_S)

    def control(self, call: str, token: str) -> tuple[HTTPStatus, dict[str, Any]]:
        """Pass Hold/Resume/Abort to the coordinator; the HTTP status and JSON body of the answer."""
        method = {"hold": self._stub.Hold, "resume": self._stub.Resume, "abort": self._stub.Abort}[call]
        try:
            reply = method(pb.ControlRequest(token=token), timeout=CONTROL_DEADLINE_S)
        except grpc.RpcError as exc:
            status = _STATUS_OF_CODE.get(exc.code(), HTTPStatus.BAD_GATEWAY)
            return status, {"error": exc.details() or exc.code().name.lower()}
        return HTTPStatus.OK, {"state": reply.state, "step": reply.step}


class MonitorWebServer(ThreadingHTTPServer):
    """The page's HTTP server: at most :data:`MAX_CONNECTIONS` connections at once, an accept that fails for
    want of file descriptors or memory tried again (never a busy loop, never the end of the listener)."""

    daemon_threads = True

    def __init__(self, listen: tuple[str, int], coordinator: str) -> None:
        self._places = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.feed = RunFeed()
        self.link = CoordinatorLink(coordinator, self.feed)  # before the bind: a failed one closes it
        super().__init__(listen, MonitorHandler)
        self.any_host = not is_loopback(f"{listen[0]}:{listen[1]}")
        """served on a non-loopback address on purpose: any Host name may reach it"""
        self.page = render_page(title=f"hybridsim monitor: {coordinator}", live=True).encode()
        self.link.start()

    def server_close(self) -> None:
        self.link.close()
        super().server_close()

    def get_request(self) -> tuple[socket.socket, Any]:
        accepted = accept(self.socket, "monitor page")
        if accepted is None:
            raise OSError("the monitor page's listener is closed")
        return accepted

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._places.acquire(blocking=False):
            log.warning("monitor page: connection from %s refused: %d connections are open, the most it serves",
                        client_address[0], MAX_CONNECTIONS)
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._places.release()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"


class MonitorHandler(BaseHTTPRequestHandler):
    server: MonitorWebServer
    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT_S

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        log.debug("%s %s", self.address_string(), format % args)

    def _host_refused(self) -> bool:
        """Answer 421 (and True) to a request whose Host is not a loopback name on a loopback page."""
        host = self.headers.get("Host", "")
        name = host.rpartition(":")[0] if host.rpartition(":")[2].isdigit() else host
        if self.server.any_host or name.lower() in LOOPBACK_HOSTS:
            return False
        self._json(HTTPStatus.MISDIRECTED_REQUEST, {"error": f"this monitor answers only on loopback names "
                                                             f"({', '.join(LOOPBACK_HOSTS)}), not Host {host!r}"})
        return True

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self._host_refused():
            return
        path = self.path.split("?")[0]
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8")
        elif path == "/events":
            self._events()
        elif path == "/api/state":
            feed = self.server.feed
            self._json(HTTPStatus.OK, {"link": feed.link,
                                       "progress": None if feed.progress is None else progress_json(feed.progress)})
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no page at {path}"})

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        if self._host_refused():
            return
        call = self.path.split("?")[0].removeprefix("/api/")
        if call not in ("hold", "resume", "abort"):
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no control at {self.path}; use /api/hold, resume or abort"})
            return
        token = self.headers.get("X-Hybridsim-Token", "")
        if not token:
            self._json(HTTPStatus.UNAUTHORIZED, {"error": f"{call} needs the run's access token (X-Hybridsim-Token)"})
            return
        self._json(*self.server.link.control(call, token))

    def _events(self) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        backlog, browser = self.server.feed.join()
        try:
            for event, data in backlog:
                self._event(event, data)
            while True:
                try:
                    item = browser.get(timeout=15.0)
                except queue.Empty:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                    continue
                if item is None:
                    return
                self._event(*item)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):  # gone, or took nothing for IDLE_TIMEOUT_S
            return
        finally:
            self.server.feed.leave(browser)

    def _event(self, event: str, data: str) -> None:
        self.wfile.write(f"event: {event}\ndata: {data}\n\n".encode())
        self.wfile.flush()

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: HTTPStatus, body: dict[str, Any]) -> None:
        self._send(status, json.dumps(body).encode(), "application/json")
