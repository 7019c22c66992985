"""Testing across an emulated network: the `wan` figures of `hybridsim bench --json`, on their own.

    python benchmarks/wan.py [--round-trips-ms 0,5,20,60] [--duration 10] [--j-duration 8] [--json]

For each round trip (jitter a tenth of it): the maRTHS test at Dt = 19.53 ms with its site on its own clock
across the path, at the step the path meets (mean step over its target, % slowed steps, % held samples, and at
real time where the path cannot meet it), and the benchmark's J2 and J7 with its site across the same path
(J runs take about the round trip x 1024 wall seconds per simulated second: --j-duration 0 skips them); beside
OpenFresco's published figure (19.88 ms over 19.53 ms, 0.8 % slowed).  See hybridsim.coordinator.bench_wan.
"""

from __future__ import annotations

import argparse
import json
import os
import platform

from hybridsim.coordinator.bench_wan import ROUND_TRIPS_S, format_wan, wan_figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--round-trips-ms", default=",".join(f"{1e3 * r:g}" for r in ROUND_TRIPS_S),
                        help="the emulated round trips (ms, comma-separated; default %(default)s)")
    parser.add_argument("--duration", type=float, default=10.0, help="s of record of each timing run (default 10)")
    parser.add_argument("--j-duration", type=float, default=8.0,
                        help="s of record of each J run (default 8, past the peak at 7.0 s; 0: no J runs)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    round_trips = [1e-3 * float(r) for r in args.round_trips_ms.split(",")]
    figures = wan_figures(args.duration, args.j_duration, round_trips)
    figures["machine"] = {"platform": platform.platform(), "cpus": os.cpu_count(), "load_average": os.getloadavg()}
    print(json.dumps(figures) if args.json else format_wan(figures))


if __name__ == "__main__":
    main()
