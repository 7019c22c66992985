"""`hybridsim campaign-report TABLE`: the plots a campaign's table shows (docs/campaigns.md).

IDA curves (intensity against peak response, one per record), the lognormal fragility curve with its
bootstrap band (with --limit), the J distributions and the tornado of the response's sensitivity to every
numeric varied key; PNGs and campaign_report.json in --out (default: the table's folder).  Exit 2: bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from hybridsim.coordinator.errors import UsageError


def register(sub: Any) -> None:
    parser = sub.add_parser("campaign-report", help="IDA, fragility, J and tornado plots of a campaign table",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("table", type=Path, help="the campaign table (OUT/campaign.h5 of `hybridsim campaign`)")
    parser.add_argument("--intensity", help="the varied key of the intensity (default: ground_motion.scale)")
    parser.add_argument("--record", help="the varied key of the record (default: ground_motion.file if varied)")
    parser.add_argument("--response", help="the response column (default: each run's largest peak displacement)")
    parser.add_argument("--limit", type=float, help="the response's limit: the fragility of exceeding it")
    parser.add_argument("--sa-period", metavar="T", help="the intensity: Sa(T, 5 %%) in g of the ground motion each "
                        "run applied, T in s or T1 (each run's first natural period)")
    parser.add_argument("--drift", nargs="+", metavar="DOF", help="the response: the peak interstorey drift ratio "
                        "of these floors' DOFs, bottom up (with --storey-height)")
    parser.add_argument("--storey-height", nargs="+", type=float, metavar="H", default=(),
                        help="the storeys' heights (m): one for all, or one per --drift DOF")
    parser.add_argument("--out", type=Path, help="folder of the plots (default: the table's)")
    parser.add_argument("--json", action="store_true", help="print the report's figures as one JSON object")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from hybridsim.coordinator.campaign.plots import draw
    from hybridsim.coordinator.campaign.report import study, write_json
    from hybridsim.coordinator.campaign.table import read_table

    try:
        table = read_table(args.table)
    except (OSError, KeyError) as exc:
        raise UsageError(f"{args.table}: not a campaign table ({exc}); give OUT/campaign.h5 of hybridsim campaign")
    if args.limit is not None and not args.limit > 0:
        raise UsageError(f"--limit: give a positive value of the response, not {args.limit}")
    measures = _measures(args)
    result = study(table, args.intensity, args.record, args.response, args.limit, measures, args.table.parent)
    out = args.out or args.table.parent
    out.mkdir(parents=True, exist_ok=True)
    figures = draw(result, out)
    path = write_json(result, out)
    if args.json:
        json.dump({**result, "figures": [str(f) for f in figures]}, sys.stdout)
        print()
    else:
        f = result["fragility"]
        if f and f["theta"] != f["theta"]:
            print(f"fragility of {result['response']} > {f['limit']:g}: no fit: the runs go from none or some to all "
                  "exceeding (or none to some) within one step of intensity; run intensities between them")
        elif f:
            print(f"fragility of {result['response']} > {f['limit']:g}: theta = {f['theta']:.4g} "
                  f"(5-95 %: {f['theta_band'][0]:.4g} to {f['theta_band'][1]:.4g}), beta = {f['beta']:.3f}")
        print(f"{result['runs']} runs; figures: {', '.join(str(p) for p in figures) or 'none'}; {path}")
    return 0


def _measures(args: argparse.Namespace) -> Any:
    """What --sa-period, --drift and --storey-height ask to measure in the runs' files (None: nothing)."""
    from hybridsim.coordinator.campaign.measures import FIRST_PERIOD, Measures

    if args.sa_period is None and not args.drift:
        return None
    if args.drift and not args.storey_height:
        raise UsageError("--drift needs --storey-height H (m): one for all storeys or one per floor")
    period = args.sa_period
    if period is not None and period != FIRST_PERIOD:
        try:
            period = float(period)
        except ValueError:
            raise UsageError(f"--sa-period: give a period in s or {FIRST_PERIOD}, not {period!r}") from None
    return Measures(period, tuple(args.drift or ()), tuple(args.storey_height))
