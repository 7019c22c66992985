"""`hybridsim run EXPERIMENT.toml`: run an experiment, stream results to HDF5, print a summary.

`hybridsim resume RESULTS.h5`: continue a stopped run from its last checkpoint.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.excitation import peaks
from hybridsim.coordinator.experiment import Experiment, ExperimentError, load_experiment
from hybridsim.coordinator.interrupts import interrupted_once
from hybridsim.coordinator.monitor.session import add_monitor_options, monitor_token, monitoring
from hybridsim.coordinator.motion import STANDARD_GRAVITY
from hybridsim.coordinator.pacing import ProgressBar, format_site_clock
from hybridsim.coordinator.recorder import read_attributes, read_checkpoint
from hybridsim.coordinator.recorder.holds import resume_command
from hybridsim.coordinator.simulation import (RunResult, resume_run, run_experiment, stored_attributes,
                                              stored_experiment)


def register(sub: Any) -> None:
    parser = sub.add_parser("run", help="run an experiment file", description=__doc__.split("\n\n")[0])
    parser.add_argument("experiment", type=Path, metavar="EXPERIMENT.toml", help="experiment file (TOML)")
    parser.add_argument("--output", type=Path, metavar="FILE.h5",
                        help="results file (HDF5); default: the experiment's output.file")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the results file if it exists (never one a live run is writing)")
    parser.add_argument("--realtime", action="store_true",
                        help="pace the steps to the wall clock (dt per step); late steps are counted and reported")
    _network_option(parser, "")
    add_monitor_options(parser)
    _output_options(parser)
    parser.set_defaults(func=main)
    resume = sub.add_parser("resume", help="continue a stopped run from its last checkpoint",
                            description="Continue the run of a results file from its last checkpoint "
                                        "(output.checkpoint_every), writing into the same file.")
    resume.add_argument("results", type=Path, help="results file (HDF5) of the stopped run")
    resume.add_argument("--realtime", action="store_true", help="pace the steps to the wall clock, as `run --realtime`")
    resume.add_argument("--accept-changed", action="append", default=[], metavar="KEY",
                        help="resume although this input changed since the run began (a module's config, "
                             "modules.NAME.config, or a file it names, e.g. ground_motion.file): the change is "
                             "deliberate and recorded in the results file; repeatable")
    resume.add_argument("--clear-hold", action="append", default=[], metavar="SITE",
                        help="the operator clears the hold of SITE (in the coordinator's process or an address = "
                             "\"local\" daemon, whose hold ended with the run), recorded with the time in the results "
                             "file; a site daemon at HOST:PORT keeps its own hold, cleared only there (hybridsim "
                             "site-control HOST:PORT --clear); repeatable")
    _network_option(resume, " for the rest of the run (the stopped run's network otherwise); stored with the run, "
                            "so a later resume takes it")
    add_monitor_options(resume)
    _output_options(resume)
    resume.set_defaults(func=resume_main)


def _network_option(parser: argparse.ArgumentParser, more: str) -> None:
    parser.add_argument("--network", action="append", default=[], metavar="[MODULE:]KEY=VALUE,...",
                        help="emulate the network to MODULE (default: every module at an address or local daemon): "
                             "round_trip_s, jitter_s, loss, retransmit_s, seed, e.g. round_trip_s=0.02,jitter_s=0.002; "
                             f"replaces the module's network table{more}; repeatable (docs/realtime.md)")


def _output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    parser.add_argument("--takeover", action="store_true",
                        help="take over a site that is still in another coordinator's session (e.g. of a run that "
                             "died); without it such a site refuses the run")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bar and no lines before the first step: the summary only")


def main(args: argparse.Namespace) -> int:
    try:
        experiment = load_experiment(args.experiment, network=args.network)
    except ExperimentError as exc:  # the one line names the file too: a user has several
        raise UsageError(f"{exc.file}: {exc}" if exc.file else str(exc)) from None
    with _says_what_is_kept(args.output or experiment.output), interrupted_once(), \
            monitoring(experiment, args.monitor, monitor_token(args), realtime=args.realtime) as hooks:
        with _progress(args) as progress:
            result = run_experiment(experiment, output=args.output, realtime=args.realtime, overwrite=args.overwrite,
                                    takeover=args.takeover, announce=_say(args, experiment),
                                    **with_bar(hooks, progress))
    return _report(args, result)


def resume_main(args: argparse.Namespace) -> int:
    if not args.results.is_file():
        raise UsageError(f"{args.results} is not a results file (give the .h5 file of the stopped run)")
    experiment = stored_experiment(stored_attributes(args.results), args.network)
    with _says_what_is_kept(args.results), interrupted_once(), \
            monitoring(experiment, args.monitor, monitor_token(args), realtime=args.realtime) as hooks:
        with _progress(args) as progress:
            result = resume_run(args.results, realtime=args.realtime, takeover=args.takeover, network=args.network,
                                announce=_say(args, experiment), accept_changed=args.accept_changed,
                                clear_hold=args.clear_hold,
                                **with_bar(hooks, progress))
    return _report(args, result)


@contextmanager
def _says_what_is_kept(results: Path) -> Iterator[None]:
    """A run that stops (a module lost, Ctrl-C) adds to its stop line what its results file keeps and how to go
    on; nothing when the run stopped before it made the file."""
    try:
        yield
    except (RunStopped, KeyboardInterrupt) as exc:
        try:
            attrs, checkpoint = read_attributes(results), read_checkpoint(results)
        except (OSError, UsageError):
            raise exc from None
        if str(attrs.get("status", "")).startswith("stopped"):
            exc.add_note(f"{results} keeps {int(attrs['completed_steps']) - 1} completed steps; " + (
                f"{resume_command(results, attrs)} continues from step {checkpoint.step}" if checkpoint else
                "no checkpoint to resume from yet (output.checkpoint_every)"))
        raise


def _say(args: argparse.Namespace, experiment: Experiment) -> Callable[[str], None] | None:
    """What prints the lines a run says before its first step: on stdout before the summary (stderr keeps the one
    line of a stop); none with --json (stdout is one JSON object, which holds them) or --quiet (the summary only).
    The first of them, once the modules are open and the pre-test is done, follows the excitation's peaks."""
    if args.json or args.quiet:
        return None
    first = [_excitation_line(experiment)]

    def say(line: str) -> None:
        print(*filter(None, first), line, sep="\n", flush=True)
        first.clear()
    return say


