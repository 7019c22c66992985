"""Ten uncertain maRTHS trials on a process pool of two workers vs one after another.

    python benchmarks/marths_trials_pool.py [--trials 10] [--workers 2] [--json]

The uncertain trials of `hybridsim benchmark marths --plant uncertain --trials 10`
(El Centro x 0.4, RLS-AC, noise on; seeds 1001.. and 2001..), without the
nominal run, as a campaign of the campaign runner (a spawned pool: each worker
imports hybridsim and computes the record's reference run itself).  Runs them serially, then on the pool,
checks that both give the same criteria, and prints the ratio of wall times (the issue's target: <= 0.6
on two workers).  Prints the load average: other work on the machine moves it.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from hybridsim.coordinator.campaign.runner import run_campaign
from hybridsim.coordinator.problems.executors import Resources
from hybridsim.coordinator.problems.marths import campaign, loop


def _cold() -> None:
    """Forget the shared precomputations, so that each measurement pays for them once."""
    for cached in (loop.ground_acceleration, loop.reference_response, loop.numerical_map):
        cached.cache_clear()


def measure(trials: int, workers: int) -> dict[str, float]:
    runs = campaign.runs(loop.RunSpec(plant="uncertain", compensator="rls"), trials)[1:]
    subject = campaign.Trials(keep_history=False)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        _cold()
        start = time.perf_counter()
        serial = run_campaign(subject, runs, f"{folder}/serial")
        serial_s = time.perf_counter() - start
        _cold()
        start = time.perf_counter()
        pooled = run_campaign(subject, runs, f"{folder}/pool", "pool", Resources(workers))
        pooled_s = time.perf_counter() - start
    if [r.summary["evaluation"] for r in serial] != [r.summary["evaluation"] for r in pooled]:
        raise SystemExit("the pool gave other criteria than the serial runs")
    return {"runs": len(runs), "workers": workers, "serial_s": serial_s, "pool_s": pooled_s,
            "ratio": pooled_s / serial_s, "load_average_before": load_before, "load_average_after": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    r = measure(args.trials, args.workers)
    if args.json:
        print(json.dumps(r))
        return
    print(f"{r['runs']} uncertain trials, {os.cpu_count()} CPUs, load average "
          f"{r['load_average_before']:.1f} before / {r['load_average_after']:.1f} after")
    print(f"serial {r['serial_s']:.1f} s, {r['workers']} workers {r['pool_s']:.1f} s: ratio {r['ratio']:.2f} "
          f"(target <= 0.6); same criteria: yes")


if __name__ == "__main__":
    main()
