"""Similitude at a site's boundary: a scaled specimen seen by the coordinator at prototype scale.

A module's ``scale = { length = λL, force = λF, time = λT }`` (specimen / prototype) converts every
command that leaves the coordinator for the module and every measurement that comes back (Harris &
Sabnis, *Structural Modeling and Experimental Techniques*, 2nd ed., 1999, ch. 2: a translation scales by
λL, a rotation by 1; a force by λF, a moment by λF λL; time by λT, so a velocity by λL/λT and an
acceleration by λL/λT²).  Per DOF i with length factor s_i and force factor f_i:

    d_specimen = s d_prototype,   v by s/λT,   a by s/λT²,   t and dt by λT,
    r_prototype = r_specimen / f,
    M_prototype = diag(1/f) M_specimen diag(s/λT²),   C_prototype = diag(1/f) C_specimen diag(s/λT).

A linear specimen of prototype stiffness K is therefore built with diag(f) K diag(1/s) (on translations
λF/λL · K).  The wrapped module also keeps what it reached at its own scale, a streamed record
``specimen`` (one row per committed step: the specimen's displacements and forces), beside the
prototype-scale rows the coordinator records (a site that streams its own records, strokes and load cells at
its scale, keeps those instead); its description names the factors (the results file's
``module_descriptions``).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

import numpy as np

from hybridsim.wire.contract import Command, Description, Module, ModuleError, Record, Session, StepResult

_COUNT = struct.Struct("<Q")


@dataclass(frozen=True)
class Scale:
    """Specimen-over-prototype factors (dimensionless): length, force, time."""

    length: float = 1.0
    force: float = 1.0
    time: float = 1.0

    @property
    def unit(self) -> bool:
        return self.length == self.force == self.time == 1.0

    def factors(self, description: Description) -> tuple[np.ndarray, np.ndarray]:
        """Per DOF of ``description``: the displacement factor s (λL on translations, 1 on rotations) and the
        force factor f (λF on translations, λF λL on moments)."""
        rotation = np.array([d.kind == "rotation" for d in description.dofs], dtype=bool)
        s = np.where(rotation, 1.0, self.length)
        f = np.where(rotation, self.force * self.length, self.force)
        return s, f


class ScaledModule:
    """``module`` (a scaled specimen) behind the module interface at prototype scale (see the module's doc)."""

    def __init__(self, module: Module, scale: Scale) -> None:
        self.inner, self.scale = module, scale
        self.is_remote = getattr(module, "is_remote", False)
        self._s = self._f = np.ones(0)
        self._rows: list[np.ndarray] = []
        self._first = 0
        """the index in the ``specimen`` record of ``_rows[0]``"""
        self._trial: np.ndarray | None = None
        self._columns: tuple[str, ...] = ()
        self._units: tuple[str, ...] = ()

    def describe(self) -> Description:
        inner = self.inner.describe()
        if "dynamic" in inner.info:
            raise ModuleError("a dynamic module integrates its own mass at its own scale: drop its scale "
                              "(or model it at prototype scale)")
        self._s, self._f = self.scale.factors(inner)
        lt = self.scale.time
        mass = None if inner.mass is None else (inner.mass / self._f[:, None]) * (self._s / lt ** 2)[None, :]
        damping = None if inner.damping is None else (inner.damping / self._f[:, None]) * (self._s / lt)[None, :]
        names = inner.dof_names
        self._columns = (*(f"{n}/displacement" for n in names), *(f"{n}/force" for n in names))
        self._units = (*(d.unit for d in inner.dofs), *(d.force_unit for d in inner.dofs))
        info = {**inner.info, "scale": json.dumps({"length": self.scale.length, "force": self.scale.force,
                                                    "time": self.scale.time})}
        control_dt = None if inner.control_dt is None else inner.control_dt / lt
        return Description(inner.kind, inner.dofs, mass, damping, inner.can_checkpoint, inner.own_clock,
                           control_dt, info, inner.role)

    def open(self, session: Session) -> None:
        if not self._s.size:
            self.describe()
        self.inner.open(Session(session.dt * self.scale.time, session.dof_names, session.run_id, session.tolerance,
                                session.takeover, session.records, session.iterating))

    def propose(self, step: int, command: Command) -> None:
        lt, s = self.scale.time, self._s
        scaled = Command(command.time * lt, np.asarray(command.displacement, dtype=float) * s,
                         None if command.velocity is None else np.asarray(command.velocity) * (s / lt),
                         None if command.acceleration is None else np.asarray(command.acceleration) * (s / lt ** 2))
        self.inner.propose(step, scaled)

    def execute(self, step: int) -> StepResult:
        result = self.inner.execute(step)
        self._trial = np.concatenate([result.displacement, result.force])
        return StepResult(result.step, result.displacement / self._s, result.force / self._f, result.counters)

    def commit(self, step: int) -> None:
        self.inner.commit(step)
        if self._trial is not None:
            self._rows.append(self._trial)
            self._trial = None

    def checkpoint(self) -> bytes:
        return _COUNT.pack(self._first + len(self._rows)) + self.inner.checkpoint()

    def restore(self, state: bytes) -> None:
        (count,) = _COUNT.unpack_from(state)
        self.inner.restore(state[_COUNT.size:])
        self._rows, self._first, self._trial = [], count, None

    def close(self) -> dict[str, float]:
        return self.inner.close()

    def finish(self) -> None:
        finish = getattr(self.inner, "finish", None)
        if finish is not None:
            finish()

    def records(self, since: int = 0, final: bool = True) -> list[Record]:
        """The inner module's records and, for a module that streams none of its own (a site's own records are
        at its scale already: strokes, load cells), the streamed ``specimen`` record from row ``since`` on (rows
        before it are stored by the coordinator and forgotten here)."""
        inner = getattr(self.inner, "records", None)
        records = [] if inner is None else list(inner(since, final))
        if any(r.first_row is not None for r in records):
            self._rows = []
            return records
        start = max(since, self._first)
        self._rows, self._first = self._rows[start - self._first:], start
        width = len(self._columns)
        values = np.array(self._rows, dtype=float).reshape(len(self._rows), width)
        records.append(Record("specimen", values, self._units, self._columns,
                              "what the specimen reached at its own scale, one row per committed step", start))
        return records
