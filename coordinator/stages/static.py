"""A static stage: forces and/or displacements at named DOFs ramped in N increments, each solved to equilibrium
with the modules (:mod:`.equilibrium`), as OpenSees' ``LoadControl`` static analysis of a gravity stage.

Increment k of N applies the held forces plus k/N of the stage's forces, and moves each prescribed DOF k/N of the
way from where the stage began (the state the stage before left, :attr:`StageContext.origin`) to its target, as
OpenSees' ``DisplacementControl`` after ``loadConst``; its row's time is the load factor k/N.  The forces stay on in
every later stage (``loadConst``); the prescribed displacements are released.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.coordinator.stages.base import Plan, Stage, StageConfigError, StageContext, dof_values
from hybridsim.coordinator.stages.equilibrium import Newton
from hybridsim.modules.config_schema import Free, Integer, Key, Number, Numbers, Schema

TANGENT_KEYS = {
    "tangent": Key(Numbers("N/m", dims=(2,)), "the tangent of the Newton iterations, n x n over structure.dofs "
                   "(default: the pre-test's K_I)"),
    "tolerance": Key(Number(minimum=0, open_minimum=True), "converged when the free DOFs' unbalanced force is at "
                     "most this fraction of the larger of the applied and restoring forces", default=1e-10),
    "max_iterations": Key(Integer(1), "Newton iterations per increment before the run stops", default=50),
}


class StaticStage(Stage):
    kind = "static"
    CONFIG = Schema("stage 'static'", "Forces and displacements at named DOFs, ramped, each increment solved to "
                    "static equilibrium with the modules (Newton).", {
                        "forces": Key(Free(), "DOF name -> force (N, N*m on rotations), e.g. { y = -1.5e6 }; held "
                                      "in every later stage"),
                        "displacements": Key(Free(), "DOF name -> displacement (m, rad), ramped from where the "
                                             "stage begins; released after the stage"),
                        "increments": Key(Integer(1), "the ramp's increments (one results row each)", default=10),
                        **TANGENT_KEYS,
                    })

    def __init__(self, name: str, forces: np.ndarray, targets: dict[int, float], increments: int,
                 newton: dict[str, Any]) -> None:
        super().__init__(name, increments)
        self.forces, self.newton_options = forces, newton
        self.prescribed = np.array(sorted(targets), int)
        self.targets = np.array([targets[i] for i in self.prescribed])
        self.newton: Newton | None = None

    @classmethod
    def build(cls, table: Mapping[str, Any], name: str, where: str, plan: Plan) -> "StaticStage":
        forces = np.zeros(len(plan.dofs))
        for i, value in dof_values(table.get("forces", {}), f"{where}.forces", plan.dofs).items():
            forces[i] = value
        targets = dof_values(table.get("displacements", {}), f"{where}.displacements", plan.dofs)
        if not (np.any(forces) or targets):
            raise StageConfigError(f"{where}: give forces or displacements (e.g. forces = {{ {plan.dofs[0]} = -1.0e3 }})")
        return cls(name, forces, targets, int(table.get("increments", 10)), newton_options(table, where, plan))

    def times(self, before: float) -> np.ndarray:
        return np.arange(1, self.rows + 1) / self.rows

    def holds(self, ndof: int) -> np.ndarray:
        return self.forces

    def enter(self, context: StageContext, resumed: bool) -> None:
        """A fresh entry takes the stage's start from the committed row; a resumed one has it from the checkpoint."""
        if not resumed:
            context.origin[...] = context.integrator.displacement
        self.newton = make_newton(context, self.newton_options, self.prescribed)

    def step(self, context: StageContext, k: int) -> None:
        factor = k / self.rows
        start = context.origin[self.prescribed]
        values = start + factor * (self.targets - start)
        self.newton.solve(context, context.held + factor * self.forces, values,
                          f"static stage {self.name!r}, increment {k} of {self.rows}")


def newton_options(table: Mapping[str, Any], where: str, plan: Plan) -> dict[str, Any]:
    """The Newton keys of a stage's table (the declared tangent checked against the DOFs)."""
    options = {key: table.get(key, TANGENT_KEYS[key].default) for key in ("tolerance", "max_iterations")}
    if "tangent" in table:
        tangent = np.asarray(table["tangent"], float)
        n = len(plan.dofs)
        if tangent.shape != (n, n):
            raise StageConfigError(f"{where}.tangent must be {n} x {n} (structure.dofs), got {tangent.shape}")
        options["tangent"] = tangent
    return options


def make_newton(context: StageContext, options: dict[str, Any], prescribed: np.ndarray) -> Newton:
    """The stage's Newton iteration over the run's K_I (or its declared tangent)."""
    tangent = options.get("tangent")
    return Newton(context.stiffness if tangent is None else tangent, prescribed, options["tolerance"],
                  options["max_iterations"])
