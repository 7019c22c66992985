"""`hybridsim study integrators`: the accuracy and stability of every scheme (docs/integrators.md).

Spectral radius, period elongation and amplitude decay against Omega = omega dt from the amplification
matrix, beside the closed-form characteristic polynomial; the spectral radius measured in free-vibration
runs through the coordinator; the stability limit with an actuator delay, an undershoot or a first-order
actuator in the loop;
the order of accuracy measured from a convergence study through the coordinator; each scheme against
OpenSees' own integrator on a five-story building whose stories yield, at dt and dt/2.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.problems.base import Problem, Progress


class IntegratorsStudy(Problem[dict[str, Any]]):
    command = "study"
    name = "integrators"
    help = "the schemes' spectral radius, period elongation, stability with a delay, order of accuracy"
    description = __doc__
    outputs = "results.json, table.txt, spectra.png, delay_limits.png, convergence.png, yielding.png"

    def arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--scheme", action="append", metavar="NAME",
                            help="only this scheme (repeatable; default: all of the study)")

    def run(self, args: argparse.Namespace, progress: Progress) -> dict[str, Any]:
        from hybridsim.coordinator.problems.integrators import study, yielding
        from hybridsim.coordinator.problems.integrators.schemes import SCHEMES

        keys = args.scheme or list(SCHEMES)
        unknown = [k for k in keys if k not in SCHEMES]
        if unknown:
            raise UsageError(f"--scheme {unknown[0]}: not in the study; it has {', '.join(SCHEMES)}")
        result: dict[str, Any] = {"spectra": study.spectra(keys)}
        progress("spectra from the amplification matrices")
        result["free_vibration"] = study.free_vibration(keys)
        progress("free vibration through the coordinator")
        result["delay_limits"] = study.delay_limits()
        result["lag_limits"] = study.lag_limits()
        progress("stability limits with a delay")
        result["convergence"] = study.convergence(keys)
        progress("convergence through the coordinator")
        result["yielding"] = yielding.compare(keys)
        progress("the yielding building against OpenSees' integrators")
        return result

    def summary(self, result: dict[str, Any]) -> dict[str, Any]:
        from hybridsim.coordinator.problems.integrators.report import summary

        return summary(result)

    def table(self, result: dict[str, Any]) -> str:
        from hybridsim.coordinator.problems.integrators.report import format_table

        return format_table(result)

    def write(self, result: dict[str, Any], out: Path) -> None:
        from hybridsim.coordinator.problems.integrators.report import write_results

        write_results(result, out)

    def plots(self, result: dict[str, Any], out: Path) -> list[Path]:
        from hybridsim.coordinator.problems.integrators.report import write_plots

        return write_plots(result, out)
