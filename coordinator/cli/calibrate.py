"""`hybridsim calibrate marths`: the offline calibration of the RLS-AC initial parameters (SPEC §16).

99 open-loop runs (3 records x 3 scales x (nominal + 10 uncertain plants)),
a batch least-squares fit per run and actuator, the plain mean of theta0 and
of P0, compared with the parameters shipped with the benchmark.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from hybridsim.coordinator.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("calibrate", help="offline calibration of a benchmark's compensator",
                                   description="Calibrate a reference benchmark's compensator offline.")
    targets = parser.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    p = targets.add_parser("marths", help="RLS-AC initial parameters theta0, P0 of the maRTHS benchmark",
                           description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trials", type=int, default=10, help="uncertain plants per record and scale (default: %(default)s)")
    p.add_argument("--workers", type=int, default=1, help="runs in parallel on a process pool (default: %(default)s)")
    p.add_argument("--out", type=Path, help="write the parameters as JSON (the layout of rls_initial_parameters.json)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.set_defaults(func=_marths)


def _marths(args: argparse.Namespace) -> int:
    from hybridsim.coordinator.problems.marths.calibration import calibrate, shipped

    if args.trials < 0:
        raise UsageError(f"--trials: give 0 or more uncertain plants, not {args.trials}")
    if args.workers < 1:
        raise UsageError(f"--workers: give 1 or more, not {args.workers}")
    start = time.perf_counter()
    result = calibrate(args.trials, args.workers)
    wall = time.perf_counter() - start
    theta_shipped, p_shipped = shipped()
    theta_rel = (result.theta0 - theta_shipped) / np.abs(theta_shipped)
    diag, diag_shipped = (np.diagonal(p, axis1=1, axis2=2) for p in (result.p0, p_shipped))
    p_rel = (diag - diag_shipped) / diag_shipped
    sem = result.standard_error()
    sem_rel = None if sem is None else sem / np.abs(theta_shipped)
    report = {"parameters": result.parameters(), "runs": len(result.runs),
              "theta0_relative_difference": theta_rel.tolist(), "P0_diagonal_relative_difference": p_rel.tolist(),
              "theta0_standard_error_relative": None if sem_rel is None else sem_rel.tolist(),
              "wall_s": wall}
    if args.out is not None:
        try:
            args.out.write_text(json.dumps(result.parameters(), indent=1) + "\n")
        except OSError as exc:
            raise UsageError(f"--out: cannot write {args.out}: {exc.strerror}") from None
    if args.json:
        json.dump(report, sys.stdout)
        print()
        return 0
    print(f"RLS-AC initial parameters from {len(result.runs)} open-loop runs ({wall:.1f} s), vs the shipped ones")
    print(f"{'':10} {'tap':>3} {'calibrated':>11} {'shipped':>11} {'diff %':>7} {'sem %':>6}")
    for i in range(2):
        for j in range(4):
            sem_text = "" if sem_rel is None else f"{100 * sem_rel[i, j]:6.2f}"
            print(f"theta0_{i + 1:<3} {j:>3} {result.theta0[i, j]:11.4f} {theta_shipped[i, j]:11.4f} "
                  f"{100 * theta_rel[i, j]:7.2f} {sem_text}")
    for i in range(2):
        for j in range(4):
            print(f"P0_{i + 1}[{j},{j}] {'':3} {diag[i, j]:11.1f} {diag_shipped[i, j]:11.1f} {100 * p_rel[i, j]:7.2f}")
    return 0
