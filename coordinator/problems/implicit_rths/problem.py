"""`hybridsim study implicit-rths`: the implicit RTHS benchmark (Wang, Liu, Wu, Xu 2015).

Every method and variant on the cases, errors against the exact reference,
iterations per step, compute time per iteration (docs/implicit_rths.md).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridsim.coordinator.problems.base import Problem, Progress, write_json


@dataclass
class Studies:
    """The case studies run and the metrics of their standard and sensitivity runs, by case key."""

    studies: list[Any]
    """cases.CaseStudy, in the order of --case"""
    metrics: dict[str, tuple[list[Any], list[Any]]]


class ImplicitRthsStudy(Problem[Studies]):
    command = "study"
    name = "implicit-rths"
    help = "Shing, EFCM and nearly-complete delay compensation vs the exact reference"
    description = __doc__
    outputs = "table.txt, results.json and the plots"

    def arguments(self, parser: argparse.ArgumentParser) -> None:
        from hybridsim.coordinator.problems.implicit_rths.cases import CASE_KEYS

        parser.add_argument("--case", choices=(*CASE_KEYS, "all"), default="all",
                            help="one case or all of them (default: all)")
        parser.add_argument("--short", action="store_true", help="only the first 10 s of the building cases")

    def run(self, args: argparse.Namespace, progress: Progress) -> Studies:
        from hybridsim.coordinator.problems.implicit_rths.cases import CASE_KEYS, run_study
        from hybridsim.coordinator.problems.implicit_rths.metrics import case_metrics

        studies = run_study(list(CASE_KEYS) if args.case == "all" else [args.case], short=args.short)
        return Studies(studies, {s.case.key: case_metrics(s) for s in studies})

    def summary(self, result: Studies) -> dict[str, Any]:
        """``{"cases": {case: [run, ...]}, "sensitivity": {case: [run + "variant", ...]}}``."""
        from hybridsim.coordinator.problems.implicit_rths.report import study_json

        return study_json(result.studies, result.metrics)

    def table(self, result: Studies) -> str:
        """The comparison table of every case, and M1's compute times."""
        from hybridsim.coordinator.problems.implicit_rths.report import format_table, format_timing

        tables = []
        for s in result.studies:
            standard, sensitivity = result.metrics[s.case.key]
            tables.append(format_table(s, standard, sensitivity))
            if s.case.key == "M1":
                tables.append(format_timing(s, standard))
        return "\n\n".join(tables)

    def write(self, result: Studies, out: Path) -> None:
        """table.txt and results.json (every metric of every run, with the case parameters)."""
        from hybridsim.coordinator.problems.implicit_rths.report import full_json

        (out / "table.txt").write_text(self.table(result) + "\n")
        write_json(out / "results.json", full_json(result.studies, result.metrics))

    def plots(self, result: Studies, out: Path) -> list[Path]:
        from hybridsim.coordinator.problems.implicit_rths.report import write_plots

        return [path for s in result.studies for path in write_plots(s, result.metrics[s.case.key][0], out)]
