"""The module contract: one substructure behind describe/open/propose/execute/commit.

Every module (a `linear` matrix, an OpenSees model, an experimental site, a
remote daemon seen through gRPC) implements :class:`Module`.  The protocol is
the NTCP-style split used by UI-SIMCOR and NEESgrid:

``propose(step, command)``
    check the command against the module's limits *before anything moves*;
    raise :class:`StepRefused` with a readable reason to refuse it.
``execute(step)``
    impose the proposed command; return measured displacements and restoring
    forces.  A retried ``execute(step)`` returns the stored answer of that
    step and never applies it twice.
``commit(step)``
    make the trial state of ``step`` the committed state.

Step IDs are integers that strictly increase within a session.  A new
``propose`` after an uncommitted ``execute`` discards that trial (the module
returns to its committed state first), which serves both the pre-test
(trial deformations that are never committed) and iterative schemes
(several trials per time step, only the last one committed).

These values are what ``hybridsim.v1``'s messages carry (``codec`` converts); units are SI
(m, rad, N, N*m, s) at this interface.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import numpy as np

DofKind = Literal["translation", "rotation"]
Role = Literal["substructure", "control_backend"]
"""what a module is for: a substructure of the coordinator's structure, or a control backend (a lab: strokes
in, measured strokes out) that only an experimental site drives"""
FORCE_CONTROLLED = "force_controlled"
"""the key of a module's ``Description.info`` that names its force-controlled DOFs (comma-separated), which a lab
protocol's client may command forces at (:attr:`Command.force`)"""
UNIT_OF_KIND: dict[str, tuple[str, str]] = {
    "translation": ("m", "N"),
    "rotation": ("rad", "N*m"),
}


class ModuleError(Exception):
    """A module could not do what it was asked; the message says why."""


class AccessRefused(ModuleError):
    """A site refused the caller's credentials (gRPC UNAUTHENTICATED: a token missing or not the site's)."""


class StepRefused(ModuleError):
    """A module refused a step (limit exceeded, non-convergence, bad command)."""

    def __init__(self, step: int, reason: str) -> None:
        super().__init__(f"step {step} refused: {reason}")
        self.step = step
        self.reason = reason


@dataclass(frozen=True)
class Dof:
    """A control degree of freedom of a module, named in the coordinator's namespace."""

    name: str
    kind: DofKind = "translation"

    def __post_init__(self) -> None:
        if self.kind not in UNIT_OF_KIND:
            raise ModuleError(f"DOF {self.name!r}: kind must be 'translation' or 'rotation', not {self.kind!r}")

    @property
    def unit(self) -> str:
        return UNIT_OF_KIND[self.kind][0]

    @property
    def force_unit(self) -> str:
        return UNIT_OF_KIND[self.kind][1]


@dataclass(frozen=True)
class Description:
    """What a module tells the coordinator about itself.

    ``mass`` and ``damping`` (n x n over the module's DOFs, kg / N*s/m) are
    the inertia and viscous damping that the *coordinator* must carry for
    this substructure; the module's restoring force excludes them.
    """

    kind: str
    dofs: tuple[Dof, ...]
    mass: np.ndarray | None = None
    damping: np.ndarray | None = None
    can_checkpoint: bool = True
    own_clock: bool = False
    control_dt: float | None = None
    info: dict[str, str] = field(default_factory=dict)
    role: Role = "substructure"

    @property
    def dof_names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.dofs)


@dataclass(frozen=True)
class Session:
    """What the coordinator tells a module when a test opens."""

    dt: float
    """integration step (s)"""
    dof_names: tuple[str, ...]
    """the module's DOF names, in the order the coordinator will send them"""
    run_id: str = ""
    tolerance: float = 1e-9
    """relative tolerance for iterative modules (dimensionless)"""
    takeover: bool = False
    """a remote site ends another coordinator's open session for this one (else it refuses while one is open)"""
    records: bool = True
    """the coordinator stores the module's own records (a module keeps none it is not asked for)"""
    dt_declared: bool = True
    """False: the client's protocol carries no time step and the site's configuration declares none, so ``dt`` is
    a placeholder (1 s) that no rate limit may use (hybridsim.modules.limits refuses a velocity limit then)"""
    iterating: bool = False
    """the coordinator's integrator takes trials back (an iterative scheme): a module that can go back only to
    a state it kept (an experimental site whose plant is a daemon) keeps one at every step"""


