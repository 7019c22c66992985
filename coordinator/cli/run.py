"""`hybridsim run EXPERIMENT.toml`: run an experiment, stream results to HDF5, print a summary."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from coordinator.experiment import load_experiment
from coordinator.simulation import ProgressBar, run_experiment


def register(sub: Any) -> None:
    parser = sub.add_parser("run", help="run an experiment file", description=__doc__)
    parser.add_argument("experiment", type=Path, help="experiment file (TOML)")
    parser.add_argument("--output", type=Path, help="results file (HDF5); default: the experiment's output.file")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    experiment = load_experiment(args.experiment)
    progress = None if (args.quiet or args.json) else ProgressBar()
    result = run_experiment(experiment, output=args.output, progress=progress)
    summary = dict(result.summary, output=str(result.output))
    if args.json:
        print(json.dumps(summary))
    else:
        print(format_summary(summary))
    return 0


def format_summary(summary: dict[str, Any]) -> str:
    """The summary as a short human-readable table."""
    lines = [
        f"experiment {summary['experiment']}: {summary['steps']} steps of {summary['dt_s']:g} s "
        f"({summary['simulated_s']:g} s simulated) with {summary['integrator']}",
        f"wall time {summary['wall_s']:.3f} s, {summary['steps_per_second']:,.0f} steps/s; "
        f"pre-test asymmetry {summary['pretest_asymmetry']:.2e}",
        f"{'DOF':<16}{'peak |d|':>14}{'at t (s)':>12}",
    ]
    for dof, peak in summary["peak_displacement"].items():
        lines.append(f"{dof:<16}{peak:>14.6e}{summary['peak_time_s'][dof]:>12.4f}")
    lines.append(f"results: {summary['output']}")
    return "\n".join(lines)
