"""`hybridsim export RESULTS.h5 --to mat|csv [--out DIR]`: a results file for MATLAB or spreadsheets.

Every group with its units (the response, each module's measurements and records), the status, why a
stopped run stopped, the summary and the J values where the run has them (see hybridsim.coordinator.export).
A module record that fails its checksum is left out and named on stderr and in the files (``skipped``); the exit
status is then 1 (the files are written but not whole: a script must not take them for a full export).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    parser = sub.add_parser("export", help="write a results file as .mat or CSV files (with units)", description=__doc__)
    parser.add_argument("results", type=Path, help="results file (HDF5) of `hybridsim run`")
    parser.add_argument("--to", choices=("mat", "csv"), required=True, help="MATLAB .mat or CSV files")
    parser.add_argument("--out", type=Path, help="folder for the files (default: the results file's folder)")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from hybridsim.coordinator.export import export_results

    skipped: list[str] = []
    for path in export_results(args.results, args.to, args.out, skipped):
        print(f"export: {path}")
    print(*skipped, sep="\n", file=sys.stderr, end="\n" if skipped else "")
    return 1 if skipped else 0
