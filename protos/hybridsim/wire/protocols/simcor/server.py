"""A site's module served over UI-SIMCOR's LabView1/LabView2 protocols (``hybridsim site KIND --simcor HOST:PORT``).

The site configuration's ``[simcor]`` table names the control points and maps each axis to a DOF
(``control_points = { "MDL-00-01" = { x = "u1", z = "r1" } }``, every DOF on one axis), and may give
``protocol = "LabView1"`` (default: propose, execute, get-control-point) or ``"LabView2"`` (the propose
executes and its reply carries the measured values), and ``dt`` (s: the client's time step; default the
module's control sample, else 1 s, which no rate limit uses: a site with ``[limits] velocity`` refuses the session).

An axis may map a DOF the site declares force-controlled (an `opensees` module's ``force_control``): a propose
then commands its force (quantity force or moment), the reply gives that axis's force, the target held; every such
DOF is mapped or none.  A force at any other axis is answered ``NOT OK``, as before.

A connection is one session of the site's servicer from ``open-session`` to ``close-session``.  The
protocol has no commit: a new transaction commits the step before it (so every executed transaction
becomes the committed state), and the k-th transaction commands time k dt.  A repeated propose of the same
transaction with the same values, or a repeated execute, is answered without moving anything again.  A
line that does not parse (an unknown command, control point, axis or quantity, a number that is not one)
is answered ``NOT OK`` with the reason and the session goes on; a step the module refuses (limits, a hold)
is answered ``NOT OK`` with the servicer's message, logged, and ends the session.
"""

from __future__ import annotations

import logging
import math
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hybridsim.wire.contract import FORCE_CONTROLLED, Command, ModuleError, StepResult
from hybridsim.wire.protocols.base import ChannelSession, ProtocolServer, SessionEnded
from hybridsim.wire.protocols.simcor import codec

log = logging.getLogger("hybridsim.site")

@dataclass(frozen=True)
class SimCorOptions:
    """The site configuration's ``[simcor]`` table (control points checked against the module's DOFs later)."""

    control_points: Mapping[str, Any]
    protocol: str = "LabView1"
    dt: float | None = None

    @classmethod
    def from_table(cls, table: Any) -> "SimCorOptions":
        if not isinstance(table, Mapping):
            raise ModuleError("--simcor needs a [simcor] table in the site's config with control_points, e.g. "
                              "[simcor] control_points = { \"MDL-00-01\" = { x = \"u1\" } }")
        unknown = sorted(set(table) - {"control_points", "protocol", "dt"})
        if unknown:
            raise ModuleError(f"unknown key simcor.{unknown[0]}; allowed: control_points, protocol, dt")
        protocol = table.get("protocol", "LabView1")
        if protocol not in codec.PROTOCOLS:
            raise ModuleError(f"simcor.protocol must be one of {', '.join(codec.PROTOCOLS)}, not {protocol!r}")
        dt = table.get("dt")
        if dt is not None and not (isinstance(dt, (int, float)) and math.isfinite(dt) and dt > 0):
            raise ModuleError("simcor.dt must be a positive number of seconds (the client's time step)")
        return cls(table.get("control_points"), protocol, dt)  # type: ignore[arg-type]


class SimCorServer:
    """Serves the servicer's module to UI-SIMCOR-protocol clients on ``listen`` (see the module docstring)."""

    def __init__(self, servicer: Any, listen: str, table: Any = None, max_message_bytes: int = 4 * 2**20) -> None:
        self._servicer = servicer
        self.options = SimCorOptions.from_table(table)
        description = servicer.describe_module()
        declared = description.info.get(FORCE_CONTROLLED, "")
        self.points = codec.ControlPoints.from_table(self.options.control_points, description.dof_names,
                                                     "simcor.control_points", declared.split(",") if declared else ())
        self.dt = self.options.dt or description.control_dt
        """the step the site gives its sessions (s); None: it gives none (the protocol carries none)"""
        self._server = ProtocolServer("simcor", listen, self._connection)
        self.address, self.port = self._server.address, self._server.port

    def stop(self) -> None:
        self._server.stop()

    def _connection(self, connection: socket.socket, peer: str) -> None:
        _Connection(self, connection, peer).run()


