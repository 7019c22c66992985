"""`hybridsim study narx`: the compensator study of COMPENSATORS.md on the maRTHS benchmark.

El Centro at 40 %, nominal plant: J1..J10 of every case (inverse compensation,
NARX with OLS, ridge and nonlinear terms, RLS-AC), unstable cases marked,
parameter histories and plots (docs/narx.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.problems.base import Problem, Progress


class NarxStudy(Problem[Any]):
    command = "study"
    name = "narx"
    help = "delay compensators on the maRTHS benchmark: inverse, NARX (OLS, ridge, nonlinear terms), RLS-AC"
    description = __doc__
    outputs = "results.json, table.txt, parameters.h5 and the plots"

    def arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--case", action="append", metavar="NAME",
                            help="only this case (repeatable); the uncompensated run always runs first")
        parser.add_argument("--duration", type=float, metavar="S", help="only the first S s of the record")

    def run(self, args: argparse.Namespace, progress: Progress) -> Any:
        """The study (``study.Study``) of the cases asked for."""
        from hybridsim.coordinator.problems.narx.study import cases, run_study

        if args.duration is not None and not args.duration > 0:
            raise UsageError(f"--duration: give a positive number of seconds, not {args.duration}")
        unknown = sorted(set(args.case or ()) - {c.name for c in cases()})
        if unknown:
            raise UsageError(f"--case {unknown[0]}: no such case; the study has {', '.join(c.name for c in cases())}")

        def case_done(result: Any) -> None:
            status = f"unstable: {result.reason}" if result.unstable else "stable"
            progress(f"{result.case.name}: {status} ({result.wall_s:.1f} s)")

        return run_study(args.case, args.duration, case_done)

    def summary(self, result: Any) -> dict[str, Any]:
        from hybridsim.coordinator.problems.narx.study import study_json

        return study_json(result)

    def table(self, result: Any) -> str:
        from hybridsim.coordinator.problems.narx.report import format_table

        return format_table(result)

    def write(self, result: Any, out: Path) -> None:
        from hybridsim.coordinator.problems.narx.report import write_results

        write_results(result, out)

    def plots(self, result: Any, out: Path) -> list[Path]:
        from hybridsim.coordinator.problems.narx.report import write_plots

        return write_plots(result, out)
