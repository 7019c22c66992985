"""A rehearsal: the experiment's trials under its sites' uncertainty, set against the site's limits, as a sheet.

``[rehearse]`` in the experiment file (optional) gives the trials, how much of the record to run and the
actuators' piston area; the command line's ``--trials`` overrides the file's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.experiment import Experiment, load_experiment
from hybridsim.coordinator.experiment_schema import REHEARSE, default
from hybridsim.coordinator.rehearse import marths_trials, sheet
from hybridsim.coordinator.rehearse.envelope import envelope, site_limits


def _site_config(experiment: Experiment) -> dict[str, Any]:
    name = (experiment.evaluation or {}).get("site")
    return next((m.config for m in experiment.modules if m.name == name), {})


def _piston_area(table: dict[str, Any], actuators: int) -> list[float] | None:
    area = table.get("piston_area")
    if isinstance(area, list) and len(area) != actuators:
        raise UsageError(f"rehearse.piston_area: give one area or {actuators} (one per actuator), not {len(area)}")
    return None if area is None else [float(area)] * actuators if isinstance(area, (int, float)) else list(area)


def rehearse(path: Path, trials: int | None = None, executor: str = "serial", workers: int = 2,
             scheduler: str | None = None) -> dict[str, Any]:
    """The sheet of a rehearsal of the experiment file at ``path``."""
    experiment = load_experiment(path)
    table = experiment.table.get("rehearse", {})
    n = trials if trials is not None else default(REHEARSE, table, "trials")
    specs = marths_trials.trial_specs(experiment.evaluation, n, table.get("duration"))
    results = marths_trials.run_trials(specs, executor, workers, scheduler)
    names = [marths_trials.trial_name(spec, i) for i, spec in enumerate(specs)]
    site = _site_config(experiment)
    peaks = [marths_trials.site_peaks(r.history) for r in results]
    dofs = list(site.get("dofs", ()))
    rows = [envelope(limit, [p[limit.kind][dofs.index(limit.dof)] for p in peaks], names)
            for limit in site_limits(site.get("limits"), dofs)]
    go, why = sheet.verdict(rows)
    area = _piston_area(table, 2)
    figures = [marths_trials.actuator_figures(r.history, area) for r in results]
    actuators = [{key: None if figures[0][a][key] is None else sheet.distribution([[f[a][key]] for f in figures])
                  for key in figures[0][a]} for a in range(len(figures[0]))]
    return {"experiment": str(path), "verdict": go, "why": why, "trials": names,
            "limits": rows, "unchecked": [r["limit"] for r in rows if not r["measured"]],
            "actuators": actuators, "piston_area": area,
            "criteria": {name: sheet.distribution([r.criteria[name] for r in results])
                         for name in results[0].criteria},
            "wall_s": [r.wall_s for r in results]}