class _Connection:
    """One client: its lines, its session, its last transaction."""

    def __init__(self, server: SimCorServer, connection: socket.socket, peer: str) -> None:
        self.server, self.connection, self.peer = server, connection, peer
        self.site = server._servicer.site
        self.session: ChannelSession | None = None
        self.kinds: list[str] = []
        self.transaction = ""
        self.proposed: tuple[list[float], list[float] | None] | None = None
        """the last propose's displacements and force targets"""

    def run(self) -> None:
        reader = codec.LineReader(self.connection)
        try:
            while True:
                try:
                    text = reader.read()
                except codec.LineError as exc:
                    self.refuse("", str(exc))
                    return  # the stream cannot be trusted after a line without an end or not in ASCII
                if text is None:
                    self.close("the client closed the connection")
                    return
                try:
                    if not self.answer(text.split("\t")):
                        return
                except codec.LineError as exc:
                    self.refuse(text.split("\t", 2)[1] if "\t" in text else "", str(exc))
        except SessionEnded as exc:
            self.send(codec.NOT_OK, 0, self.transaction, f"session ended: {exc}")
        except ConnectionError as exc:
            self.close(f"lost: {exc}")
            log.warning("site %s: UI-SIMCOR client at %s: %s", self.site, self.peer, exc)
        except OSError:  # the idle timeout (logged by the listener): the session must not outlive its connection
            self.close("nothing arrived for the listener's idle timeout")
            raise

    def answer(self, tokens: list[str]) -> bool:
        """Act on one line; False ends the connection."""
        command, args = tokens[0], tokens[1:]
        if command == "open-session":
            self.open(args[0] if args else "")
        elif command == "close-session":
            self.send(codec.OK, 0, args[0] if args else "", "session closed")
            self.close("closed by the client (close-session)")
        elif command == "set-parameter":
            self.send(codec.OK, 0, args[0] if args else "", "parameter set")
        elif command == "propose":
            self.propose(args)
        elif command == "execute":
            self.execute(args)
        elif command == "get-control-point":
            self.get_control_points(args)
        else:
            raise codec.LineError(f"unknown command {command!r}; expected open-session, set-parameter, propose, "
                                  "execute, get-control-point or close-session")
        return True

    def open(self, name: str) -> None:
        if self.session is not None:
            self.close(f"replaced by open-session {name}")
        session = ChannelSession(self.server._servicer, f"UI-SIMCOR {self.server.options.protocol}", self.peer,
                                 self.server.dt)
        session.open()
        self.session, self.kinds = session, codec.dof_kinds(session.description.dofs)
        self.transaction, self.proposed = "", None
        self.send(codec.OK, 0, name, "session opened")

    def close(self, reason: str) -> None:
        if self.session is not None:
            self.session.close(f"{reason} (UI-SIMCOR client at {self.peer})")
            self.session = None

    def _open_session(self) -> ChannelSession:
        if self.session is None:
            raise codec.LineError("no open session: send open-session first")
        return self.session

    def propose(self, args: list[str]) -> None:
        session = self._open_session()
        if not args:
            raise codec.LineError("propose needs a transaction ID and control points")
        transaction, values = args[0], self.server.points.parse(args[1:], self.kinds)
        if transaction == self.transaction and values == self.proposed:
            self._proposed_reply(transaction, session)  # a retry: nothing moves again
            return
        if transaction == self.transaction:
            raise codec.LineError(f"transaction {transaction} was already proposed with other values")
        labview2 = self.server.options.protocol == "LabView2"
        displacement, force = values
        command = Command((session.step + 1) * session.dt, np.array(displacement),
                          force=None if force is None else np.array(force))
        session.propose(command, execute=labview2, commit_first=True)
        self.transaction, self.proposed = transaction, values
        self._proposed_reply(transaction, session)

    def _proposed_reply(self, transaction: str, session: ChannelSession) -> None:
        if self.server.options.protocol == "LabView2":
            executed = session.executed
            result = executed if executed is not None and executed.step == session.step else session.execute()
            self.send(codec.OK, 0, transaction, *self._values(result))
        else:
            self.send(codec.OK, 0, transaction, "propose accepted")

    def execute(self, args: list[str]) -> None:
        session = self._open_session()
        transaction = args[0] if args else ""
        if transaction != self.transaction or not transaction:
            raise codec.LineError(f"execute of transaction {transaction!r}, but the last propose was "
                                  f"{self.transaction or 'none'}")
        session.execute()
        self.send(codec.OK, 0, transaction, "execute done")

    def get_control_points(self, args: list[str]) -> None:
        session = self._open_session()
        transaction = args[0] if args else ""
        result = session.executed
        if transaction != self.transaction or result is None or result.step != session.step:
            raise codec.LineError(f"get-control-point of transaction {transaction!r}: it was not executed")
        names = [name for name in args[1:] if name != "dummy"] or list(self.server.points.points)
        unknown = [name for name in names if name not in self.server.points.points]
        if unknown:
            raise codec.LineError(f"unknown control point {unknown[0]!r}; this site has "
                                  f"{', '.join(self.server.points.points)}")
        for name in names:
            self.send(codec.OK, 0, transaction, *self._values(result, [name]))

    def _values(self, result: StepResult, names: list[str] | None = None) -> list[str]:
        tokens: list[str] = []
        for name in names or list(self.server.points.points):
            tokens += [name, *self.server.points.triples(name, self.kinds, result.displacement, result.force,
                                                         self.held())]
        return tokens

    def held(self) -> list[float]:
        """The force targets of the last propose (N, N*m; empty: it commanded none)."""
        return (self.proposed[1] if self.proposed is not None else None) or []

    def refuse(self, transaction: str, reason: str) -> None:
        log.warning("site %s: UI-SIMCOR client at %s: refused: %s", self.site, self.peer, reason)
        self.send(codec.NOT_OK, 0, transaction, reason)

    def send(self, *tokens: object) -> None:
        self.connection.sendall(codec.line(*tokens))
