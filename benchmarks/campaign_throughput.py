"""Campaign throughput: runs per minute with 1 and with 2 workers, side by side in one process.

    python benchmarks/campaign_throughput.py [--runs 8] [--executor dask|pool] [--json]

The runs: examples/spring_yielding.toml (4000 steps of 5 ms, a local spring daemon and a results writer
per run) at --runs scales, made afresh into a temporary folder with 1 worker, then with 2; the wall time
includes starting the workers (a LocalCluster for dask).  Prints runs/min, the ratio and the load before each.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from hybridsim.coordinator.campaign.grid import expand
from hybridsim.coordinator.campaign.runner import run_campaign
from hybridsim.coordinator.problems.executors import Resources

EXPERIMENT = Path(__file__).resolve().parents[1] / "examples" / "spring_yielding.toml"


def measure(runs: int, executor: str, workers: int) -> dict[str, float]:
    """``runs`` runs made afresh on ``workers`` workers: wall time (s), runs/min, load before."""
    grid = expand({"ground_motion.scale": list(np.linspace(0.2, 1.0, runs)), "experiment.duration": [20.0]})
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        rows = run_campaign(EXPERIMENT, grid, out, executor, Resources(workers=workers))
        wall = time.perf_counter() - start
    assert all(row.status == "completed" and row.how == "made" for row in rows)
    return {"workers": workers, "wall_s": wall, "runs_per_min": 60 * runs / wall, "load": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--executor", choices=("dask", "pool"), default="dask")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    one, two = (measure(args.runs, args.executor, workers) for workers in (1, 2))
    ratio = two["runs_per_min"] / one["runs_per_min"]
    if args.json:
        print(json.dumps({"one": one, "two": two, "ratio": ratio, "cpus": os.cpu_count()}))
        return
    for m in (one, two):
        print(f"{args.executor} x {m['workers']}: {args.runs} runs in {m['wall_s']:.1f} s, "
              f"{m['runs_per_min']:.1f} runs/min (load {m['load']:.1f})")
    print(f"ratio 2 workers / 1: {ratio:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
