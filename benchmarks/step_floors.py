"""Each cross-process step beside its floor, measured in one run (issue 38 item 3).

    python benchmarks/step_floors.py [--calls 2000] [--steps 2000] [--seconds 10] [--json]

The measurement is :func:`hybridsim.coordinator.bench_floor.floor_figures` (also `hybridsim bench`'s
``step_floors``): the OpenSees site's step in process and as a daemon, and the openseespy genericClient's AlphaOS
step with local elements and at a linear and an experimental site, the maRTHS loop's tick in process and on
daemons, each with its floor and the load average.
"""

from __future__ import annotations

import argparse
import json

from hybridsim.coordinator.bench_floor import floor_figures, format_floors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="timed coordinator steps at the OpenSees site")
    parser.add_argument("--steps", type=int, default=2000, help="AlphaOS steps of the openseespy peer")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of the maRTHS record looped")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = floor_figures(args.calls, args.steps, args.seconds)
    print(json.dumps(figures) if args.json else "\n".join(format_floors(figures)))


if __name__ == "__main__":
    main()
