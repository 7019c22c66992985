"""What every stage kind shares: the :class:`Stage` protocol, the run's state a stage steps (:class:`StageContext`),
and the refusals (:class:`StageConfigError` before the run, :class:`StageError` during it).

A stage adds ``rows`` rows to the results (row 0 is the rest state after the pre-test); each row is one step of
its stage: ``step(context, k)`` for k = 1 .. rows sends trials to the modules, commits the last, and leaves the
row's state (d, v, a, r and the load) in the integrator's arrays, where the results' row is read from and the
checkpoint is taken.  The modules see every row as one step of dt on their own clock (row n at t = n dt, whatever
the row's time in the results): an experimental site moves its actuators through a static increment in one
step's samples, as through a dynamic step.  ``enter`` is called before the first step the run takes in the stage (``resumed``: the
run resumes inside it, its state restored from the checkpoint).
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from hybridsim.coordinator.integrators import Integrator
from hybridsim.coordinator.model import StructuralModel
from hybridsim.coordinator.partition import Partition
from hybridsim.modules.config_schema import Schema


class StageConfigError(ValueError):
    """A ``[[stages]]`` entry that cannot run; the message names the key and the fix."""


class StageError(RuntimeError):
    """A stage that cannot go on (a static solution that does not converge); one line saying what to change."""


@dataclass(frozen=True)
class Plan:
    """What a stage is built against: the structure's DOFs, the step, the excitation on its grid."""

    dofs: tuple[str, ...]
    dt: float
    ground: np.ndarray | None
    """the excitation a_g(t_k) (steps + 1,) or (steps + 1, c); None: the experiment has none"""


@dataclass
class StageContext:
    """The run's state a stage steps: the modules, the integrator whose arrays hold the committed row, the
    structure's model and pre-test stiffness, the forces held from earlier stages."""

    partition: Partition
    integrator: Integrator
    model: StructuralModel
    stiffness: np.ndarray
    """K_I over the structure's DOFs (N/m)"""
    step_id: int
    """the module step ID committed last"""
    held: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """forces of the earlier static stages, held (N, N*m)"""
    origin: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """the displacement where the current stage began (m, rad); kept with every checkpoint (a resumed run's comes
    from it), so a stage resumed inside ramps from the same place"""
    row: int = 0
    """the results row being stepped"""
    dt: float = 0.0
    """s: the modules' step (row n is their t = n dt)"""
    start: Any = None
    """the run's :class:`hybridsim.coordinator.run_loop.Start` (a dynamic stage's integration is built on it)"""
    status: Any = None

    def evaluate(self, displacement: np.ndarray) -> np.ndarray:
        """One trial of the row at every module (a new step ID, at t = row dt): the summed restoring force (N) at
        ``displacement``."""
        self.step_id += 1
        return self.partition.restoring_force(self.step_id, self.row * self.dt, displacement)

    def settle(self, displacement: np.ndarray, force: np.ndarray, load: np.ndarray) -> None:
        """Commit the last trial; the row's state at rest: d, r and the load, no velocity nor acceleration."""
        self.partition.commit(self.step_id)
        integrator = self.integrator
        integrator.displacement[...] = displacement
        integrator.restoring_force[...] = force
        integrator.load[...] = load
        integrator.velocity[...] = 0.0
        integrator.acceleration[...] = 0.0


class Stage(abc.ABC):
    """One stage: its rows, the pseudo-time and ground of each, the forces it leaves held."""

    CONFIG: ClassVar[Schema]
    kind: ClassVar[str] = ""
    timed: ClassVar[bool] = False
    """its rows' time is in seconds (a later free-vibration stage's time runs on from it)"""
    counts_itself: ClassVar[bool] = False
    """its steps count their module evaluations for the summary themselves (the integrator's step does)"""

    def __init__(self, name: str, rows: int) -> None:
        self.name, self.rows = name, rows

    @classmethod
    @abc.abstractmethod
    def build(cls, table: Mapping[str, Any], name: str, where: str, plan: Plan) -> "Stage":
        """The stage from its validated ``[[stages]]`` entry (``where``: ``stages[i]``, for the messages);
        StageConfigError for what spans keys."""

    def times(self, before: float) -> np.ndarray:
        """The time of each of its rows (``before``: the last row's before it if that stage is ``timed``, else 0):
        by default its step k (a pseudo-time)."""
        return np.arange(1, self.rows + 1, dtype=float)

    def ground(self) -> np.ndarray | None:
        """a_g of each of its rows (rows,) or (rows, c); None: no excitation."""
        return None

    def holds(self, ndof: int) -> np.ndarray:
        """The forces it leaves held for the later stages (N, N*m)."""
        return np.zeros(ndof)

    def enter(self, context: StageContext, resumed: bool) -> None:
        """Before the run's first step in the stage."""

    @abc.abstractmethod
    def step(self, context: StageContext, k: int) -> None:
        """Row k (1 .. rows) of the stage, committed at every module, its state in the integrator's arrays."""


def dof_values(table: Any, key: str, dofs: Sequence[str]) -> dict[int, float]:
    """A table DOF name -> number (``forces = { y = -1.5e6 }``) as {DOF index: value}; StageConfigError naming the
    key otherwise."""
    if not isinstance(table, Mapping):
        raise StageConfigError(f"{key} must be a table of DOF names to numbers (e.g. {{ x = 0.01 }})")
    out = {}
    for name, value in table.items():
        if name not in dofs:
            raise StageConfigError(f"{key}.{name}: unknown DOF; it must be in structure.dofs ({', '.join(dofs)})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
            raise StageConfigError(f"{key}.{name} must be a finite number, got {value!r}")
        out[dofs.index(name)] = float(value)
    return out