@dataclass(frozen=True)
class Command:
    """A target for one step: displacements (and optionally velocities, accelerations)."""

    time: float
    """simulation time of the target (s)"""
    displacement: np.ndarray
    velocity: np.ndarray | None = None
    acceleration: np.ndarray | None = None
    force: np.ndarray | None = None
    """targets of the module's force-controlled DOFs (N, N*m), in the order its description names them
    (``info[FORCE_CONTROLLED]``); None: the module holds the targets it has.  Only a lab protocol's client sends
    them (OpenFresco's ExpForceControl): the coordinator never sees those DOFs, and the gRPC wire carries none"""


@dataclass(frozen=True)
class StepResult:
    """A module's answer to ``execute``: what it reached and the restoring force there."""

    step: int
    displacement: np.ndarray
    """measured (reached) displacements (m, rad)"""
    force: np.ndarray
    """restoring forces (N, N*m)"""
    counters: Mapping[str, float] | None = None
    """the module's event counters (cumulative over the session) that changed since its previous result, e.g.
    a site clock's ``clock_slowed_steps``; None when none did (the coordinator keeps the last value of each)"""


@dataclass(frozen=True)
class Record:
    """One of a module's own records (an experimental site's per-sample log, ...): rows x columns.

    A module that keeps records has ``records(since=0, final=True) -> list[Record]``, stored by the
    coordinator in the results file under ``/modules/<module>/records/<name>``.  A record is either
    whole (``first_row`` None: it replaces what is stored) or *streamed*: it grows one row per committed
    sample and the coordinator collects it in blocks during the run, so that the module holds only
    the rows not collected yet.  ``records(since=k, final=False)`` (during the run) returns the
    streamed records' rows from row k on (``first_row`` = k) and nothing else; the coordinator has
    stored every row before k, so the module may forget them.  ``records(since=k)`` (before
    ``close``) returns the same and the whole records.  A retried call returns the same rows (the
    coordinator stores a row at its index), so no row is lost or doubled.
    """

    name: str
    """a path-like name, e.g. ``target_strokes`` or ``compensator_1/parameters``"""
    values: np.ndarray
    """rows x columns (float)"""
    units: tuple[str, ...]
    """one per column"""
    columns: tuple[str, ...]
    """the name of every column"""
    description: str = ""
    first_row: int | None = None
    """a streamed record: the index of ``values``' first row in the whole record (None: a whole record)"""


@runtime_checkable
class Module(Protocol):
    """The interface every substructure implements, in process or over the wire."""

    def describe(self) -> Description: ...

    def open(self, session: Session) -> None: ...

    def propose(self, step: int, command: Command) -> None: ...

    def execute(self, step: int) -> StepResult: ...

    def commit(self, step: int) -> None: ...

    def checkpoint(self) -> bytes: ...

    def restore(self, state: bytes) -> None: ...

    def close(self) -> dict[str, float]: ...


def finish_run(module: object) -> None:
    """``module.finish()``, for a module that has one: the run its session served completed (called before
    ``close``), so the module may drop what it kept only for resuming that run (an OpenSees site's kept copies
    of its worker and committed-path file).  A run that stops, however, never calls it: it may be resumed."""
    finish = getattr(module, "finish", None)
    if finish is not None:
        finish()


def module_records(module: object, since: int = 0, final: bool = True) -> list[Record]:
    """``module.records(since, final)``: a module's own records (see :class:`Record`); none from a module
    that keeps none, and, during the run (``final`` False), none from a module that streams none."""
    records = getattr(module, "records", None)
    return [] if records is None else records(since, final)


def check_vector(step: int, name: str, values: np.ndarray, n: int) -> np.ndarray:
    """Return ``values`` as a float vector of length ``n`` or refuse the step."""
    vec = np.asarray(values, dtype=float)
    if vec.shape != (n,):
        raise StepRefused(step, f"{name} has {vec.size} values, the module has {n} DOFs")
    if not math.isfinite(vec @ vec) and not np.isfinite(vec).all():  # the dot product is NaN or inf if one value
        bad = [i for i, v in enumerate(vec) if not math.isfinite(v)]  # is; the exact test where the sum overflows
        raise StepRefused(step, f"{name} has non-finite values at DOF indices {bad}")
    return vec
