"""A quasi-static stage: a displacement or force history at one DOF, each step solved to static equilibrium with
the modules over the held forces (:mod:`.equilibrium`); the history given step by step or generated as a cyclic
protocol (:mod:`.protocols`: FEMA 461, ATC-24).  A row's time is its step in the stage (a pseudo-time).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.coordinator.stages.base import Plan, Stage, StageConfigError, StageContext
from hybridsim.coordinator.stages.equilibrium import Newton
from hybridsim.coordinator.stages.protocols import PROTOCOL, protocol_history
from hybridsim.coordinator.stages.static import TANGENT_KEYS, make_newton, newton_options
from hybridsim.modules.config_schema import Key, Numbers, Schema, Table, Text


class QuasiStaticStage(Stage):
    kind = "quasi-static"
    CONFIG = Schema("stage 'quasi-static'", "A displacement or force history at one DOF, each step solved to static "
                    "equilibrium with the modules over the held forces.", {
                        "dof": Key(Text(), "the DOF the history drives", required=True),
                        "control": Key(Text(("displacement", "force")), "what the history gives",
                                       default="displacement"),
                        "values": Key(Numbers("m or N"), "the history, one target a step (from 0 before it)"),
                        "protocol": Key(Table(PROTOCOL), "a cyclic displacement protocol instead of values"),
                        **TANGENT_KEYS,
                    }, exactly_one=(("values", "protocol"),))

    def __init__(self, name: str, dof: int, force: bool, history: np.ndarray, newton: dict[str, Any]) -> None:
        super().__init__(name, history.size)
        self.dof, self.force, self.history, self.newton_options = dof, force, history, newton
        self.newton: Newton | None = None

    @classmethod
    def build(cls, table: Mapping[str, Any], name: str, where: str, plan: Plan) -> "QuasiStaticStage":
        if table["dof"] not in plan.dofs:
            raise StageConfigError(f"{where}.dof: unknown DOF {table['dof']!r}; it must be in structure.dofs")
        force = table.get("control", "displacement") == "force"
        if force and "protocol" in table:
            raise StageConfigError(f"{where}.protocol is a displacement ladder: set control = \"displacement\" or "
                                   "give the forces as values")
        history = np.asarray(table["values"], float) if "values" in table else protocol_history(table["protocol"])
        if history.size == 0:
            raise StageConfigError(f"{where}.values: give at least one target")
        return cls(name, plan.dofs.index(table["dof"]), force, history, newton_options(table, where, plan))

    def enter(self, context: StageContext, resumed: bool) -> None:
        self.newton = make_newton(context, self.newton_options, np.array([] if self.force else [self.dof], int))

    def step(self, context: StageContext, k: int) -> None:
        target, load = self.history[k - 1], context.held.copy()
        if self.force:
            load[self.dof] += target
        values = np.array([] if self.force else [target])
        self.newton.solve(context, load, values, f"quasi-static stage {self.name!r}, step {k} of {self.rows}")
