"""`hybridsim benchmark marths`: the maRTHS benchmark loop, its J1..J10 table, time histories and plots.

Like the benchmark, ``--plant uncertain --trials N`` runs the nominal plant
first, then N uncertain plants (seeds of SPEC §15), and reports the mean over
the uncertain ones.  ``--json`` prints one JSON object with the criteria
unrounded; the table rounds to 0.1 as the benchmark does.  An experiment's
``[evaluation] problem = "marths"`` computes the same criteria of a
coordinator-driven run (``hybrid.evaluate``).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.problems.base import Problem, Progress, write_json


@dataclass
class Campaign:
    """The runs of one ``hybridsim benchmark marths``, their summary and the table's title."""

    trials: list[Any]
    """campaign.TrialResult of the nominal run, then of each uncertain plant"""
    summary: dict[str, Any]
    title: str


class MarthsBenchmark(Problem[Campaign]):
    command = "benchmark"
    name = "marths"
    help = "multi-axial RTHS benchmark (Condori Uribe et al. 2023) with RLS-AC"
    description = __doc__
    outputs = "histories.h5, histories.mat, summary.json, table.txt (and the plots with --plots)"
    plots_by_default = False

    def arguments(self, p: argparse.ArgumentParser) -> None:
        from hybridsim.coordinator.problems.marths import data, parts
        from hybridsim.coordinator.problems.marths.campaign import TOPOLOGIES
        from hybridsim.coordinator.problems.marths.structure import PARTITIONS

        p.add_argument("--record", choices=data.RECORDS, default="elcentro", help="ground motion (default: %(default)s)")
        p.add_argument("--scale", type=float, default=0.4, help="factor on the record (default: %(default)s)")
        p.add_argument("--compensator", choices=parts.COMPENSATORS, default="rls",
                       help="delay compensator of each actuator: RLS-AC as published, none, inverse compensation "
                            "of the delay J1 measures without compensation, or the best case of the NARX study (4th "
                            "order, L = 1024, ridge 1e-7, -fg); default: %(default)s")
        p.add_argument("--plant", choices=parts.PLANTS, default="nominal",
                       help="nominal, uncertain (nominal run + N trials), ideal (perfect actuator, same tick) or "
                            "ideal-delay (perfect actuator, one sample late); default: %(default)s")
        p.add_argument("--trials", type=int,
                       help="uncertain plants after the nominal run (default: 3 with --plant uncertain)")
        p.add_argument("--noise", choices=("on", "off"), default="on", help="sensor noise (default: %(default)s)")
        p.add_argument("--noise-channels", choices=("shared", "independent"), default="shared",
                       help="both sensors carry one noise sequence, as in the benchmark, or their own "
                            "(default: %(default)s)")
        p.add_argument("--seed", type=int, default=0,
                       help="offset added to every seed (nominal noise 123, trial i: plant 1000+i, noise 2000+i); "
                            "default: %(default)s")
        p.add_argument("--partition", choices=PARTITIONS, default="as-published",
                       help="as-published (the benchmark's loop) or consistent (numerical = reference minus exactly "
                            "the feedback model); default: %(default)s")
        p.add_argument("--daq", choices=("logged", "in-loop"), default="logged",
                       help="command volts, saturation and quantization only logged (the benchmark) or driving the "
                            "plant (a study); default: %(default)s")
        p.add_argument("--guard", choices=("on", "off"), default="on",
                       help="on: a command beyond the DAQ's 3.8 V stops the run (exit 1, with the reason); off: "
                            "saturation is only logged and flagged by the realizability check, as in the "
                            "benchmark's scripts; default: %(default)s")
        p.add_argument("--topology", choices=TOPOLOGIES, default="inprocess",
                       help="site and plant in this process, each a local gRPC daemon, or the site a daemon on its own "
                            "clock at 1024 Hz with the plant in it (docs/realtime.md); default: %(default)s")
        p.add_argument("--workers", type=int, default=1,
                       help="runs in parallel on a process pool (default: %(default)s)")
        p.add_argument("--scheduler", metavar="ADDRESS",
                       help="run the trials on a Dask cluster (tcp://HOST:PORT; needs hybridsim[dask])")
        p.add_argument("--duration", type=float, help="only the first DURATION s of the record (default: all of it)")

    def run(self, args: argparse.Namespace, progress: Progress) -> Campaign:
        import tempfile

        from hybridsim.coordinator.campaign.runner import run_campaign
        from hybridsim.coordinator.problems.executors import Resources, executor_for
        from hybridsim.coordinator.problems.marths.campaign import Trials, summary

        runs = _runs(args)
        done = 0

        def one_done(row: Any) -> None:
            nonlocal done
            done += 1
            progress(f"  run {done}/{len(runs)} done in {row.wall_s:.1f} s")

        start = time.perf_counter()
        resources = Resources(args.workers, args.scheduler)
        with tempfile.TemporaryDirectory(prefix="marths-trials-") as folder:  # made afresh: a benchmark finds none
            subject = Trials(keep_history=not args.no_files)
            rows = run_campaign(subject, runs, folder, executor_for(resources, len(runs)), resources, one_done)
            stopped = next((row for row in rows if row.status != "completed"), None)
            if stopped is not None:
                raise RunStopped(stopped.summary.get("stop_reason", stopped.status))
            trials = [subject.result(row) for row in rows]
        return Campaign(trials, summary(trials, time.perf_counter() - start), _title(args, [t.spec for t in trials]))

    def summary(self, result: Campaign) -> dict[str, Any]:
        return result.summary

    def table(self, result: Campaign) -> str:
        from hybridsim.coordinator.problems.marths import report

        return report.format_table(result.trials, result.title)

    def write(self, result: Campaign, out: Path) -> None:
        from hybridsim.coordinator.problems.marths import report

        report.write_hdf5(result.trials, result.summary, out / "histories.h5")
        report.write_mat(result.trials, out / "histories.mat")
        write_json(out / "summary.json", result.summary)
        (out / "table.txt").write_text(self.table(result) + "\n")

    def plots(self, result: Campaign, out: Path) -> list[Path]:
        from hybridsim.coordinator.problems.marths import report

        return report.write_plots(result.trials, out)

    def evaluate(self, experiment: Any, results: Path) -> dict[str, Any]:
        from hybridsim.coordinator.problems.marths.hybrid import evaluate

        return evaluate(experiment, results)


