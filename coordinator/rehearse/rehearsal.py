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
from hybridsim.coordinator.problems.marths.loop import RunSpec
from hybridsim.coordinator.problems.marths.parts import SAMPLE_RATE
from hybridsim.coordinator.rehearse import marths_trials, sheet
from hybridsim.coordinator.rehearse.envelope import UNITS, envelope, site_limits


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
    outcomes = marths_trials.run_trials(specs, executor, workers, scheduler)
    names = [marths_trials.trial_name(spec, i) for i, spec in enumerate(specs)]
    stopped = [(name, o) for name, o in zip(names, outcomes) if isinstance(o, str)]
    results = [o for o in outcomes if not isinstance(o, str)]
    ran = [name for name, o in zip(names, outcomes) if not isinstance(o, str)]
    site = _site_config(experiment)
    peaks = [marths_trials.site_peaks(r.history) for r in results]
    rows = [envelope(limit, [p[limit.table, limit.kind][limit.index] for p in peaks], ran)
            for limit in site_limits(site, list(site.get("dofs", ())), marths_trials.ACTUATORS)]
    go, why = sheet.verdict(rows, stopped, f"site {experiment.evaluation.get('site')!r}")
    area = _piston_area(table, 2)
    return {"experiment": str(path), "verdict": go, "why": why, "trials": names,
            "stopped": [f"{name}: {reason}" for name, reason in stopped], **_margins(specs[0], names[0], table),
            "limits": rows, "peaks": {f"{t}.{k}": sheet.distribution([p[t, k] for p in peaks])
                                      for t, k in UNITS} if peaks else {},
            "unchecked": [r["limit"] for r in rows if not r["measured"]],
            "actuators": _actuators(results, area), "piston_area": area,
            "criteria": {name: sheet.distribution([r.criteria[name] for r in results])
                         for name in (results[0].criteria if results else {})},
            "wall_s": [r.wall_s for r in results]}


def _margins(nominal: RunSpec, name: str, table: dict[str, Any]) -> dict[str, dict[str, Any] | None]:
    """The nominal trial's gain and delay margins (None: not sought)."""
    gain, delay = {"trial": name}, {"trial": name}
    if default(REHEARSE, table, "gain_margin"):
        gain["tolerance"] = default(REHEARSE, table, "gain_margin_tolerance")
        gain["loss"] = marths_trials.gain_margin(nominal, gain["tolerance"])
    if default(REHEARSE, table, "delay_margin"):
        delay["tracking_percent"] = default(REHEARSE, table, "delay_margin_tracking")
        delay["samples"] = marths_trials.delay_margin(nominal, delay["tracking_percent"])
        delay["s"] = delay["samples"] / SAMPLE_RATE
    return {"gain_margin": gain if "loss" in gain else None, "delay_margin": delay if "s" in delay else None}


def _actuators(results: list, area: list[float] | None) -> list[dict[str, Any]]:
    """Per actuator, each figure's distribution over the trials that ran."""
    figures = [marths_trials.actuator_figures(r.history, area) for r in results]
    return [{key: None if figures[0][a][key] is None else sheet.distribution([[f[a][key]] for f in figures])
             for key in figures[0][a]} for a in range(len(figures[0]))] if figures else []
