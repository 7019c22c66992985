"""`hybridsim study bridge`: a three-pier bridge in three modules against one OpenSees model of it.

The left pier is tested in a (virtual) lab through a three-actuator loading beam (lateral, vertical,
rotation), the middle pier with the deck is an OpenSees module, the right pier an OpenSees program of
its own behind an ``adapter`` element; the coordinator's alpha-OS integrates the nine pier-top DOFs.
Per case: max_rel_diff = max |hybrid - monolithic| / max |monolithic| over the pier tops' lateral
displacements, the same for each module's lateral force, and the wall time; a restart case also the resumed
run against the uninterrupted one; with both yielding cases, the dt convergence (docs/bridge.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.problems.base import (Problem, Progress, case_options, finite, pyplot, run_cases,
                                                save_figure, write_history, write_json)


class BridgeStudy(Problem[list]):
    command = "study"
    name = "bridge"
    help = "a three-pier bridge: lab pier + OpenSees module + OpenSees adapter process vs one OpenSees model"
    description = __doc__
    outputs = "table.txt, results.json, a CSV of histories per case and the plots (displacements, module forces)"

    def arguments(self, parser: argparse.ArgumentParser) -> None:
        from hybridsim.coordinator.problems.bridge.cases import CASES

        case_options(parser, CASES, 8.0)

    def run(self, args: argparse.Namespace, progress: Progress) -> list:
        from hybridsim.coordinator.problems.bridge.cases import CASES, run_case

        return run_cases(CASES, args.case, lambda case: run_case(case, args.duration), progress,
                         lambda key, o: f"{key}: max_rel_diff {o.max_rel_diff:.3g} in {o.wall_s:.1f} s"
                         + (f" (stopped: {o.stopped})" if o.stopped else ""))

    def summary(self, result: list) -> dict[str, Any]:
        """``{"cases": {key: {max_rel_diff, wall_s, force_rel_diff, reference, ...}}, "steel01_dt_convergence":
        {...}}`` (the last with both yielding cases)."""
        cases = {o.case.key: {
            "max_rel_diff": o.max_rel_diff, "max_rel_diff_alpha_os": o.max_rel_diff_alpha_os, "wall_s": o.wall_s,
            "force_rel_diff": o.force_rel_diff, "reference": o.case.reference, "law": o.case.law,
            "actuators": o.case.actuators, "compensator": o.case.compensator["kind"], "left": o.case.left,
            "duration_s": o.duration, "dt_s": o.case.dt,
            "stopped_at_s": o.case.dt * (o.hybrid.shape[0] - 1) if o.stopped else None, "stopped": o.stopped or None,
            "peak_left_x_m": float(np.max(np.abs(o.monolithic[:, 0]))),
            **({"restart": {**o.restart, "resumed_vs_uninterrupted": o.resumed_vs_uninterrupted}} if o.restart else {}),
        } for o in result}
        summary: dict[str, Any] = {"cases": cases}
        yielding = [cases.get(k) for k in ("steel01-ideal", "steel01-ideal-dt/2")]
        if all(yielding):
            coarse, fine = yielding
            summary["steel01_dt_convergence"] = {
                "dt_s": [coarse["dt_s"], fine["dt_s"]],
                "vs_hht_newton": [coarse["max_rel_diff"], fine["max_rel_diff"]],
                "vs_hht_newton_ratio": fine["max_rel_diff"] / coarse["max_rel_diff"],
                "vs_alpha_os": [coarse["max_rel_diff_alpha_os"], fine["max_rel_diff_alpha_os"]],
                "vs_alpha_os_ratio": fine["max_rel_diff_alpha_os"] / coarse["max_rel_diff_alpha_os"]}
        return finite(summary)

    def table(self, result: list) -> str:
        lines = [f"{'case':32s} {'reference':>10s} {'max_rel_diff':>12s} {'vs AlphaOS':>10s} {'forces':>9s} "
                 f"{'peak x (mm)':>11s} {'wall (s)':>8s}  notes"]
        for o in result:
            note = (f"  stopped at t = {o.case.dt * (o.hybrid.shape[0] - 1):.2f} s: {o.stopped}" if o.stopped else
                    f"  right pier killed at step {o.restart['killed_at_step']}, resumed from {o.restart['resumed_from_step']}: "
                    f"{o.resumed_vs_uninterrupted:.1e} from the uninterrupted run" if o.restart else "")
            lines.append(f"{o.case.key:32s} {o.case.reference:>10s} {o.max_rel_diff:12.3e} {o.max_rel_diff_alpha_os:10.3e} "
                         f"{max(o.force_rel_diff.values()):9.2e} {1e3 * np.max(np.abs(o.monolithic[:, 0])):11.2f} "
                         f"{o.wall_s:8.1f}{note}")
        return "\n".join(lines)

    def write(self, result: list, out: Path) -> None:
        from hybridsim.coordinator.problems.bridge.cases import DOFS

        (out / "table.txt").write_text(self.table(result) + "\n")
        write_json(out / "results.json", self.summary(result))
        header = [f"hybrid.{d}" for d in DOFS] + [f"monolithic.{d}" for d in DOFS] + [f"force.{d}" for d in DOFS]
        for o in result:
            lateral = o.lateral_forces
            write_history(out, o.case.key, o.case.dt,
                          [o.hybrid, o.monolithic, o.restoring_force] + [v for m in lateral for v in lateral[m]],
                          header + [f"{w}.{m}.lateral_force" for m in lateral for w in ("hybrid", "monolithic")])

    def plots(self, result: list, out: Path) -> list[Path]:
        plt = pyplot()
        paths = []
        for o in result:
            t = o.case.dt * np.arange(o.hybrid.shape[0])
            fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True)
            top.plot(t, 1e3 * o.monolithic[:, 0], "k-", lw=2, label=f"monolithic ({o.case.reference})")
            top.plot(t, 1e3 * o.hybrid[:, 0], "r--", lw=1, label="hybrid (3 modules)")
            top.set_ylabel("left pier top x (mm)")
            top.set_title(f"bridge, {o.case.key}: max_rel_diff {o.max_rel_diff:.2e}")
            top.legend()
            for i, name in ((0, "left"), (3, "middle"), (6, "right")):
                bottom.plot(t, 1e3 * (o.hybrid[:, i] - o.monolithic[:, i]), lw=1, label=name)
            bottom.set_ylabel("hybrid - monolithic (mm)")
            bottom.set_xlabel("t (s)")
            bottom.legend()
            paths.append(save_figure(fig, out / f"{o.case.key.replace('/', '_')}.png"))
            paths.append(self._forces_plot(plt, o, t, out))
        return paths

    @staticmethod
    def _forces_plot(plt: Any, o: Any, t: np.ndarray, out: Path) -> Path:
        """Each module's lateral force (its piers' base shear) over time, hybrid vs monolithic, and the difference."""
        lateral = o.lateral_forces
        fig, axes = plt.subplots(len(lateral) + 1, 1, figsize=(8, 8), sharex=True)
        for ax, (module, (hybrid, reference)) in zip(axes, lateral.items()):
            ax.plot(t, 1e-3 * reference, "k-", lw=2, label=f"monolithic ({o.case.reference})")
            ax.plot(t, 1e-3 * hybrid, "r--", lw=1, label="hybrid")
            ax.set_ylabel(f"{module} (kN)")
            ax.legend(loc="upper left", fontsize=8)
            axes[-1].plot(t, 1e-3 * (hybrid - reference), lw=1, label=module)
        axes[0].set_title(f"bridge, {o.case.key}: lateral force of each module; max rel. diff "
                          + ", ".join(f"{m} {v:.1e}" for m, v in o.force_rel_diff.items()), fontsize=9)
        axes[-1].set_ylabel("hybrid - monolithic (kN)")
        axes[-1].set_xlabel("t (s)")
        axes[-1].legend(fontsize=8)
        return save_figure(fig, out / f"{o.case.key.replace('/', '_')}_forces.png")