def _runs(args: argparse.Namespace) -> list[Any]:
    """The benchmark's runs (campaign.runs) of the options; UsageError naming a bad one."""
    from hybridsim.coordinator.problems.marths import campaign, data, loop

    if args.trials is not None and args.plant != "uncertain":
        raise UsageError("--trials: uncertain trials need --plant uncertain")
    if args.trials is not None and args.trials < 1:
        raise UsageError(f"--trials: give at least 1 uncertain plant, not {args.trials}")
    if args.plant.startswith("ideal") and args.compensator != "none":
        raise UsageError(f"--plant {args.plant} is a perfect actuator (measured = target): use --compensator none")
    if args.workers < 1:
        raise UsageError(f"--workers: give 1 or more, not {args.workers}")
    lead = data.constants()["ground_motion"]["records"][args.record]["first_nonzero_t_s"]
    if args.duration is not None and args.duration < lead + 1.0:
        raise UsageError(f"--duration: the {args.record} record is zero for its first {lead:g} s; "
                         f"give at least {lead + 1.0:g} s, not {args.duration:g}")
    try:
        base = loop.RunSpec(record=args.record, scale=args.scale, compensator=args.compensator, plant=args.plant,
                            noise=args.noise == "on", shared_noise=args.noise_channels == "shared",
                            partition=args.partition, daq_in_loop=args.daq == "in-loop", duration=args.duration,
                            guard=args.guard == "on")
    except ValueError as exc:
        raise UsageError(f"--scale: {exc}") from None
    trials = args.trials if args.trials is not None else 3
    return campaign.runs(base, trials, args.topology, args.seed)


def _title(args: argparse.Namespace, specs: list[Any]) -> str:
    from hybridsim.coordinator.problems.marths import loop

    n_trials = len(specs) - 1
    plant = (f"uncertain plants ({n_trials} trials after the nominal run)" if args.plant == "uncertain"
             else f"{args.plant} plant")
    span = f", first {args.duration:g} s" if args.duration else ""
    noise = "no noise (perfect actuator)" if args.plant.startswith("ideal") else f"noise {args.noise}"
    delays = loop.assumed_delays(specs[0])
    assumed = "" if delays is None else f" (delays {1000 * delays[0]:.2f} / {1000 * delays[1]:.2f} ms, J1 uncompensated)"
    guard = "3.8 V guard" if args.guard == "on" else "no guard"
    return (f"maRTHS benchmark: {args.record} x {args.scale:g}{span}, compensator {args.compensator}{assumed}, "
            f"{plant}, {noise}, partition {args.partition}, {guard}, {args.topology}")
