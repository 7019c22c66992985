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
        """Sleep one delay; return how long it was (s)."""
        delay = self.fixed_s + (self._rng.uniform(0.0, self.jitter_s) if self.jitter_s else 0.0)
        time.sleep(delay)
        return delay

    def intercept_unary_unary(self, continuation: Callable[..., Any], client_call_details: Any, request: Any) -> Any:
        delay = self.delay_s()
        if client_call_details.timeout is not None:
            client_call_details = client_call_details._replace(timeout=max(client_call_details.timeout - delay, 0.0))
        return continuation(client_call_details, request)

    def intercept_stream_stream(self, continuation: Callable[..., Any], client_call_details: Any,
                                request_iterator: Iterator[Any]) -> Any:
        def delayed() -> Iterator[Any]:
            for request in request_iterator:
                self.delay_s()
                yield request
        return continuation(client_call_details, delayed())
