"""`hybridsim campaign CAMPAIGN.toml`: one experiment (or a problem's runs) run many times, each with its own file.

docs/campaigns.md: ``[campaign] experiment = FILE`` makes every run an ordinary run of it; ``problem = "marths"``
(the benchmark's trials) or ``"marths-calibration"`` (its RLS-AC fits) varies the problem's settings instead.

Every run's results file is OUT/<run id>.h5; a campaign started again finds the complete runs and resumes
the interrupted ones.  The campaign table (OUT/campaign.h5, one row per run) is written at the end.
Exit 0: every run completed; 1: some did not; 2: bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.problems.executors import EXECUTORS


def register(sub: Any) -> None:
    parser = sub.add_parser("campaign", help="run an experiment (or the maRTHS trials) many times: a grid, records, seeded draws",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("campaign", type=Path, help="the campaign file (TOML, a [campaign] table)")
    parser.add_argument("--executor", choices=tuple(EXECUTORS), default="serial",
                        help="where the runs run (default: %(default)s)")
    parser.add_argument("--scheduler", help="tcp://HOST:PORT of a Dask scheduler (--executor dask; default: a local "
                        "cluster of --workers processes, its dashboard address printed)")
    parser.add_argument("--workers", type=int, default=2, help="processes of --executor pool or of the local Dask "
                        "cluster (default: %(default)s)")
    parser.add_argument("--out", type=Path, help="folder of the runs' files and the table (default: the campaign "
                        "file's name beside it)")
    parser.add_argument("--json", action="store_true", help="print the runs as one JSON object")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from hybridsim.coordinator.campaign.config import load
    from hybridsim.coordinator.campaign.runner import run_campaign
    from hybridsim.coordinator.campaign.table import write_table
    from hybridsim.coordinator.problems.executors import Resources

    if args.workers < 1:
        raise UsageError(f"--workers: give 1 or more, not {args.workers}")
    if args.scheduler and args.executor != "dask":
        raise UsageError("--scheduler needs --executor dask")
    campaign = load(args.campaign)
    out = args.out or args.campaign.with_suffix("")
    slots = None if args.scheduler else 1 if args.executor == "serial" else args.workers
    rows = run_campaign(campaign.subject, campaign.runs, out, args.executor,
                        Resources(workers=args.workers, scheduler=args.scheduler), Counter(len(campaign.runs), slots))
    table = write_table(rows, Path(out) / "campaign.h5")
    failed = [row for row in rows if row.status != "completed"]
    if args.json:
        json.dump({"table": str(table), "runs": [_entry(row) for row in rows]}, sys.stdout)
        print()
    else:
        hows = ", ".join(f"{sum(row.how == how for row in rows)} {how}" for how in ("made", "resumed", "found"))
        print(f"{len(rows) - len(failed)} of {len(rows)} runs completed ({hows}); table: {table}")
    return 1 if failed else 0


def _entry(row: Any) -> dict[str, Any]:
    return {"run_id": row.run.run_id, "values": dict(row.run.values), "drawn": dict(row.run.drawn),
            "seed": row.run.seed, "status": row.status, "how": row.how, "wall_s": row.wall_s, "output": row.output}


class Counter:
    """The progress line on stderr after each run: done of all, running (the runs in flight on ``slots`` workers;
    on Dask, the cluster's worker threads at that moment, a remote scheduler's too), failed, and the ETA from
    the wall time per run so far."""

    def __init__(self, total: int, slots: int | None) -> None:
        self.total, self.slots, self.done, self.failed, self.start = total, slots, 0, 0, time.monotonic()

    def __call__(self, row: Any) -> None:
        self.done += 1
        self.failed += row.status != "completed"
        left = self.total - self.done
        running = f"{min(self.slots, left)} running, " if self.slots is not None else ""
        eta = (time.monotonic() - self.start) / self.done * left
        print(f"campaign: {self.done}/{self.total} done, {running}{self.failed} failed, ETA {eta:.0f} s",
              file=sys.stderr)
