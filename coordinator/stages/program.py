"""A test program: its stages in order (:class:`Program`, built when the experiment is read) and the step loop's
integration part that steps them (:class:`StagedIntegration`).

Row 0 is the rest state after the pre-test; stage s owns rows ``first[s] .. first[s] + rows_s - 1``.  Each row's
time, stage and ground acceleration are known before the run (the results' ``time``, ``stage`` and
``ground_acceleration``), and so are the forces held when a stage begins: a run resumed at any row knows its stage
and its loads from the experiment alone, its state from the checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.partition import ModuleStepError
from hybridsim.coordinator.stages import STAGES
from hybridsim.coordinator.stages.base import Plan, Stage, StageContext, StageError
from hybridsim.registry import load

if TYPE_CHECKING:
    from hybridsim.coordinator.run_end import Status


class Program:
    """The stages of a run and what each row is: its stage, time and ground acceleration."""

    def __init__(self, stages: Sequence[Stage], ndof: int, components: int) -> None:
        self.stages = tuple(stages)
        self.first = np.cumsum([1] + [s.rows for s in self.stages])
        """row where each stage begins (and, last, the rows in all)"""
        self.steps = int(self.first[-1]) - 1
        self.stage_of = np.zeros(self.steps + 1)
        self.times = np.zeros(self.steps + 1)
        self.ground = np.zeros(self.steps + 1) if components == 1 else np.zeros((self.steps + 1, components))
        self.held = [np.zeros(ndof)]
        for s, stage in enumerate(self.stages):
            rows = slice(self.first[s], self.first[s + 1])
            self.stage_of[rows] = s
            timed = s > 0 and self.stages[s - 1].timed
            self.times[rows] = stage.times(float(self.times[self.first[s] - 1]) if timed else 0.0)
            ground = stage.ground()
            if ground is not None:
                self.ground[rows] = ground
            self.held.append(self.held[-1] + stage.holds(ndof))

    @classmethod
    def build(cls, tables: Sequence[Mapping[str, Any]], plan: Plan) -> "Program":
        """The program of validated ``[[stages]]`` tables (StageConfigError naming the entry)."""
        stages = []
        for i, table in enumerate(tables):
            kind = table["kind"]
            stages.append(load(STAGES, kind).build(table, table.get("name", f"{kind}-{i + 1}"), f"stages[{i}]", plan))
        components = 1 if plan.ground is None or plan.ground.ndim == 1 else plan.ground.shape[1]
        return cls(stages, len(plan.dofs), components)

    def locate(self, n: int) -> tuple[int, int]:
        """(stage, k): row n >= 1 is step k of that stage."""
        s = int(self.stage_of[n])
        return s, n - int(self.first[s]) + 1

    def simulated_s(self, rows: int, dt: float) -> float:
        """The seconds integrated in the first ``rows`` rows: the steps of its dynamic and free-vibration stages
        (the other stages' rows have no time in s)."""
        timed = np.array([s.timed for s in self.stages])
        return float(np.count_nonzero(timed[self.stage_of[1:rows].astype(int)]) * dt)

    def labels(self) -> dict[str, dict[str, Any]]:
        """The results file's ``stage`` labels: a number (the index in [[stages]]) and the stages' names."""
        return {"stage": {"units": "1", "stages": [s.name for s in self.stages]}}

    def describe(self) -> list[dict[str, Any]]:
        """Each stage's name, kind and rows (for the results file and the summary)."""
        return [{"name": s.name, "kind": s.kind, "first_row": int(self.first[i]), "rows": s.rows}
                for i, s in enumerate(self.stages)]


class StagedIntegration:
    """The step loop's integration part for a program: row n is a step of its stage (entered when the run first
    steps in it); owns the module step ID committed last, as :class:`hybridsim.coordinator.run_loop.Integration`."""

    def __init__(self, program: Program, context: StageContext, status: "Status") -> None:
        self.program, self.context, self.status = program, context, status
        self.ground = program.ground
        self.step_id = context.step_id
        self.current = -1

    def step(self, n: int) -> None:
        """Row n: its stage's step, committed; a stop says the row, the stage and why."""
        program, context = self.program, self.context
        s, k = program.locate(n)
        stage = program.stages[s]
        context.step_id, context.held, context.row = self.step_id, program.held[s], n
        try:
            if s != self.current:
                stage.enter(context, resumed=k > 1)
                self.current = s
            stage.step(context, k)
            if not stage.counts_itself:
                context.start.figures.count(context.step_id - self.step_id)
        except ModuleStepError as exc:
            located = exc.at_row(n, float(program.times[n]))
            self.status.stopped(str(located), step=n, module=exc.module_name, cause=str(exc.cause))
            raise located from exc.cause
        except StageError as exc:
            self.status.stopped(f"row {n}: {exc}", step=n, cause=str(exc))
            raise RunStopped(f"row {n}: {exc}") from None
        self.step_id = context.step_id