def _excitation_line(experiment: Experiment) -> str:
    """Each excitation component's peak as scaled (m/s^2 with g beside it), so that a record in other units than its
    ``units`` key says shows before anything moves; empty for a run without one."""
    found = {name: c for name, c in peaks(experiment.components, experiment.dt).items() if c["peak"] > 0}
    return "excitation: " + ", ".join(_component(name, c) for name, c in found.items()) if found else ""


@contextmanager
def _progress(args: argparse.Namespace) -> Iterator[ProgressBar | None]:
    """The run's progress bar (none with --quiet or --json), its line ended however the run ends."""
    bar = None if (args.quiet or args.json) else ProgressBar()
    try:
        yield bar
    finally:
        if bar is not None:
            bar.end()


def with_bar(hooks: dict[str, Any], bar: ProgressBar | None) -> dict[str, Any]:
    """The run's keyword arguments: the monitor's ``hooks`` and the progress bar, which also listens to the steps
    (its line shows a site clock's counters as they change)."""
    if bar is None:
        return hooks
    return {**hooks, "progress": bar, "listeners": [*hooks.get("listeners", []), bar.watch]}


def _report(args: argparse.Namespace, result: RunResult) -> int:
    summary = dict(result.summary, output=str(result.output))
    if args.json:
        summary.get("evaluation", {}).pop("table", None)
        print(json.dumps(summary))
    else:
        print(format_summary(summary))
        if "evaluation" in summary:
            print(summary["evaluation"]["table"])
    return 0


