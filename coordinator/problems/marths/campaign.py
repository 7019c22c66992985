"""Benchmark campaigns: the nominal run and N uncertain plants, serially, on a process pool or on Dask.

Each run is independent (its own plant and noise seeds, §15), so the runs of
a campaign go to workers as they are; the result keeps the benchmark's
order (run 1 = nominal, runs 2.. = uncertain).  The summary has the shape of
``hybridsim benchmark marths --json``:
``{"nominal": J, "trials": [J, ...], "mean": J, "max_command_volts": [v1, v2],
"realizable": bool, "wall_s": s}``, J unrounded, ``mean`` over the uncertain
runs (the nominal run when there are none, §14.3).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hybridsim.coordinator.problems.executors import Resources, execute
from hybridsim.coordinator.problems.marths import loop, parts
from hybridsim.coordinator.problems.marths.evaluation import criteria, mean_criteria, spread_criteria

TOPOLOGIES = ("inprocess", "daemons", "own-clock")


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


def run_campaign(specs: Sequence[loop.RunSpec], workers: int = 1, topology: str = "inprocess",
                 scheduler: str | None = None, keep_history: bool = True,
                 progress: Callable[[TrialResult], None] | None = None) -> list[TrialResult]:
    """All runs of ``specs``, in their order: serially (``workers`` = 1), on a process pool, or on Dask."""

    def prepare() -> None:
        for spec in {(s.record, s.scale, s.duration, s.partition): s for s in specs}.values():
            loop.prepare(spec)

    return execute(run_one, [(spec, topology, keep_history) for spec in specs], Resources(workers, scheduler),
                   progress, before_fork=prepare)


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
