"""The integrating side of UI-SIMCOR's LabView1/LabView2 protocols: hybridsim drives a module as UI-SIMCOR does.

``open-session``, then per step ``propose`` (all control points in one line), ``execute`` and
``get-control-point`` (LabView1) or the propose alone, whose reply carries the values (LabView2);
``close-session`` at the end.  Numbers go with 17 significant digits.  A reply that does not start with
``OK`` is a ModuleError (or a StepRefused for a proposal) carrying the module's text.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence

import numpy as np

from hybridsim.wire.channels.base import Call, StepMessage
from hybridsim.wire.contract import ModuleError, StepResult
from hybridsim.wire.protocols.base import connect
from hybridsim.wire.protocols.simcor import codec


class SimCorClient:
    """One connection to a UI-SIMCOR-protocol module at ``address`` (HOST:PORT): a channel
    (:class:`hybridsim.wire.channels.base.Channel`) whose steps are LabVIEW transactions."""

    def __init__(self, address: str, points: codec.ControlPoints, kinds: Sequence[str], protocol: str = "LabView1",
                 deadline_s: float = 10.0, session: str = "hybridsim", forces: Sequence[float] = ()) -> None:
        """``forces``: the targets (N, N*m) of the force-controlled DOFs ``points`` maps, in its order."""
        self.address, self.points, self.kinds, self.forces = address, points, list(kinds), list(forces)
        self.protocol, self.deadline_s, self.session = protocol, deadline_s, session
        self._connection: socket.socket | None = None
        self._reader: codec.LineReader | None = None

    @property
    def label(self) -> str:
        return f"UI-SIMCOR {self.protocol} module at {self.address}"

    def connect(self) -> None:
        self._connection = connect(self.address, self.deadline_s, self.label)
        self._reader = codec.LineReader(self._connection)
        self.request("open-session", self.session)

    def propose(self, transaction: str, displacement: np.ndarray) -> list[str]:
        """Propose the displacement of every control point (and the force of a force-controlled axis); the
        reply's tokens."""
        tokens: list[str] = []
        n = len(self.kinds)
        for name, axes in self.points.points.items():
            tokens.append(name)
            for axis, index in axes.items():
                if index < n:
                    tokens += [axis, codec.MOTION[self.kinds[index]], codec.number(float(displacement[index]))]
                else:
                    tokens += [axis, "force", codec.number(self.forces[index - n])]
        return self.request("propose", transaction, *tokens)

    def step(self, transaction: str, displacement: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One step: propose, execute and read back (LabView1) or the propose alone (LabView2)."""
        reply = self.propose(transaction, displacement)
        if self.protocol == "LabView2":
            return self.values(reply[3:])
        self.request("execute", transaction)
        names = list(self.points.points)
        self._send("get-control-point", transaction, *names)
        tokens: list[str] = []
        for _ in names:
            tokens += self._reply("get-control-point")[3:]
        return self.values(tokens)

    def exchange(self, message: StepMessage, call: Call, timeout_s: float) -> StepResult | None:
        """One step as a channel carries it (hybridsim.wire.channels.base): no commit on the wire (the module
        commits a step when the next is proposed); a command with its execute is one transaction; a failure
        of the propose is the step's refusal."""
        transaction = f"trans{message.step:08d}"
        try:
            if message.command is not None and message.execute:
                displacement, force = self.step(transaction, message.command.displacement)
                return StepResult(message.step, displacement, force)
            if message.command is not None:
                self.propose(transaction, message.command.displacement)
                return None
            if not message.execute:
                return None
            self.request("execute", transaction)
            names = list(self.points.points)
            self._send("get-control-point", transaction, *names)
            displacement, force = self.values([t for _ in names for t in self._reply("get-control-point")[3:]])
            return StepResult(message.step, displacement, force)
        except ModuleError as exc:
            raise call.refused(message.step, str(exc).removeprefix(f"{self.label}: ")) from None

    def values(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The displacement and force vectors of control-point tokens (name, then axis quantity value triples)."""
        n = len(self.kinds)
        displacement, force = np.full(n, np.nan), np.full(n, np.nan)
        point: str | None = None
        at = 0
        while at < len(tokens):
            if tokens[at] not in codec.AXES:
                point = tokens[at]
                at += 1
                continue
            axis, quantity, text = tokens[at:at + 3]
            at += 3
            index = self.points.points.get(point or "", {}).get(axis)
            if index is None:
                raise ModuleError(f"{self.label}: the reply names control point {point} axis {axis}, "
                                  "which the module's control_points do not map")
            if index >= n:
                continue  # a force-controlled axis: the force it holds is the one commanded
            target = force if quantity in ("force", "moment") else displacement
            target[index] = float(text)
        if np.isnan(displacement).any() or np.isnan(force).any():
            raise ModuleError(f"{self.label}: the reply lacks a displacement or force of some DOF: "
                              f"{' '.join(tokens)}")
        return displacement, force

    def close(self) -> None:
        """close-session and close the connection; never raises."""
        if self._connection is None:
            return
        try:
            self.request("close-session", self.session)
        except ModuleError:
            pass
        finally:
            self._connection.close()
            self._connection = self._reader = None

    def request(self, *tokens: object) -> list[str]:
        """Send one line and read its reply; the reply's tokens (ModuleError unless it starts with OK)."""
        self._send(*tokens)
        return self._reply(str(tokens[0]))

    def _send(self, *tokens: object) -> None:
        if self._connection is None:
            raise ModuleError(f"{self.label}: not connected")
        try:
            self._connection.sendall(codec.line(*tokens))
        except OSError as exc:
            raise ModuleError(f"{self.label}: connection lost: {exc}") from None

    def _reply(self, what: str) -> list[str]:
        assert self._reader is not None
        try:
            text = self._reader.read()
        except TimeoutError:
            raise ModuleError(f"{self.label}: no reply to {what} within the deadline of {self.deadline_s:g} s") from None
        except (OSError, codec.LineError) as exc:
            raise ModuleError(f"{self.label}: connection lost waiting for the reply to {what}: {exc}") from None
        if text is None:
            raise ModuleError(f"{self.label}: the module closed the connection instead of answering {what}")
        tokens = text.split("\t")
        if tokens[0] != codec.OK:
            raise ModuleError(f"{self.label}: {what} failed: {text.replace(chr(9), ' ')}")
        return tokens
