"""Benchmark campaigns: the nominal run and N uncertain plants as runs of the campaign machinery.

:class:`Trials` is the campaign subject ``problem = "marths"`` (docs/campaigns.md): each run of the benchmark
(its own plant and noise seeds, §15) a row of the campaign table with its own file, on any executor of
:mod:`hybridsim.coordinator.problems.executors`; ``hybridsim benchmark marths`` is such a campaign of its
options (:func:`runs`).  The summary has the shape of ``hybridsim benchmark marths --json``:
``{"nominal": J, "trials": [J, ...], "mean": J, "max_command_volts": [v1, v2],
"realizable": bool, "wall_s": s}``, J unrounded, ``mean`` over the uncertain
runs (the nominal run when there are none, §14.3).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hybridsim.coordinator.campaign.grid import Run, expand
from hybridsim.coordinator.campaign.runner import Row
from hybridsim.coordinator.campaign.subjects.base import write_outcome
from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.problems.marths import loop, parts
from hybridsim.coordinator.problems.marths.evaluation import criteria, mean_criteria, spread_criteria
from hybridsim.wire.contract import ModuleError

TOPOLOGIES = ("inprocess", "daemons", "own-clock")
SETTINGS = {"topology": "inprocess", "seed_offset": 0}
"""a run's values that are not RunSpec fields, and their defaults"""
SIGNALS = tuple(f.name for f in fields(loop.History) if f.name not in ("spec", "info"))
"""the logged signals a trial's file keeps (loop.History)"""


@dataclass
class TrialResult:
    """One run of a campaign: its spec, criteria, largest commands and (if kept) its logged signals."""

    spec: loop.RunSpec
    criteria: dict[str, list[float]]
    max_command_volts: list[float]
    realizable: bool
    """the benchmark's per-run rule: flagged only if both actuators exceed the saturation"""
    wall_s: float
    history: loop.History | None = None
    site: dict[str, float] = field(default_factory=dict)
    """the site's clock counters and lateness (topology own-clock; docs/realtime.md)"""


def run_one(spec: loop.RunSpec, topology: str = "inprocess", keep_history: bool = True) -> TrialResult:
    """One run and its criteria (a top-level function, so process pools and Dask can ship it)."""
    start = time.perf_counter()
    if topology == "inprocess":
        hist = loop.run(spec)
    elif topology in ("daemons", "own-clock"):
        from hybridsim.coordinator.problems.marths.daemons import run_on_daemons

        hist = run_on_daemons(spec, clock=topology == "own-clock")
    else:
        raise ValueError(f"topology must be one of {', '.join(TOPOLOGIES)}, not {topology!r}")
    volts = hist.max_command_volts
    return TrialResult(spec, criteria(hist, parts.SAMPLE_RATE), volts, parts.daq().realizable(volts),
                       time.perf_counter() - start, hist if keep_history else None, hist.info.get("site", {}))


def summary(results: Sequence[TrialResult], wall_s: float) -> dict[str, Any]:
    """The JSON object of ``hybridsim benchmark marths --json``."""
    nominal, trials = results[0], list(results[1:])
    volts = [max(r.max_command_volts[i] for r in results) for i in range(2)]
    return {
        "nominal": nominal.criteria,
        "trials": [r.criteria for r in trials],
        "mean": mean_criteria([r.criteria for r in trials]) if trials else nominal.criteria,
        "max_command_volts": volts,
        "realizable": all(r.realizable for r in results),
        "wall_s": wall_s,
        **({"site_clock": [r.site for r in results]} if nominal.site else {}),
    }


def spread(results: Sequence[TrialResult]) -> dict[str, list[float]] | None:
    """Standard deviation of each index over the uncertain runs (None without any)."""
    trials = [r.criteria for r in results[1:]]
    return spread_criteria(trials) if trials else None


def _settings(spec: loop.RunSpec, topology: str, seed_offset: int) -> dict[str, Any]:
    """The settings of ``spec`` that differ from the defaults (RunSpec's and SETTINGS)."""
    defaults = loop.RunSpec()
    settings = {f.name: getattr(spec, f.name) for f in fields(loop.RunSpec)
                if getattr(spec, f.name) != getattr(defaults, f.name)}
    settings.update({k: v for k, v in {"topology": topology, "seed_offset": seed_offset}.items() if v != SETTINGS[k]})
    return settings


def runs(base: loop.RunSpec, trials: int, topology: str = "inprocess", seed_offset: int = 0) -> list[Run]:
    """The benchmark's campaign of ``base`` as runs: the nominal run, then ``trials`` uncertain plants when its
    plant is "uncertain"; a run's values are the settings that differ from the defaults."""
    settings = _settings(base, topology, seed_offset)
    return expand({key: [value] for key, value in settings.items()}, trials + 1 if base.plant == "uncertain" else 1)


def run_of(spec: loop.RunSpec, topology: str = "inprocess") -> Run:
    """The run of ``spec`` as it is: its plant and noise seeds among its values."""
    explicit = {"plant_seed": spec.plant_seed, "noise_seed": spec.noise_seed}
    return Run(tuple({**_settings(spec, topology, 0), **explicit}.items()), 0)


KINDS = {"bool": ((bool,), "true or false"), "int": ((int,), "a whole number"), "float": ((int, float), "a number"),
         "str": ((str,), "a name")}
"""a RunSpec field's annotation -> the TOML values it takes, and how a message says so"""


