"""An incremental dynamic analysis of the yielding oscillator (examples/spring_yielding.toml) as a campaign.

    python benchmarks/campaign_ida.py OUT [--executor pool] [--workers 2] [--limit 0.065]

The three shipped records (El Centro, Kobe, Morgan Hill; 20 s of each) at six scales, each run an ordinary
run (OUT/<run id>.h5), then `hybridsim campaign-report`'s figures (OUT/ida.png, OUT/fragility.png ...).
Prints each record's IDA curve, the fragility of exceeding --limit (m) and the wall time with the load.
The oscillator: 1 Hz, yield at 20 mm, 5 % hardening; below 20 mm it is linear and its IDA curve a
straight line through the origin.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from hybridsim.coordinator.campaign.grid import expand
from hybridsim.coordinator.campaign.plots import draw
from hybridsim.coordinator.campaign.report import study
from hybridsim.coordinator.campaign.runner import run_campaign
from hybridsim.coordinator.campaign.table import read_table, write_table
from hybridsim.coordinator.problems.executors import Resources

EXPERIMENT = Path(__file__).resolve().parents[1] / "examples" / "spring_yielding.toml"
RECORDS = [f"hybridsim:marths/ground_motion_{name}.csv" for name in ("elcentro", "kobe", "morgan")]
SCALES = [0.05, 0.1, 0.25, 0.4, 0.6, 0.9]


def ida(out: Path, executor: str = "pool", workers: int = 2, limit: float = 0.065) -> dict:
    """Run the campaign into ``out``, write its table and figures, return the report with wall time and load."""
    runs = expand({"ground_motion.file": RECORDS, "ground_motion.scale": SCALES, "experiment.duration": [20.0]})
    load = os.getloadavg()[0]
    start = time.perf_counter()
    rows = run_campaign(EXPERIMENT, runs, out, executor, Resources(workers=workers))
    wall = time.perf_counter() - start
    result = study(read_table(write_table(rows, out / "campaign.h5")), limit=limit)
    figures = draw(result, out)
    return {**result, "wall_s": wall, "load": load, "figures": [str(f) for f in figures]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--executor", default="pool")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=float, default=0.065)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = ida(args.out, args.executor, args.workers, args.limit)
    if args.json:
        print(json.dumps(result))
        return
    for record, (scales, peaks) in result["ida"].items():
        print(f"{Path(record).stem:28s} " + "  ".join(f"{s:g}: {1000 * p:6.1f} mm" for s, p in zip(scales, peaks)))
    f = result["fragility"]
    print(f"P(peak > {f['limit']} m): theta = {f['theta']:.3g} (5-95 %: {f['theta_band'][0]:.3g} to "
          f"{f['theta_band'][1]:.3g}), beta = {f['beta']:.3f}")
    print(f"{result['runs']} runs in {result['wall_s']:.1f} s on {args.executor} x {args.workers} "
          f"(load {result['load']:.1f}); figures {', '.join(result['figures'])}")


if __name__ == "__main__":
    main()
