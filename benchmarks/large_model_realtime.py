"""A large plane frame as a real-time hybrid run at 1024 Hz on one core, results file and all.

    python benchmarks/large_model_realtime.py [--lines 18] [--stories 19] [--seconds 60] [--scheme alpha-os]
                                              [--folder DIR] [--json]

Writes the frame of ``lines`` column lines by ``stories`` stories as an experiment of two sparse linear modules
(:func:`hybridsim.coordinator.large_frame.write`; 18 x 19 is 1,026 DOFs), then runs it paced to the wall clock
at dt = 1/1024 s for SECONDS of record in this process, pinned to one core with one BLAS thread (the same as
``hybridsim run DIR/frame.toml --realtime`` under ``taskset -c N``), and prints its late steps, step p50 / p99,
the pre-test's time and the late episodes by cause (what delayed the step that began each), with the load
average.  ``hybridsim bench``'s ``large_model`` says which size holds 1024 Hz (the step alone, no results
file); this run is the check with everything a run does.
"""

from __future__ import annotations

import os

os.environ.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")

import argparse  # noqa: E402 -- the BLAS threads are set before numpy is imported
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

from hybridsim.coordinator.large_frame import DT, SCHEMES, write  # noqa: E402
from hybridsim.modules.opensees.models.frame2d import Frame  # noqa: E402


def realtime_run(lines: int, stories: int, seconds: float, scheme: str, folder: Path) -> dict[str, float]:
    """The frame's real-time run over ``seconds`` of record: its summary's lateness and step figures."""
    from hybridsim.coordinator.experiment import load_experiment
    from hybridsim.coordinator.simulation import run_experiment

    frame = Frame(lines, stories)
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    experiment = load_experiment(write(folder, frame, stories // 2, round(seconds / DT) + 1, scheme))
    summary = run_experiment(experiment, output=folder / "frame.h5", realtime=True).summary
    return {"ndof": frame.ndof, "steps": summary["steps"], "late_steps_pct": summary["late_steps_pct"],
            "max_lateness_us": summary["max_lateness_us"], "step_p50_us": summary["step_time_us"]["p50"],
            "step_p99_us": summary["step_time_us"]["p99"], "loop_s": summary["loop_wall_s"],
            "before_loop_s": summary["wall_s"] - summary["loop_wall_s"],
            "late_episodes": summary.get("late_causes", {}).get("episodes", {}),
            "late_steps_by_cause": summary.get("late_causes", {}).get("late_steps", {})}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=18)
    parser.add_argument("--stories", type=int, default=19)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--scheme", choices=sorted(SCHEMES), default="alpha-os")
    parser.add_argument("--folder", type=Path, help="where the experiment and its results go (default: a temporary one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.lines < 2 or args.stories < 2 or not args.seconds > 0:
        print("large_model_realtime: needs --lines >= 2, --stories >= 2 and --seconds > 0", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="hybridsim-large-") as temporary:
        folder = args.folder or Path(temporary)
        figures = realtime_run(args.lines, args.stories, args.seconds, args.scheme, folder)
    figures["load_average"] = list(os.getloadavg())
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"{figures['ndof']} DOFs ({args.lines} x {args.stories} frame), {args.scheme}, {figures['steps']} steps "
              f"at 1024 Hz on one core: {figures['late_steps_pct']:.2f} % late (max {figures['max_lateness_us']:.0f} "
              f"us), step p50 {figures['step_p50_us']:.0f} us, p99 {figures['step_p99_us']:.0f} us; pre-test and "
              f"set-up {figures['before_loop_s']:.1f} s; late episodes by cause {figures['late_episodes']} (late steps "
              f"{figures['late_steps_by_cause']}); load " + " ".join(f"{v:.2f}" for v in figures["load_average"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