def _check_type(name: str, annotation: str, value: Any) -> None:
    """UsageError (one line) unless ``value`` is of the RunSpec field's type (``annotation``; "X | None": or None)."""
    kind = annotation.split(" | ")[0]
    types, what = KINDS[kind]
    if value is None and annotation.endswith("| None"):
        return
    if not isinstance(value, types) or (kind != "bool" and isinstance(value, bool)):
        unit = " (s)" if name == "duration" else ""
        raise UsageError(f"campaign.grid.{name}: {what}{unit}, not {value!r}")


def spec_of(run: Run) -> tuple[loop.RunSpec, str]:
    """The run's RunSpec and topology; UsageError (one line) for a value that is not a maRTHS run's."""
    values = {**SETTINGS, **dict(run.values + run.drawn)}
    unknown = set(values) - {f.name for f in fields(loop.RunSpec)} - set(SETTINGS)
    if unknown:
        names = ", ".join([*(f.name for f in fields(loop.RunSpec)), *SETTINGS])
        key = sorted(unknown)[0]
        table = "random" if key in dict(run.drawn) else "grid"
        raise UsageError(f"campaign.{table}.{key}: not a setting of a maRTHS run; one of {names}")
    for f in fields(loop.RunSpec):
        if f.name in values:
            _check_type(f.name, str(f.type), values[f.name])
    topology, offset = values.pop("topology"), values.pop("seed_offset")
    if topology not in TOPOLOGIES:
        raise UsageError(f"campaign.grid.topology: one of {', '.join(TOPOLOGIES)}, not {topology!r}")
    try:
        base = loop.RunSpec(**values)
        specs = loop.trial_specs(base, run.seed, offset)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"campaign run {run.run_id}: {exc}") from None
    if {"plant_seed", "noise_seed"} & set(values):  # the run's own seeds
        if run.seed or offset:
            raise UsageError(f"campaign run {run.run_id}: give plant_seed and noise_seed, or trials and seed_offset "
                             "(the benchmark's seeds), not both")
        return base, topology
    if run.seed >= len(specs):
        raise UsageError(f"campaign run {run.run_id}: the seeds after 0 are the benchmark's uncertain plants: "
                         "set plant = [\"uncertain\"] in [campaign.grid], or trials = 1")
    return specs[run.seed], topology


@dataclass(frozen=True)
class Trials:
    """The maRTHS benchmark's runs as a campaign's subject (``[campaign] problem = "marths"``).

    A run's values are RunSpec fields (record, scale, compensator, plant, duration, ...) and ``topology``
    (TOPOLOGIES), ``seed_offset``; its seed s is the benchmark's run s (:func:`loop.trial_specs`): 0 the nominal
    plant (noise seed 123), s >= 1 the uncertain plant s (plant seed 1000 + s, noise seed 2000 + s), each plus
    ``seed_offset``; a run that gives ``plant_seed`` or ``noise_seed`` is the RunSpec of its values as they are
    (:func:`run_of`).  Its file: the summary (J1..J10 under ``evaluation.J``, the largest command volts,
    realizable, the peak displacements (:func:`peaks`), the trial's wall time, the site's clock) and, with
    ``keep_history``, the logged signals (SIGNALS).  A trial is seconds of work: one its process lost is made afresh.
    """

    keep_history: bool = True
    start_method = "fork"
    """a trial starts no results writer: forked workers (as the benchmark's pool always was) inherit the imports"""

    def check(self, runs: Sequence[Run]) -> None:
        for run in runs:
            spec_of(run)

    def make(self, run: Run, path: Path) -> dict[str, Any]:
        spec, topology = spec_of(run)
        try:
            result = run_one(spec, topology)
        except ModuleError as exc:  # a site failed or refused a step, or a runaway guard tripped
            raise RunStopped(str(exc)) from None
        history = result.history
        summary = {"evaluation": {"J": result.criteria, "max_command_volts": result.max_command_volts,
                                  "realizable": result.realizable}, "peak_displacement": peaks(history),
                   "wall_s": result.wall_s, "site": result.site}
        return write_outcome(path, summary, {name: getattr(history, name) for name in SIGNALS}
                             if self.keep_history else None)

    def resume(self, path: Path) -> None:
        return None

    def result(self, row: Row) -> TrialResult:
        """The trial of a completed row, its logged signals read back from its file when they were kept (without
        them the row alone: a Dask worker on another machine may have written the file)."""
        spec = spec_of(row.run)[0]
        site = row.summary.get("site", {})
        history = None
        if self.keep_history:
            with h5py.File(row.output, "r") as f:
                signals = {name: f[name][()] for name in SIGNALS}
            history = loop.History(spec, **signals, info={"site": site} if site else {})
        evaluation = row.summary["evaluation"]
        return TrialResult(spec, evaluation["J"], evaluation["max_command_volts"], evaluation["realizable"],
                           row.summary["wall_s"], history, site)


def peaks(history: loop.History) -> dict[str, float]:
    """Peak |displacement| of the numerical substructure's logged DOFs (loop.OUTPUT_DOFS), m or rad, by SAP number
    (U27 = the first floor, U21 = the controlled rotation): the response `hybridsim campaign-report` plots."""
    shown = history.numerical.copy()
    shown[:, 0] /= 1000.0  # xNum is logged in mm
    return {f"U{dof + 1}": float(np.max(np.abs(shown[:, i]))) for i, dof in enumerate(loop.OUTPUT_DOFS)}
