"""The lines of UI-SIMCOR's LabView1/LabView2 protocols (also spoken by OpenFresco's ECLabVIEW and the UIUC LBCB plugin).

One message per line, tokens separated by tabs, ending in ``\\n`` (``\\r\\n`` is accepted).  A reply
starts with ``OK`` (then ``0`` and the transaction or session ID) or, for a failure, ``NOT OK``.
A control point's values are triples ``axis quantity value``: axis x, y or z; quantity displacement or
rotation (what is commanded and measured) and force or moment (what is measured; commanded at an axis mapped to
a DOF the site declares force-controlled, as OpenFresco's ExpForceControl over SimApp).  hybridsim writes
numbers with 17 significant digits (``%.16e``), so that a double crosses the line unchanged; UI-SIMCOR
itself writes ``%.10e``.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hybridsim.wire.contract import Dof, ModuleError
from hybridsim.wire.protocols.base import quickack

AXES = ("x", "y", "z")
MOTION = {"translation": "displacement", "rotation": "rotation"}
"""the quantity a DOF's motion is named by, by the DOF's kind"""
FORCE = {"translation": "force", "rotation": "moment"}
"""the quantity a DOF's force is named by, by the DOF's kind"""
MAX_LINE_BYTES = 65536
"""longest line either end accepts"""
OK, NOT_OK = "OK", "NOT OK"
PROTOCOLS = ("LabView1", "LabView2")
"""LabView1: propose, execute, get-control-point; LabView2: the propose executes and its reply carries the values"""


class LineError(Exception):
    """A line that does not follow the protocol; the message says what is wrong."""


def number(value: float) -> str:
    """A double with 17 significant digits (read back unchanged)."""
    return f"{value:.16e}"


def line(*tokens: object) -> bytes:
    return ("\t".join(str(t) for t in tokens) + "\n").encode()


class LineReader:
    """Reads one line at a time from a connection (TCP_QUICKACK re-armed after each receive)."""

    def __init__(self, connection: socket.socket, max_bytes: int = MAX_LINE_BYTES) -> None:
        self._connection = connection
        self._buffer = bytearray()
        self._max = max_bytes

    def read(self) -> str | None:
        """The next line without its ending; None at the end of the connection (ConnectionError mid-line)."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                raw = bytes(self._buffer[:end])
                del self._buffer[:end + 1]
                try:
                    return raw.rstrip(b"\r").decode("ascii")
                except UnicodeDecodeError:
                    raise LineError("the line is not ASCII text") from None
            if len(self._buffer) > self._max:
                raise LineError(f"a line longer than {self._max} bytes")
            chunk = self._connection.recv(65536)
            quickack(self._connection)
            if not chunk:
                if self._buffer:
                    raise ConnectionError(f"the client closed the connection in the middle of a line "
                                          f"({len(self._buffer)} bytes without an end of line)")
                return None
            self._buffer += chunk


