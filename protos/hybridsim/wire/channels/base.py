"""What every channel is: one small protocol that carries the steps of an open session.

A **channel** carries one lockstep step, what a ``StepRequest`` of module.proto says
(:class:`StepMessage`: the session, the commit of the previous step, this step's command, the order
to execute), to a site and returns the executed step's result.  The gRPC ``Step`` call
(:mod:`.unary`) and the ``Steps`` stream (:mod:`.stream`) carry it as a ``StepRequest``, the step
link (:mod:`.link`) as the frame that protos/hybridsim/v1/step_link.md specifies field by field
against it; the site answers each step with the same servicer code whichever way it arrives.

Rules for writing a channel (one file, one line in :data:`hybridsim.wire.channels.CHANNELS`):

- ``exchange(message, call, timeout_s)`` sends one step and returns its result (None when the
  message did not ask to execute) within ``timeout_s`` (s); it keeps its connection between steps
  and drops a broken one, so that the next exchange connects anew.
- It translates its own failures: :class:`Retry` for a site it could not reach this time (the
  remote module's retry rule tries again while the call's deadline allows and then raises the
  Retry's ``error``), a :class:`~hybridsim.wire.contract.StepRefused` for a refused step, a
  :class:`~hybridsim.wire.contract.ModuleError` for anything else, each naming the call
  (:class:`Call`: the site, what was called, the step).
- ``close()`` ends its connection; the channel of the next session is a new one.
- Its constructor takes the site's :class:`Endpoints` and raises a ModuleError naming the site when
  the channel cannot serve it (no step link, a token that would travel in clear text).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from hybridsim.v1 import module_pb2_grpc as pb_grpc
from hybridsim.wire.contract import Command, ModuleError, StepRefused, StepResult


class StepMessage(NamedTuple):
    """One lockstep message, what module.proto's StepRequest says: in the open session ``session_id``,
    commit ``commit_step`` (if not None), propose ``command`` for ``step`` (if not None), then execute
    ``step`` (if ``execute``), stopping at the first refusal."""

    session_id: str
    step: int
    commit_step: int | None
    command: Command | None
    execute: bool


class Call(NamedTuple):
    """One call as its errors name it: the site's label, what was called, its step (None: not a step call)."""

    label: str
    """'site NAME at ADDRESS'"""
    what: str
    step: int | None
    deadline_s: float
    """the longest the call may take, retries included (s)"""

    @property
    def where(self) -> str:
        return f"{self.label}: {self.what}" + ("" if self.step is None else f" of step {self.step}")

    def error(self, details: str) -> ModuleError:
        """A ModuleError naming the call: 'site NAME at ADDRESS: execute of step N: details'."""
        return ModuleError(f"{self.where}: {details}")

    def late(self) -> ModuleError:
        return self.error(f"no reply within the deadline of {self.deadline_s:g} s")

    def refused(self, step: int, details: str) -> StepRefused:
        """The site refused ``step``: 'step N refused: site NAME at ADDRESS: reason'."""
        return StepRefused(step, f"{self.label}: {details.removeprefix(f'step {step} refused: ')}")


class Retry(Exception):
    """The site was not reachable this time: try again while the deadline allows, then raise ``error``."""

    def __init__(self, error: ModuleError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True)
class Endpoints:
    """What a channel may use to reach a site: its gRPC service and its step link."""

    label: str
    """'site NAME at ADDRESS', for messages"""
    stub: Callable[[], pb_grpc.ModuleStub]
    """the site's gRPC service (connected on first use, again after a disconnect)"""
    link_address: str | None
    """HOST:PORT or unix:PATH of the site's step link; None: the site serves none"""
    token: str | None
    """the site's access token (the gRPC connection carries it itself)"""
    max_message_bytes: int
    deadline_s: float
    """the longest one call may take, retries included (s)"""
    stream_fallback: bool = False
    """the link was chosen, not asked for ("auto"): a full link sends the steps on the gRPC stream instead"""

    def error(self, details: str) -> ModuleError:
        """A ModuleError naming the site: 'site NAME at ADDRESS: details'."""
        return ModuleError(f"{self.label}: {details}")


class Channel(Protocol):
    """Carries the steps of one open session to a site (see the module's rules)."""

    def exchange(self, message: StepMessage, call: Call, timeout_s: float) -> StepResult | None: ...

    def close(self) -> None: ...
