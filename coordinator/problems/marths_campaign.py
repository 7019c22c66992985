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

import concurrent.futures
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hybridsim.coordinator.problems import marths, marths_parts
from hybridsim.coordinator.problems.evaluation import criteria, mean_criteria, spread_criteria

TOPOLOGIES = ("inprocess", "daemons")


@dataclass
class RunResult:
    spec: marths.RunSpec
    criteria: dict[str, list[float]]
    max_command_volts: list[float]
    realizable: bool
    """the benchmark's per-run rule: flagged only if both actuators exceed the saturation"""
    wall_s: float
    history: marths.History | None = None


def run_one(spec: marths.RunSpec, topology: str = "inprocess", keep_history: bool = True) -> RunResult:
    """One run and its criteria (a top-level function, so process pools and Dask can ship it)."""
    start = time.perf_counter()
    if topology == "inprocess":
        hist = marths.run(spec)
    elif topology == "daemons":
        from hybridsim.coordinator.problems.marths_daemons import run_on_daemons

        hist = run_on_daemons(spec)
    else:
        raise ValueError(f"topology must be one of {', '.join(TOPOLOGIES)}, not {topology!r}")
    volts = hist.max_command_volts
    return RunResult(spec, criteria(hist, marths_parts.SAMPLE_RATE), volts, marths_parts.daq().realizable(volts),
                     time.perf_counter() - start, hist if keep_history else None)


def run_campaign(specs: Sequence[marths.RunSpec], workers: int = 1, topology: str = "inprocess",
                 scheduler: str | None = None, keep_history: bool = True,
                 progress: Callable[[RunResult], None] | None = None) -> list[RunResult]:
    """All runs of ``specs``, in their order: serially (``workers`` = 1), on a process pool, or on Dask."""
    if scheduler is not None:
        from hybridsim.coordinator.problems.marths_dask import run_on_dask

        results = run_on_dask(specs, scheduler, topology, keep_history)
        for result in results if progress else ():
            progress(result)
        return results
    if workers <= 1 or len(specs) == 1:
        results = []
        for spec in specs:
            results.append(run_one(spec, topology, keep_history))
            if progress:
                progress(results[-1])
        return results
    for spec in {(s.record, s.scale, s.duration, s.partition): s for s in specs}.values():
        marths.prepare(spec)
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(workers, len(specs))) as pool:
        futures = [pool.submit(run_one, spec, topology, keep_history) for spec in specs]
        for future in concurrent.futures.as_completed(futures):
            if progress:
                progress(future.result())
        return [f.result() for f in futures]


def summary(results: Sequence[RunResult], wall_s: float) -> dict[str, Any]:
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
    }


def spread(results: Sequence[RunResult]) -> dict[str, list[float]] | None:
    """Standard deviation of each index over the uncertain runs (None without any)."""
    trials = [r.criteria for r in results[1:]]
    return spread_criteria(trials) if trials else None
