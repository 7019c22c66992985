"""Long runs at constant cost: every integrator x module kind x placement over a record repeated many times.

    python benchmarks/long_run.py [--seconds 41] [--repeats 10] [--in-process-repeats 50] [--realtime-s 60]
                                  [--pair-repeats 73] [--newmark-repeats 120] [--marths-newmark-s S] [--json]

Each run shakes a 1-DOF structure with the first SECONDS of El Centro, REPEATS times over (a module in
the coordinator's process: IN_PROCESS_REPEATS times, so that its tenths last about a second), and prints
steps/s over the first and last tenth (the same phase of the record), the resident memory of the
coordinator and of its daemon at 10, 50 and 100 % with the growth per 100,000 steps over the second
half, and the sizes of the last two checkpoints (one per repetition); then a real-time run of two
daemons at 1024 Hz for REALTIME_S seconds gives its late steps and their causes; PAIR_REPEATS adds a
long run of the experimental site + plant daemon pair (the memory of three processes).  Then the long
demonstrations: the yielding spring under newmark over the whole record NEWMARK_REPEATS times
(120: 494,160 steps; 0 skips it) and the maRTHS main job with its site and plant as daemons under
newmark over MARTHS_NEWMARK_S seconds (default the whole record; 0 skips it): J2/J7, module
evaluations per step, wall time.  `hybridsim bench --json` has the matrix and
the real-time run, shorter, under "long_run" (see hybridsim.coordinator.bench_longrun).
"""

from __future__ import annotations

import argparse
import json
import os
import platform

from hybridsim.coordinator.bench_longrun import (RECORD_S, format_long_run, long_run, marths_daemons_newmark, matrix,
                                                 newmark_yielding, realtime_two_daemons)


def option_refusal(args: argparse.Namespace) -> str | None:
    """Why the options cannot give the figures (one line), or None: a negative length or count (a negative
    --marths-newmark-s ran the whole record), or newmark repeats that are no whole number of tenths' records."""
    for name in ("seconds", "realtime_s", "marths_newmark_s", "newmark_repeats", "pair_repeats", "repeats",
                 "in_process_repeats"):
        value = getattr(args, name)
        if value is not None and not value >= 0:  # also NaN
            return f"--{name.replace('_', '-')} must be >= 0 (0 skips it), not {value}"
    for name in ("newmark_repeats", "repeats", "in_process_repeats"):
        if getattr(args, name) % 10:
            return (f"--{name.replace('_', '-')} must be a multiple of 10 (its first and last tenth are whole "
                    f"records), not {getattr(args, name)}")
    if args.seconds and not (args.repeats and args.in_process_repeats):
        return "--repeats and --in-process-repeats must be > 0 with --seconds (the matrix's rows)"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=41.0, help="seconds of record per repetition (default 41; 0: no matrix)")
    parser.add_argument("--repeats", type=int, default=10,
                        help="repetitions of the record in a row with its module as a daemon (a multiple of 10)")
    parser.add_argument("--in-process-repeats", type=int, default=50,
                        help="the same with the module in the coordinator's process (default 50: its tenths last "
                             "about a second)")
    parser.add_argument("--realtime-s", type=float, default=60.0, help="length of the real-time run (s; 0: none)")
    parser.add_argument("--newmark-repeats", type=int, default=120,
                        help="whole records of the newmark yielding-spring run (a multiple of 10; 0: skip)")
    parser.add_argument("--marths-newmark-s", type=float, default=None,
                        help="seconds of the maRTHS daemons run under newmark (default: the whole record; 0: skip)")
    parser.add_argument("--pair-repeats", type=int, default=0,
                        help="whole records of a longer run of the experimental site + plant daemon pair under "
                             "alpha-os, a row of its own (73: 300,612 steps; default 0: none)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    refusal = option_refusal(args)
    if refusal:
        parser.exit(2, f"{parser.prog}: error: {refusal}\n")
    figures: dict = {"runs": matrix(args.seconds, args.in_process_repeats, args.repeats) if args.seconds else []}
    if args.realtime_s:
        figures["realtime_two_daemons"] = realtime_two_daemons(args.realtime_s)
    if args.pair_repeats:
        figures["runs"].append(long_run("alpha-os", "experimental", True, RECORD_S, repeats=args.pair_repeats))
    if args.newmark_repeats:
        figures["newmark_yielding"] = newmark_yielding(args.newmark_repeats)
    if args.marths_newmark_s != 0:
        figures["marths_newmark"] = marths_daemons_newmark(args.marths_newmark_s)
    figures["machine"] = {"platform": platform.platform(), "cpus": os.cpu_count(), "load_average": os.getloadavg()}
    print(json.dumps(figures) if args.json else format_long_run(figures))


if __name__ == "__main__":
    main()
