"""The unary channel: each step one ``Step`` call of the site's gRPC service."""

from __future__ import annotations

from hybridsim.wire import codec
from hybridsim.wire.channels.base import Call, Endpoints, StepMessage
from hybridsim.wire.channels.rpc import call_rpc
from hybridsim.wire.contract import StepResult


class UnaryChannel:
    """One ``Step`` call per step on the site's gRPC connection (no state between steps)."""

    def __init__(self, site: Endpoints) -> None:
        self._stub = site.stub

    def exchange(self, message: StepMessage, call: Call, timeout_s: float) -> StepResult | None:
        return codec.step_result(call_rpc(self._stub().Step, codec.step_request(*message), call, timeout_s))

    def close(self) -> None:
        """Nothing stays open between steps."""