@dataclass(frozen=True)
class ControlPoints:
    """Control points by name, each an ordered mapping of axis -> DOF index: of the module's DOFs (0 .. n - 1),
    then of its force-controlled ones (n ..)."""

    points: dict[str, dict[str, int]]
    n: int = 0
    """the module's (displacement-controlled) DOFs"""
    forced: tuple[str, ...] = ()
    """the force-controlled DOFs the control points map (all the module declares, or none)"""

    @classmethod
    def from_table(cls, table: Any, dofs: Sequence[str], where: str,
                   declared: Sequence[str] = ()) -> "ControlPoints":
        """``{ "MDL-00-01" = { x = "u1", z = "r1" } }`` over the module's DOF names ``dofs`` and the DOFs it
        declares force-controlled (``declared``: a client commands their forces when the table maps them)."""
        if not isinstance(table, Mapping) or not table:
            raise ModuleError(f"{where} must be a table of control points, e.g. "
                              "{ \"MDL-00-01\" = { x = \"u1\", z = \"r1\" } }")
        points: dict[str, dict[str, int]] = {}
        used: dict[str, str] = {}
        for name, axes in table.items():
            if not isinstance(axes, Mapping) or not axes:
                raise ModuleError(f"{where}.{name} must map axes (x, y, z) to DOF names, e.g. {{ x = \"u1\" }}")
            points[name] = {}
            for axis, dof in axes.items():
                if axis not in AXES:
                    raise ModuleError(f"{where}.{name}: unknown axis {axis!r}; use x, y or z")
                every = [*dofs, *declared]
                if dof not in every:
                    raise ModuleError(f"{where}.{name}.{axis}: {dof!r} is not a DOF of the module ({', '.join(every)})")
                if dof in used:
                    raise ModuleError(f"{where}.{name}.{axis}: DOF {dof!r} is mapped twice (also {used[dof]})")
                used[dof] = f"{name}.{axis}"
                points[name][axis] = every.index(dof)
        missing = [d for d in dofs if d not in used]
        if missing:
            raise ModuleError(f"{where}: DOF(s) {', '.join(missing)} belong to no control point; map every DOF")
        forced = tuple(d for d in declared if d in used)
        if forced and len(forced) < len(declared):
            raise ModuleError(f"{where}: map every force-controlled DOF ({', '.join(declared)}) or none (the site "
                              "then holds their declared targets)")
        return cls(points, len(dofs), forced)

    def parse(self, tokens: Sequence[str], kinds: Sequence[str]) -> tuple[list[float], list[float] | None]:
        """The displacements and the force targets (None: the control points map no force-controlled DOF) of a
        propose's tokens (after the transaction ID); LineError if they do not fit."""
        values: list[float | None] = [None] * (self.n + len(self.forced))
        point: str | None = None
        at = 0
        while at < len(tokens):
            token = tokens[at]
            if token == "control-point":  # ECLabVIEW names later control points with this keyword
                at += 1
                token = tokens[at] if at < len(tokens) else ""
            if token not in AXES:
                if token not in self.points:
                    raise LineError(f"unknown control point {token!r}; this site has {', '.join(self.points)}")
                point = token
                at += 1
                continue
            if point is None:
                raise LineError(f"axis {token!r} before any control point")
            if len(tokens) - at < 3:
                raise LineError(f"control point {point}: axis {token} needs a quantity and a value")
            axis, quantity, text = tokens[at:at + 3]
            at += 3
            if axis not in self.points[point]:
                raise LineError(f"control point {point} has no axis {axis} (it has {', '.join(self.points[point])})")
            index = self.points[point][axis]
            expected = ("force", "moment") if index >= self.n else (MOTION[kinds[index]],)
            if quantity not in expected:
                raise LineError(self._misplaced(point, axis, quantity, expected))
            try:
                value = float(text)
            except ValueError:
                raise LineError(f"control point {point} axis {axis}: {text!r} is not a number") from None
            values[index] = value
        missing = [i for i, v in enumerate(values) if v is None]
        if missing:
            raise LineError(f"the propose gives no value for {', '.join(self.where(i) for i in missing)}")
        return values[:self.n], values[self.n:] if self.forced else None  # type: ignore[return-value]

    def _misplaced(self, point: str, axis: str, quantity: str, expected: tuple[str, ...]) -> str:
        """Why ``quantity`` cannot be commanded at a control point's axis."""
        at = f"control point {point} axis {axis}"
        if quantity in ("force", "moment"):
            if not self.forced:
                return f"{at}: force control is not supported here (no force-controlled DOF mapped); command " \
                       f"{expected[0]}"
            return f"{at} is displacement-controlled; command {expected[0]} (forces at: " \
                   f"{', '.join(self.where(self.n + j) for j in range(len(self.forced)))})"
        return f"{at}: quantity {quantity!r}, expected {' or '.join(map(repr, expected))}"

    def where(self, index: int) -> str:
        for name, axes in self.points.items():
            for axis, i in axes.items():
                if i == index:
                    return f"{name} axis {axis}"
        return f"DOF {index}"

    def triples(self, name: str, kinds: Sequence[str], displacement: Iterable[float], force: Iterable[float],
                held: Sequence[float] = ()) -> list[str]:
        """The ``axis quantity value`` tokens of control point ``name``: its motions, then its forces; a
        force-controlled axis gives its force only, the target ``held`` (its displacement is the site's record)."""
        displacement, force = list(displacement), list(force)
        axes = {axis: i for axis, i in self.points[name].items() if i < self.n}
        tokens: list[str] = []
        for values, quantity in ((displacement, MOTION), (force, FORCE)):
            for axis, index in axes.items():
                tokens += [axis, quantity[kinds[index]], number(values[index])]
        for axis, index in self.points[name].items():
            if index >= self.n:
                tokens += [axis, "force", number(held[index - self.n])]
        return tokens


def dof_kinds(dofs: Sequence[Dof]) -> list[str]:
    return [dof.kind for dof in dofs]
