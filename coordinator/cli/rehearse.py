"""`hybridsim rehearse EXPERIMENT.toml`: sign a test off before the specimen moves (docs/rehearse.md).

The experiment's trials under its experimental site's declared uncertainty (the nominal plant, then --trials
plants drawn from it), each set against the site's limits; writes rehearsal.json and rehearsal.html in --out and
prints the verdict: GO, or NO-GO naming the limit and the trial.  Exit 0: GO; 1: NO-GO; 2: bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.problems.executors import EXECUTORS


def register(sub: Any) -> None:
    parser = sub.add_parser("rehearse", help="rehearse an experiment under its sites' uncertainty: GO or NO-GO",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiment", type=Path, help="the experiment file (TOML)")
    parser.add_argument("--trials", type=int, help="plants drawn after the nominal one (default: rehearse.trials; "
                        "a virtual-lab site draws them from [rehearse.random], without which trial 0 alone runs)")
    parser.add_argument("--executor", choices=tuple(EXECUTORS), default="serial",
                        help="where the trials run (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=2, help="processes of --executor pool (default: %(default)s)")
    parser.add_argument("--scheduler", help="tcp://HOST:PORT of a Dask scheduler (--executor dask; default: a "
                        "local cluster)")
    parser.add_argument("--out", type=Path, default=Path("rehearsal"), help="folder of the sheet (default: "
                        "%(default)s)")
    parser.add_argument("--json", action="store_true", help="print the sheet as one JSON object")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from hybridsim.coordinator.experiment import ExperimentError
    from hybridsim.coordinator.rehearse.rehearsal import rehearse
    from hybridsim.coordinator.rehearse.sheet import margin_lines, write

    if args.trials is not None and args.trials < 1:
        raise UsageError(f"--trials: give 1 or more plants, not {args.trials}")
    if args.workers < 1:
        raise UsageError(f"--workers: give 1 or more, not {args.workers}")
    try:
        result = rehearse(args.experiment, args.trials, args.executor, args.workers, args.scheduler, args.out)
    except ExperimentError as exc:
        raise UsageError(f"{exc.file}: {exc}" if exc.file else str(exc)) from None
    try:
        json_path, html_path = write(result, args.out)
    except OSError as exc:
        raise UsageError(f"--out: cannot write the sheet in {args.out}: {exc.strerror}") from None
    if args.json:
        json.dump(result, sys.stdout)
        print()
    else:
        print(f"{result['verdict']}: {result['why']}")
        for line in margin_lines(result):
            print(line)
        print(f"sheet: {html_path} and {json_path}")
    return 0 if result["verdict"] == "GO" else 1
