"""The virtual specimen of a lab: what makes the load-cell forces from where the actuators really are.

A specimen is any in-process module (``linear``, ``spring``, ``opensees``: an openseespy model)
over either the actuators' strokes (``coordinates = "actuators"``: its DOFs are the strokes, its
forces the load cells') or the setup's DOFs
(``coordinates = "dofs"``, the default: q = setup.pose(strokes), the module's restoring force
R(q), and the load cells carry the forces f with J(q)^T f = R, least-norm when the rig has more
actuators than DOFs).  Every control sample the specimen is driven to the actuators' true
positions and committed (they have moved); a probe is a trial that is never committed.  An
openseespy model can also carry the actuators themselves (``coordinates = "attachments"``, OpenFresco's
simulated-domain control: hybridsim.modules.plant.simulated_domain).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hybridsim.wire.contract import Command, ModuleError, Session

if TYPE_CHECKING:
    from hybridsim.modules.plant.simulated_domain import SimulatedDomain


def build_specimen(table: Mapping[str, Any], actuators: int, sample_period: float,
                   base_dir: Path | None = None) -> "VirtualSpecimen | SimulatedDomain":
    """The lab's specimen of a ``specimen`` table (declared by hybridsim.modules.plant.specimen_kinds)."""
    if table.get("coordinates") != "attachments":
        return VirtualSpecimen(table, actuators, sample_period, base_dir)
    if table.get("kind") != "opensees":
        raise ModuleError("specimen.coordinates = 'attachments' drives an openseespy model (kind = 'opensees') "
                          "through its actuator elements; a linear or spring specimen takes 'dofs' or 'actuators'")
    from hybridsim.modules.plant.simulated_domain import SimulatedDomain  # openseespy, only when used

    return SimulatedDomain(table, actuators, base_dir)


class VirtualSpecimen:
    """``table``: ``kind`` (a module kind), ``coordinates``, ``setup`` (a setup table, for DOF coordinates)
    and the module's own keys."""

    COORDINATES = ("dofs", "actuators")

    def __init__(self, table: Mapping[str, Any], actuators: int, sample_period: float,
                 base_dir: Path | None = None) -> None:
        from hybridsim.modules.experimental.setups.kinds import build_setup
        from hybridsim.modules.registry import build_module

        table = dict(table)
        kind = table.pop("kind", None)
        self.coordinates = table.pop("coordinates", "dofs")
        if self.coordinates not in self.COORDINATES:
            raise ModuleError(f"specimen.coordinates must be 'dofs' or 'actuators', not {self.coordinates!r}")
        setup_table = table.pop("setup", None)
        held = table.pop("held_loads", None)
        if self.coordinates == "dofs":
            if setup_table is None:
                raise ModuleError("specimen: coordinates = 'dofs' needs the rig's setup table (specimen.setup)")
            self.setup = build_setup(setup_table)
            if self.setup.actuators != actuators:
                raise ModuleError(f"specimen.setup has {self.setup.actuators} actuators, the lab {actuators}")
            names = [d.name for d in self.setup.dofs]
        else:
            self.setup = None
            names = [f"actuator_{i + 1}" for i in range(actuators)]
        self.cells = actuators if self.setup is None else self.setup.cells
        """load-cell readings: one per actuator, or the setup's (a rig that reads its braces or rods)"""
        passive = self.cells - actuators if self.setup is not None and self.setup.actuator_cells else 0
        if (held is not None) != (passive > 0) or (held is not None and len(held) != passive):
            raise ModuleError(f"specimen.held_loads: give the {passive} loads the rig's jacks hold on its passive "
                              "load cells (a spreader beam's rods, N)" if passive else
                              "specimen.held_loads: this rig has no passive load cells (rods) to hold")
        self.held = None if held is None else np.asarray(held, float)
        if not isinstance(kind, str):
            raise ModuleError("specimen.kind must name a module kind (linear, spring, opensees)")
        if "control" not in table:  # an opensees model names its control DOFs itself
            table.setdefault("dofs", names)
        self.module = build_module(kind, table, base_dir)
        self.dof_names = self.module.describe().dof_names
        if len(self.dof_names) != len(names):
            raise ModuleError(f"specimen ({kind}) has {len(self.dof_names)} DOFs; the "
                              f"{self.coordinates} it is driven at are {len(names)}")
        self.module.open(Session(sample_period, self.dof_names))
        self.sample_period = sample_period
        self._step = 0
        self.rest_loads = self.commit(np.zeros(actuators), 0)
        """the load cells at rest (N): zero, or what held loads (rods) put on them"""

    def _loads(self, strokes: np.ndarray, tick: int) -> np.ndarray:
        self._step += 1
        q = strokes if self.setup is None else self.setup.pose(strokes)
        self.module.propose(self._step, Command(tick * self.sample_period, q))
        force = self.module.execute(self._step).force
        if self.setup is None:
            return force
        transpose = self.setup.cell_jacobian(q).T
        if self.held is not None:  # the rods hold their loads, the actuators balance R and them
            n = transpose.shape[1] - self.held.size
            pushing = np.linalg.solve(transpose[:, :n], force - transpose[:, n:] @ self.held)
            return np.concatenate([pushing, self.held])
        if transpose.shape[0] == transpose.shape[1]:
            return np.linalg.solve(transpose, force)
        return np.linalg.lstsq(transpose, force, rcond=None)[0]

    def commit(self, strokes: np.ndarray, tick: int) -> np.ndarray:
        """The load-cell forces (N) with the actuators at ``strokes`` (m) at sample ``tick``; committed."""
        loads = self._loads(strokes, tick)
        self.module.commit(self._step)
        return loads

    def probe(self, strokes: np.ndarray, tick: int) -> np.ndarray:
        """The load-cell forces (N) at ``strokes`` (m) without committing: a pre-test probe."""
        return self._loads(strokes, tick)

    def state(self) -> dict[str, Any]:
        return {"module": self.module.checkpoint().decode(), "step": self._step}

    def set_state(self, state: dict[str, Any]) -> None:
        self.module.restore(state["module"].encode())
        self._step = max(self._step, int(state["step"]))  # the module's step IDs only increase

    def close(self) -> None:
        self.module.close()
