"""`hybridsim study ssi`: a soil-foundation-structure system across two programs against one OpenSees model.

The plane-strain soil block (elastic, or PressureIndependMultiYield) runs in an openseespy process of its own
behind OpenSees' ``adapter`` element; the footing and column are an ``opensees`` module in the coordinator or
a PyNite process behind a UI-SIMCOR interface program; the coordinator's alpha-OS couples them.  Per case:
max_rel_diff = max |hybrid - monolithic| / max |monolithic| of the column top's displacement, the soil
module's footing forces against the monolithic model's, and the wall time (docs/ssi.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.problems.base import (Problem, Progress, case_options, finite, pyplot, run_cases,
                                                save_figure, write_history, write_json)


class SsiStudy(Problem[list]):
    command = "study"
    name = "ssi"
    help = "soil (OpenSees adapter process) + frame (OpenSees module or PyNite process) vs one OpenSees model"
    description = __doc__
    outputs = "table.txt, results.json, a CSV and a plot per case"

    def arguments(self, parser: argparse.ArgumentParser) -> None:
        from hybridsim.coordinator.problems.ssi.cases import CASES

        case_options(parser, CASES, 12.0)

    def run(self, args: argparse.Namespace, progress: Progress) -> list:
        from hybridsim.coordinator.problems.ssi.cases import CASES, run_case

        return run_cases(CASES, args.case, lambda case: run_case(case, args.duration), progress,
                         lambda key, o: f"{key}: max_rel_diff {o.max_rel_diff:.3g} in {o.wall_s:.1f} s")

    def summary(self, result: list) -> dict[str, Any]:
        """``{"cases": {key: {max_rel_diff, wall_s, reference, law, frame, dt_s, ...}}}``."""
        return finite({"cases": {o.case.key: {
            "max_rel_diff": o.max_rel_diff, "max_rel_diff_alpha_os": o.max_rel_diff_alpha_os, "wall_s": o.wall_s,
            "soil_force_rel_diff": o.force_rel_diff, "reference": o.case.reference, "law": o.case.law,
            "frame": o.case.frame, "soil_module": o.case.soil, "dt_s": o.case.dt, "reference_soil_density": o.case.density,
            "lumped_soil_mass_kg": o.case.lumped, "duration_s": o.duration,
            "peak_top_x_m": float(np.max(np.abs(o.monolithic[:, -1]))),
            "peak_footing_x_m": float(np.max(np.abs(o.monolithic[:, 2])))} for o in result}})

    def table(self, result: list) -> str:
        lines = [f"{'case':24s} {'soil':>7s} {'frame':>8s} {'dt (s)':>7s} {'reference':>22s} {'max_rel_diff':>12s} "
                 f"{'vs AlphaOS':>10s} {'soil force':>10s} {'peak top (mm)':>13s} {'wall (s)':>8s}"]
        for o in result:
            reference = o.case.reference + (f", soil {o.case.density:g} kg/m3" if o.case.density else "")
            lines.append(f"{o.case.key:24s} {o.case.law:>7s} {o.case.frame:>8s} {o.case.dt:7.4f} {reference:>22s} "
                         f"{o.max_rel_diff:12.3e} {o.max_rel_diff_alpha_os:10.3e} {o.force_rel_diff:10.3e} "
                         f"{1e3 * np.max(np.abs(o.monolithic[:, -1])):13.2f} {o.wall_s:8.1f}")
        return "\n".join(lines)

    def write(self, result: list, out: Path) -> None:
        from hybridsim.coordinator.problems.ssi.cases import DOFS

        (out / "table.txt").write_text(self.table(result) + "\n")
        write_json(out / "results.json", self.summary(result))
        footing = DOFS[:6]
        header = ([f"hybrid.{d}" for d in DOFS] + [f"monolithic.{d}" for d in DOFS]
                  + [f"soil_force.hybrid.{d}" for d in footing] + [f"soil_force.monolithic.{d}" for d in footing])
        for o in result:
            write_history(out, o.case.key, o.case.dt, [o.hybrid, o.monolithic, o.soil_force, o.monolithic_soil_force],
                          header)

    def plots(self, result: list, out: Path) -> list[Path]:
        plt = pyplot()
        paths = []
        for o in result:
            t = o.case.dt * np.arange(o.hybrid.shape[0])
            fig, (top, diff, force) = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
            top.plot(t, 1e3 * o.monolithic[:, -1], "k-", lw=2, label=f"monolithic ({o.case.reference})")
            soil = "soil process" if o.case.soil == "adapter" else "dynamic soil module"
            module = "adapter process" if o.case.soil == "adapter" else "dynamic: alpha-OS weighted, with inertia"
            top.plot(t, 1e3 * o.hybrid[:, -1], "r--", lw=1, label=f"hybrid ({soil} + {o.case.frame} frame)")
            top.plot(t, 1e3 * o.hybrid[:, 2], "b-", lw=1, label="hybrid footing x")
            top.set_ylabel("column top x (mm)")
            top.set_title(f"soil-foundation-structure, {o.case.key}: max_rel_diff {o.max_rel_diff:.2e}")
            top.legend(fontsize=8)
            diff.plot(t, 1e3 * (o.hybrid[:, -1] - o.monolithic[:, -1]))
            diff.set_ylabel("hybrid - monolithic (mm)")
            for column, name, colour in ((2, "footing2.x", "r"), (1, "footing1.y", "m")):
                force.plot(t, 1e-3 * o.monolithic_soil_force[:, column], "k-", lw=2,
                           label=f"{name}: monolithic soil elements")
                force.plot(t, 1e-3 * o.soil_force[:, column], colour + "--", lw=1,
                           label=f"{name}: soil module ({module})")
            force.set_ylabel("soil force on footing (kN)")
            force.set_xlabel("t (s)")
            force.legend(fontsize=8)
            paths.append(save_figure(fig, out / f"{o.case.key.replace('/', '_')}.png"))
        return paths
