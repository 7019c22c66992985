"""`hybridsim verify RESULTS.h5`: what of a results file is intact, in one line within a bounded time.

Every dataset's checksums, both checkpoints' SHA-256; the rows intact and the checkpoints a resume can start from
(see hybridsim.coordinator.recorder.verify).  Exit 0: intact; 1: damaged (the line names the first damaged place);
2: not found or not readable as a results file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    parser = sub.add_parser("verify", help="check a results file's checksums and say what is intact",
                            description=__doc__)
    parser.add_argument("results", type=Path, help="results file (HDF5) of `hybridsim run`")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from hybridsim.coordinator.recorder.verify import verify_within

    verdict = verify_within(args.results)  # not found, unreadable: a UsageError, exit 2
    print(verdict.line())
    return 0 if verdict.intact else 1
