"""A quasi-static stage: displacement or force histories at DOFs (one, or several side by side: a lateral
displacement ladder beside an axial force history), each step solved to static equilibrium with the modules over
the held forces (:mod:`.equilibrium`); a history given step by step or generated as a cyclic protocol
(:mod:`.protocols`: FEMA 461, ATC-24).  A row's time is its step in the stage (a pseudo-time).  A force history's
last value is held in every later stage, as a static stage's forces; the displacements are released.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.coordinator.stages.base import Plan, Stage, StageConfigError, StageContext
from hybridsim.coordinator.stages.equilibrium import Newton
from hybridsim.coordinator.stages.protocols import PROTOCOL, protocol_history
from hybridsim.coordinator.stages.static import TANGENT_KEYS, make_newton, newton_options
from hybridsim.modules.config_schema import Key, Numbers, Schema, Table, Tables, Text

HISTORY_KEYS = {
    "dof": Key(Text(), "the DOF the history drives"),
    "control": Key(Text(("displacement", "force")), "what the history gives", default="displacement"),
    "values": Key(Numbers("m or N"), "the history, one target a step (from 0 before it)"),
    "protocol": Key(Table(PROTOCOL), "a cyclic displacement protocol instead of values"),
}
HISTORY = Schema("[[stages]].histories", "One history of a quasi-static stage of several.",
                 {**HISTORY_KEYS, "dof": Key(Text(), "the DOF the history drives", required=True)},
                 exactly_one=(("values", "protocol"),))


class QuasiStaticStage(Stage):
    kind = "quasi-static"
    CONFIG = Schema("stage 'quasi-static'", "Displacement or force histories at DOFs, each step solved to static "
                    "equilibrium with the modules over the held forces: one history (dof, control, values or "
                    "protocol) or several (histories, of one length).", {
                        **HISTORY_KEYS,
                        "histories": Key(Tables(HISTORY), "several histories side by side, one a DOF"),
                        **TANGENT_KEYS,
                    }, exactly_one=(("values", "protocol", "histories"),))

    def __init__(self, name: str, dofs: np.ndarray, force: np.ndarray, history: np.ndarray,
                 newton: dict[str, Any]) -> None:
        super().__init__(name, history.shape[0])
        self.dofs, self.force, self.history, self.newton_options = dofs, force, history, newton
        """the DOFs driven, which of them take forces, the targets (steps x DOFs)"""
        self.newton: Newton | None = None

    @classmethod
    def build(cls, table: Mapping[str, Any], name: str, where: str, plan: Plan) -> "QuasiStaticStage":
        entries = [(h, f"{where}.histories[{i}]") for i, h in enumerate(table["histories"])] \
            if "histories" in table else [(table, where)]
        dofs, force, histories = [], [], []
        for entry, at in entries:
            dof, forced, history = _history(entry, at, plan)
            if dof in dofs:
                raise StageConfigError(f"{at}.dof: {plan.dofs[dof]!r} is driven twice; give each DOF one history")
            dofs.append(dof)
            force.append(forced)
            histories.append(history)
        if len({h.size for h in histories}) > 1:
            raise StageConfigError(f"{where}.histories: give histories of one length (steps: "
                                   f"{', '.join(str(h.size) for h in histories)})")
        return cls(name, np.array(dofs), np.array(force), np.column_stack(histories),
                   newton_options(table, where, plan))

    def holds(self, ndof: int) -> np.ndarray:
        """Each force history's last value, held in the later stages (gravity stays on; OpenSees' ``loadConst``)."""
        held = np.zeros(ndof)
        held[self.dofs[self.force]] = self.history[-1, self.force]
        return held

    def enter(self, context: StageContext, resumed: bool) -> None:
        self.newton = make_newton(context, self.newton_options, self.dofs[~self.force])

    def step(self, context: StageContext, k: int) -> None:
        targets, load = self.history[k - 1], context.held.copy()
        load[self.dofs[self.force]] += targets[self.force]
        self.newton.solve(context, load, targets[~self.force],
                          f"quasi-static stage {self.name!r}, step {k} of {self.rows}")


def _history(entry: Mapping[str, Any], where: str, plan: Plan) -> tuple[int, bool, np.ndarray]:
    """(DOF index, force-controlled, targets) of one history's table."""
    if "dof" not in entry:
        raise StageConfigError(f"missing key {where}.dof; name the DOF the history drives")
    if entry["dof"] not in plan.dofs:
        raise StageConfigError(f"{where}.dof: unknown DOF {entry['dof']!r}; it must be in structure.dofs")
    force = entry.get("control", "displacement") == "force"
    if force and "protocol" in entry:
        raise StageConfigError(f"{where}.protocol is a displacement ladder: set control = \"displacement\" or give "
                               "the forces as values")
    if "values" not in entry and "protocol" not in entry:
        raise StageConfigError(f"{where}: give values or protocol")
    history = np.asarray(entry["values"], float) if "values" in entry else protocol_history(entry["protocol"])
    if history.size == 0:
        raise StageConfigError(f"{where}.values: give at least one target")
    return plan.dofs.index(entry["dof"]), force, history
