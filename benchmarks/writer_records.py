"""Where the number of a module's streamed records breaks the results writer: a real write of 1,000 ... 8,000
records, each read back.

    python benchmarks/writer_records.py [--records 1000 2000 4000 8000] [--json]

The measurement is :func:`hybridsim.coordinator.recorder.record_cost.write_figures` (its docstring says how); the
cap it sets is ``MAX_RECORDS`` in :mod:`hybridsim.coordinator.config_text`.
"""

from __future__ import annotations

import argparse
import json

from hybridsim.coordinator.recorder.record_cost import write_figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for records in args.records:
        figures = write_figures(records)
        if args.json:
            print(json.dumps(figures), flush=True)
        elif "seconds" in figures:
            print(f"{records:>6} records: written in {figures['seconds']:.1f} s, read back whole: "
                  f"{figures['read_back_whole']}, file {figures['file_mib']:.0f} MiB, failure {figures['failure']} "
                  f"(load {figures['load_average']:.2f})", flush=True)
        else:
            print(f"{records:>6} records: {figures['failure']} (load {figures['load_average']:.2f})", flush=True)


if __name__ == "__main__":
    main()
