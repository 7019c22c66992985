"""The stream channel: the session's steps on one bidirectional ``Steps`` call, one message each way per step."""

from __future__ import annotations

import queue
import threading
import time

import grpc

from hybridsim.v1 import module_pb2 as pb
from hybridsim.v1 import module_pb2_grpc as pb_grpc
from hybridsim.wire import codec
from hybridsim.wire.channels.base import Call, Endpoints, StepMessage
from hybridsim.wire.channels.rpc import failure_of
from hybridsim.wire.contract import StepResult


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


class StreamChannel:
    """The session's ``Steps`` stream, opened at the first step; a failed stream is dropped (the next opens anew)."""

    def __init__(self, site: Endpoints) -> None:
        self._stub = site.stub
        self._watch_tick_s = min(0.05, site.deadline_s / 10)
        self._stream: _StepStream | None = None

    def exchange(self, message: StepMessage, call: Call, timeout_s: float) -> StepResult | None:
        if self._stream is None:
            self._stream = _StepStream(self._stub(), self._watch_tick_s)
        try:
            return codec.step_result(self._stream.exchange(codec.step_request(*message), timeout_s))
        except BaseException as exc:
            self.close()
            failure = failure_of(exc, call)
            if failure is exc:
                raise
            raise failure from None

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
