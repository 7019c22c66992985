"""The IDA of the yielding three-storey frame (examples/ida_frame/ida.toml: 5 records x 6 scales, 30 runs).

    python benchmarks/campaign_ida_frame.py OUT [--workers 2] [--json]

Runs `hybridsim campaign` and then `hybridsim campaign-report` with Sa(T1, 5 %) as the intensity and the
peak interstorey drift ratio as the response (storeys of 3.5 m), as a lab would from the command line; prints
each record's IDA curve (a Markdown table), the fragility of a 2 % drift and the wall time with the load.
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
FLOORS, STOREY, LIMIT = ("floor1.x", "floor2.x", "floor3.x"), 3.5, 0.02
"""the floors' DOFs, their storeys' height (m), the drift limit of the fragility"""


def ida(out: Path, workers: int = 2) -> dict:
    """The campaign into ``out`` on a pool of ``workers`` and its report, with the campaign's wall time (s) and the load before it."""
    hybridsim = [sys.executable, "-m", "hybridsim"]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    subprocess.run([*hybridsim, "campaign", str(CAMPAIGN), "--executor", "pool", "--workers", str(workers),
                    "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    report = subprocess.run([*hybridsim, "campaign-report", str(out / "campaign.h5"), "--sa-period", "T1", "--drift",
                             *FLOORS, "--storey-height", str(STOREY), "--limit", str(LIMIT), "--json"],
                            check=True, capture_output=True, text=True)
    return {**json.loads(report.stdout), "wall_s": wall, "load": load, "workers": workers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="the runs' folder (a campaign started again there finds its runs)")
    parser.add_argument("--workers", type=int, default=2, help="processes of the pool (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of the table")
    args = parser.parse_args()
    result = ida(args.out, args.workers)
    if args.json:
        print(json.dumps(result))
        return
    print(f"| record | {result['intensity']} : {result['response']} (%) |\n|---|---|")
    for record, (sa, drift) in result["ida"].items():
        cells = ", ".join(f"{s:.3f}: {'stopped' if d is None else f'{100 * d:.2f}'}" for s, d in zip(sa, drift))
        print(f"| {Path(record).stem} | {cells} |")
    f = result["fragility"]
    print(f"\nfragility of a {100 * f['limit']:g} % drift: theta = {f['theta']:.3f} g ({f['theta_band'][0]:.3f} to "
          f"{f['theta_band'][1]:.3f}), beta = {f['beta']:.3f}; {result['runs']} runs in {result['wall_s']:.0f} s, "
          f"{args.workers} workers, load {result['load']:.1f}")


if __name__ == "__main__":
    main()
