"""`hybridsim study column`: a cantilever column carrying its gravity load (P-Delta) under two horizontal
components, the hybrid against one OpenSees model.

The hybrid (``runs.py``): the 3-D column in an `opensees` module whose axial DOF holds the gravity load by force
control (docs/force_control.md), its top's two lateral DOFs and their mass in the coordinator under two
[[excitation]] components (El Centro's strong motion along x, and 0.8 of it 1 s later along y; docs/program.md),
Newmark iterated to 1e-12.  The oracle: one OpenSees model with the gravity stage (``loadConst -time 0.0``) then
the transient under two UniformExcitation patterns, Newmark and Newton to 1e-12.  Cases: ``elastic`` (an
elasticBeamColumn, 1.5 MN) and ``steel01`` (a forceBeamColumn of a Steel01 fibre tube, 0.5 MN, the records 1.5
times, yielding), each as max_rel_diff over the one model's peak, at dt = 0.01 s (and 0.005 s for steel01).  The
``lab-`` cases put the same column behind an experimental site as its virtual lab's specimen (three ideal
actuators at the top, four control samples a step), the vertical actuator holding the gravity load by the site's
force loop (docs/force_control.md): equal to the opensees-module hybrid for the elastic column; for Steel01 the
loop's one-sample lag shows where yielding couples the axial DOF.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridsim.coordinator.problems.base import Problem, Progress, finite, run_cases, write_json

STEPS = {"elastic": (0.01,), "steel01": (0.01, 0.005), "lab-elastic": (0.01,), "lab-steel01": (0.01, 0.005)}
"""the cases and the steps (s) each runs at"""


@dataclass
class Outcome:
    key: str
    figures: dict[str, float]
    wall_s: float


def _run(key: str) -> Outcome:
    from hybridsim.coordinator.problems.column.runs import CASES, gravity_effect, max_rel_diff

    start = time.perf_counter()
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="column-") as folder:
        for dt in STEPS[key]:
            figures.update(max_rel_diff(key, dt, Path(folder)))
    if key in CASES:  # (a lab case's column and load are its numerical case's)
        figures["gravity_effect"] = gravity_effect(key, STEPS[key][0])  # the held load matters (P-Delta)
    return Outcome(key, figures, time.perf_counter() - start)


class ColumnStudy(Problem[list]):
    command = "study"
    name = "column"
    help = "a column with gravity (P-Delta) under two components: the hybrid against one OpenSees model"
    description = __doc__
    outputs = "table.txt, results.json"
    plots_by_default = False

    def arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--case", choices=(*STEPS, "all"), default="all",
                            help="one case or all (default: all; steel01 takes about half a minute, lab-steel01 "
                                 "over a minute)")

    def run(self, args: argparse.Namespace, progress: Progress) -> list:
        return run_cases({k: k for k in STEPS}, args.case, _run, progress,
                         lambda key, o: f"{key}: done in {o.wall_s:.1f} s")

    def summary(self, result: list) -> dict[str, Any]:
        """``{"cases": {key: {figure: value, ..., "wall_s": s}}}``."""
        return finite({"cases": {o.key: {**o.figures, "wall_s": o.wall_s} for o in result}})

    def table(self, result: list) -> str:
        lines = [f"{'case':10s} {'figure':28s} {'value':>12s}"]
        for o in result:
            lines += [f"{o.key:10s} {name:28s} {value:12.4g}" for name, value in o.figures.items()]
            lines.append(f"{o.key:10s} {'wall time (s)':28s} {o.wall_s:12.1f}")
        return "\n".join(lines)

    def write(self, result: list, out: Path) -> None:
        (out / "table.txt").write_text(self.table(result) + "\n")
        write_json(out / "results.json", self.summary(result))
