"""The IDA of the yielding three-storey frame (examples/ida_frame/ida.toml: 5 records x 6 scales, 30 runs).

    python benchmarks/campaign_ida_frame.py OUT [--executor pool] [--workers 2] [--limit 0.02] [--json]

Runs `hybridsim campaign` and then `hybridsim campaign-report` with Sa(T1, 5 %) as the intensity and the
peak interstorey drift ratio as the response (storeys of 3.5 m), as a lab would from the command line; prints
each record's IDA curve, the fragility of exceeding --limit and the campaign's wall time with the load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

CAMPAIGN = Path(__file__).resolve().parents[1] / "examples" / "ida_frame" / "ida.toml"
FLOORS, STOREY = ("floor1.x", "floor2.x", "floor3.x"), 3.5


def ida(out: Path, executor: str = "pool", workers: int = 2, limit: float = 0.02) -> dict:
    """The campaign into ``out`` and its report, with the campaign's wall time (s) and the load before it."""
    hybridsim = [sys.executable, "-m", "hybridsim"]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    subprocess.run([*hybridsim, "campaign", str(CAMPAIGN), "--executor", executor, "--workers", str(workers),
                    "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    report = subprocess.run([*hybridsim, "campaign-report", str(out / "campaign.h5"), "--sa-period", "T1", "--drift",
                             *FLOORS, "--storey-height", str(STOREY), "--limit", str(limit), "--json"],
                            check=True, capture_output=True, text=True)
    return {**json.loads(report.stdout), "wall_s": wall, "load": load, "executor": executor, "workers": workers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--executor", default="pool")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=float, default=0.02)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = ida(args.out, args.executor, args.workers, args.limit)
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['intensity']} : {result['response']} (%)")
    for record, (sa, drift) in result["ida"].items():
        print(f"{Path(record).stem:28s} " + "  ".join(f"{s:.3f}: {100 * d:.2f}" for s, d in zip(sa, drift)))
    f = result["fragility"]
    print(f"P(drift > {f['limit']:g}): theta = {f['theta']:.3g} g (5-95 %: {f['theta_band'][0]:.3g} to "
          f"{f['theta_band'][1]:.3g}), beta = {f['beta']:.3f}")
    print(f"{result['runs']} runs in {result['wall_s']:.0f} s on {args.executor} x {args.workers} "
          f"(load {result['load']:.1f}); figures {', '.join(result['figures'])}")


if __name__ == "__main__":
    main()
