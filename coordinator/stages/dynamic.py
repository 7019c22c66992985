"""The dynamic stage (the experiment's excitation, integrated by its integrator: today's run) and the free-vibration
stage (the same integration with no excitation), each over the forces held from earlier stages.

Entering either from rest (a first stage, or after a static one) starts the integrator at the committed
displacement and velocity with the held forces: M a0 = P + f_g(0) - C v0 - r(d0) (OpenSees' ``loadConst -time
0.0`` then a transient); its rows' time runs from 0 at the stage's start (a dynamic stage) or on from a dynamic or
free-vibration stage before (free vibration; from 0 after a static or quasi-static one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.coordinator.stages.base import Plan, Stage, StageConfigError, StageContext
from hybridsim.modules.config_schema import Key, Number, Schema

DURATION = Number("s", minimum=0, open_minimum=True)


class DynamicStage(Stage):
    kind = "dynamic"
    timed = counts_itself = True
    CONFIG = Schema("stage 'dynamic'", "The experiment's excitation ([ground_motion] or [[excitation]]) integrated "
                    "by its integrator, over the held forces.", {
                        "duration": Key(DURATION, "how much of the excitation (default: all of it)"),
                    })

    def __init__(self, name: str, ground: np.ndarray, dt: float) -> None:
        super().__init__(name, ground.shape[0] - 1)
        self.record, self.dt = ground, dt
        self.integration: Any = None

    @classmethod
    def build(cls, table: Mapping[str, Any], name: str, where: str, plan: Plan) -> "DynamicStage":
        if plan.ground is None:
            raise StageConfigError(f"{where}: a dynamic stage needs the experiment's excitation: give [ground_motion] "
                                   "or [[excitation]]")
        return cls(name, _cut(plan.ground, table.get("duration"), plan.dt, where), plan.dt)

    def times(self, before: float) -> np.ndarray:
        return self.dt * np.arange(1, self.rows + 1)

    def ground(self) -> np.ndarray | None:
        return self.record[1:]

    def enter(self, context: StageContext, resumed: bool) -> None:
        from hybridsim.coordinator.run_loop import Integration

        self.integration = Integration(context.start, context.partition, self.record, self.dt, context.status)
        self.integration.held = context.held
        if not resumed:
            integrator, model = context.integrator, context.model
            integrator.start(integrator.displacement, integrator.velocity,
                             context.held + model.ground_load(self.record[0]), integrator.restoring_force)

    def step(self, context: StageContext, k: int) -> None:
        integration = self.integration
        integration.step_id, integration.row_offset = context.step_id, context.row - k
        integration.step(k)
        context.step_id = integration.step_id


class FreeVibrationStage(DynamicStage):
    kind = "free-vibration"
    CONFIG = Schema("stage 'free-vibration'", "The integration with no excitation over the held forces: the "
                    "structure released from where the stage before left it.", {
                        "duration": Key(DURATION, "how long (s)", required=True),
                    })

    @classmethod
    def build(cls, table: Mapping[str, Any], name: str, where: str, plan: Plan) -> "FreeVibrationStage":
        steps = int(np.floor(float(table["duration"]) / plan.dt * (1 + 1e-12)))
        if steps < 1:
            raise StageConfigError(f"{where}.duration is shorter than one step of {plan.dt:g} s")
        components = 1 if plan.ground is None or plan.ground.ndim == 1 else plan.ground.shape[1]
        return cls(name, np.zeros(steps + 1) if components == 1 else np.zeros((steps + 1, components)), plan.dt)

    def times(self, before: float) -> np.ndarray:
        return before + self.dt * np.arange(1, self.rows + 1)

    def ground(self) -> np.ndarray | None:
        return None


def _cut(ground: np.ndarray, duration: float | None, dt: float, where: str) -> np.ndarray:
    """The excitation's first ``duration`` (s) on its grid."""
    if duration is None:
        return ground
    steps = int(np.floor(float(duration) / dt * (1 + 1e-12)))
    if steps > ground.shape[0] - 1:
        raise StageConfigError(f"{where}.duration: the excitation lasts {(ground.shape[0] - 1) * dt:g} s; cannot run "
                               f"{float(duration):g} s")
    if steps < 1:
        raise StageConfigError(f"{where}.duration is shorter than one step of {dt:g} s")
    return ground[:steps + 1]
