"""The maRTHS run's 1024 Hz lateness with the integrity indicators off and on, side by side.

    python benchmarks/integrity_lateness.py [--seconds 10] [--pairs 2] [--json]
    python benchmarks/integrity_lateness.py --monitor [--seconds 2]

Runs the design card (examples/marths.toml: coordinator, frame, site and plant, the daemons on their step
links) in real time at dt = 1/1024 s for SECONDS of record, ``pairs`` times off then on (alternating, so a
change of the machine's load falls on both); "on" watches the site with every indicator (energy error, tracking,
delay; thresholds never crossed, action warn).  Prints each run's late steps, step p50 / p99 and largest
lateness, and the load average beside each.

``--monitor`` times the monitor's own call a step (:class:`IntegrityMonitor`'s ``__call__``: the indicators of
the 29-DOF structure and the watched 2-DOF site, written into the row and compared) over one run of the design card
in process, not in real time: its p50, mean and p99 (us), the last step's call repeated after the run (the
best of 5 x 2000 calls: its cost with warm caches) and the load.  Run it from two checkouts in turn to
compare two versions of the monitor side by side.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.integrity.monitor import IntegrityMonitor
from hybridsim.coordinator.integrity.rules import site_rules
from hybridsim.coordinator.problems.marths.hybrid import design_card
from hybridsim.coordinator.simulation import run_experiment

WATCH_ALL = {"energy_error": 1e9, "tracking": 1e9, "delay": 1e9, "action": "warn"}


def watched_run(seconds: float, indicators: bool, realtime: bool = True, daemons: bool = True) -> Any:
    """The design card's run over ``seconds`` of record, its site watched by every indicator or not."""
    with tempfile.TemporaryDirectory(prefix="hybridsim-bench-") as folder:
        experiment = design_card(Path(folder), seconds, daemons=daemons)
        if indicators:
            rules = site_rules(WATCH_ALL, [(m.name, m.kind) for m in experiment.modules])
            experiment = dataclasses.replace(experiment, integrity=rules)
        return run_experiment(experiment, realtime=realtime)


def monitor_cost(seconds: float) -> dict[str, Any]:
    """The monitor's call a step (us): each call of one in-process run timed by a wrapper around it."""
    calls: list[int] = []
    step = IntegrityMonitor.__call__
    last: list[Any] = []

    def timed(self: IntegrityMonitor, n: int) -> None:
        begin = time.perf_counter_ns()
        step(self, n)
        calls.append(time.perf_counter_ns() - begin)
        last[:] = [self, n]

    IntegrityMonitor.__call__ = timed  # type: ignore[method-assign]
    try:
        watched_run(seconds, True, realtime=False, daemons=False)
    finally:
        IntegrityMonitor.__call__ = step  # type: ignore[method-assign]
    us = np.array(calls[len(calls) // 10:]) / 1e3  # (the first tenth left out: the kernels' first calls)
    monitor, n = last
    hot = min(timeit.repeat(lambda: step(monitor, n), number=2000, repeat=5)) / 2000 * 1e6
    return {"steps": len(us), "monitor_p50_us": float(np.median(us)), "monitor_mean_us": float(us.mean()),
            "monitor_p99_us": float(np.percentile(us, 99)), "monitor_hot_us": hot, "load": os.getloadavg()[0]}


def lateness(seconds: float, indicators: bool) -> dict[str, Any]:
    """One real-time run's figures (us, %), the indicators ``on`` or off."""
    summary = watched_run(seconds, indicators).summary
    return {"indicators": "on" if indicators else "off", "late_steps_pct": summary["late_steps_pct"],
            "step_p50_us": summary["step_time_us"]["p50"], "step_p99_us": summary["step_time_us"]["p99"],
            "max_lateness_us": summary["max_lateness_us"], "watched": sorted(summary.get("integrity", {})
                                                                                .get("modules", {})),
            "load": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of record a run (default 10)")
    parser.add_argument("--pairs", type=int, default=2, help="off/on pairs (default 2)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--monitor", action="store_true", help="time the monitor's call a step instead")
    args = parser.parse_args()
    if args.monitor:
        cost = monitor_cost(args.seconds)
        print(json.dumps(cost) if args.json else
              f"monitor a step over {cost['steps']} steps: p50 {cost['monitor_p50_us']:.1f} us, mean "
              f"{cost['monitor_mean_us']:.1f} us, p99 {cost['monitor_p99_us']:.1f} us; the last step's call repeated "
              f"(caches warm) {cost['monitor_hot_us']:.1f} us (load {cost['load']:.1f})")
        return
    runs = [lateness(args.seconds, on) for _ in range(args.pairs) for on in (False, True)]
    if args.json:
        print(json.dumps(runs, indent=1))
        return
    for r in runs:
        print(f"indicators {r['indicators']:3}: {r['late_steps_pct']:.2f} % late, step p50 {r['step_p50_us']:.0f} us, "
              f"p99 {r['step_p99_us']:.0f} us, max lateness {r['max_lateness_us']:.0f} us (load {r['load']:.1f})")


if __name__ == "__main__":
    main()
