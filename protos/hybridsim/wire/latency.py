"""A network-latency knob: a client interceptor that delays every round trip to a site.

Emulates a distant lab on loopback without touching the machine's network:

    RemoteModule("127.0.0.1:50051", name="far", latency=Latency(fixed_s=0.030, jitter_s=0.010))

Each unary call and each message of a stream is held for
``fixed_s + U(0, jitter_s)`` seconds before it is sent; the call's deadline
keeps running meanwhile, so a delay longer than the deadline times out as a
slow network would.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc


class DelayedPastDeadline(grpc.RpcError):
    """The added delay outlasted the call's deadline: reported as the status DEADLINE_EXCEEDED."""

    def __init__(self, delay_s: float, timeout_s: float) -> None:
        super().__init__(f"the latency knob's {delay_s:g} s delay outlasted the {timeout_s:g} s deadline")

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.DEADLINE_EXCEEDED

    def details(self) -> str:
        return str(self)

    def trailing_metadata(self) -> tuple[()]:
        return ()


@dataclass
class Latency(grpc.UnaryUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):
    """Added delay per round trip: ``fixed_s`` plus a uniform random part in [0, ``jitter_s``] (s)."""

    fixed_s: float = 0.0
    jitter_s: float = 0.0
    seed: int | None = None
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("fixed_s", "jitter_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"latency {name} must be a non-negative number of seconds, not {value!r}")
        self._rng = random.Random(self.seed)

    def delay_s(self) -> float:
        """One random delay (s)."""
        return self.fixed_s + (self._rng.uniform(0.0, self.jitter_s) if self.jitter_s else 0.0)

    def intercept_unary_unary(self, continuation: Callable[..., Any], client_call_details: Any, request: Any) -> Any:
        delay, timeout = self.delay_s(), client_call_details.timeout
        if timeout is not None and delay >= timeout:
            time.sleep(timeout)
            raise DelayedPastDeadline(delay, timeout)
        time.sleep(delay)
        if timeout is not None:
            client_call_details = client_call_details._replace(timeout=timeout - delay)
        return continuation(client_call_details, request)

    def intercept_stream_stream(self, continuation: Callable[..., Any], client_call_details: Any,
                                request_iterator: Iterator[Any]) -> Any:
        def delayed() -> Iterator[Any]:
            for request in request_iterator:
                time.sleep(self.delay_s())
                yield request
        return continuation(client_call_details, delayed())