def format_summary(summary: dict[str, Any]) -> str:
    """The summary as a short human-readable table."""
    lines = [
        f"experiment {summary['experiment']}: {summary['steps']} steps of {summary['dt_s']:g} s "
        f"({summary['simulated_s']:g} s simulated) with {summary['integrator']}",
        *([f"resumed from the checkpoint at step {summary['resumed_from_step']}: {summary['steps_this_session']} "
           "steps this session; wall time, steps/s and step times below are this session's, module evaluations "
           "and peaks the whole run's"] if summary.get("resumed_from_step") is not None else []),
        f"wall time {summary['wall_s']:.3f} s, {summary['steps_per_second']:,.0f} steps/s; "
        f"pre-test asymmetry {summary['pretest_asymmetry']:.2e}",
        "step time (whole step) p50 {p50:.0f} us, p99 {p99:.0f} us, max {max:.0f} us".format(**summary["step_time_us"])
        + "; compute (to commit) p50 {p50:.0f} us, p99 {p99:.0f} us".format(**summary["compute_time_us"]),
    ]
    lines += _program_lines(summary)
    if summary["realtime"]:
        lines.append(f"real time: {summary['late_steps']} late steps ({summary['late_steps_pct']:.2f} %), "
                     f"worst {summary['max_lateness_us']:.0f} us past its slot")
    evaluations = summary.get("module_evaluations", {})
    if evaluations.get("max_in_a_step", 1) > 1:  # an iterating integrator (newmark) took more than one trial
        lines.append(f"module evaluations: {evaluations['per_step']:.2f} per step, at most "
                     f"{evaluations['max_in_a_step']} in a step")
    for name, path in summary.get("network", {}).items():
        lines.append(f"network to {name}: {path}; {_path_counters(summary['modules'].get(name, {}), 'network_')}")
    for name, stats in summary["modules"].items():
        if "plant_network_segments" in stats:  # an experimental site's backend.network to its plant daemon
            lines.append(f"network from site {name} to its plant: {_path_counters(stats, 'plant_network_')}")
        if "clock_steps" in stats:  # a site on its own clock (hybridsim.modules.experimental.clock)
            lines.append(format_site_clock(name, stats))
        if stats.get("restores_from_copy") or stats.get("restores_by_replay"):  # an OpenSees site resumed
            how = ("from its worker's kept copy" if stats.get("restores_from_copy") else
                   f"by replaying its committed path ({stats.get('replayed_steps', 0):.0f} steps"
                   + ("; its kept copy failed, see the site's log)" if stats.get("kept_copy_failures") else ")"))
            lines.append(f"{name}: checkpoint restored {how} in {stats.get('restore_s', 0.0):.3f} s")
    lines.append(f"{'DOF':<16}{'peak |d|':>14} {'unit':<5}{'at t (s)':>10}   (floors and interfaces first)")
    for dof, peak in summary["peak_displacement"].items():
        lines.append(f"{dof:<16}{peak:>14.6e} {summary['peak_units'][dof]:<5}{summary['peak_time_s'][dof]:>10.4f}")
    lines.append(f"results: {summary['output']}")
    return "\n".join(lines)


def _program_lines(summary: dict[str, Any]) -> list[str]:
    """A test program's stages and, when there are several, each excitation component's peak."""
    lines = []
    if summary.get("stages"):
        lines.append("stages: " + ", ".join(f"{s['name']} ({s['kind']}, rows {s['first_row']}-"
                                            f"{s['first_row'] + s['rows'] - 1})" for s in summary["stages"]))
    components = summary.get("excitation", {})
    if len(components) > 1:
        lines.append("excitation: " + ", ".join(_component(name, c) for name, c in components.items()))
    return lines


def _component(name: str, figures: dict[str, Any]) -> str:
    """One excitation component's peak, when it occurs and when the component starts."""
    start = f" (from {figures['start_s']:g} s)" if figures["start_s"] else ""
    in_g = f" = {figures['peak'] / STANDARD_GRAVITY:.3g} g" if figures["unit"] == "m/s^2" else ""
    return f"{name} peak {figures['peak']:.4g} {figures['unit']}{in_g} at {figures['time_s']:.4g} s{start}"


def _path_counters(stats: dict[str, float], prefix: str) -> str:
    """An emulated path's counters (``network_*`` of a module, ``plant_network_*`` of a site's plant link)."""
    return (f"{stats.get(prefix + 'segments', 0):.0f} segments, {stats.get(prefix + 'lost_segments', 0):.0f} lost "
            f"and resent (longest wait {1e3 * stats.get(prefix + 'max_resend_wait_s', 0):.0f} ms)")
