"""The results writer's cost per step with and without the per-chunk checksums, side by side.

    python benchmarks/writer_checksums.py [--rows 65536] [--repeats 3] [--json]

The measurement is :func:`hybridsim.coordinator.recorder.cost.writer_checksums` (also `hybridsim bench`'s
``writer_checksums``): the writer process's CPU time per row of the maRTHS frame's layout, and the file's size,
without and with checksums, and with checksums and the [integrity] indicators of its site.
"""

from __future__ import annotations

import argparse
import json

from hybridsim.coordinator.recorder.cost import writer_checksums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=65536)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = writer_checksums(args.rows, args.repeats)
    if args.json:
        print(json.dumps(figures))
        return
    for name, said in (("without", "without checksums"), ("with", "with checksums"),
                       ("with_indicators", "with checksums and the indicators")):
        f = figures[name]
        print(f"{said}: writer {f['writer_cpu_us_per_row']:.2f} us of CPU per row (runs "
              f"{f['runs_us_per_row']}), {f['bytes_per_row']:.0f} bytes per row")
    print(f"load average {figures['load_average'][0]:.2f}")


if __name__ == "__main__":
    main()
