"""`hybridsim report RESULTS.h5`: a self-contained HTML report of a run (plots, J table, configuration, timing).

A module record that fails its checksum is left out, named on stderr and at the top of the report; the exit
status is then 1 (the report is written but not whole: a script must not take it for a full one).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from hybridsim.coordinator.monitor.report import write_report


def register(sub: Any) -> None:
    parser = sub.add_parser("report", help="write an HTML report of a results file", description=__doc__)
    parser.add_argument("results", type=Path, help="results file (HDF5) of `hybridsim run`")
    parser.add_argument("--out", type=Path, help="the report (default: the results file with .html)")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    skipped: list[str] = []
    print(f"report: {write_report(args.results, args.out, skipped=skipped)}")
    print(*skipped, sep="\n", file=sys.stderr, end="\n" if skipped else "")
    return 1 if skipped else 0
