"""`hybridsim study ssi`: a soil-foundation-structure system across two programs against one OpenSees model.

The plane-strain soil block runs in an openseespy process of its own behind OpenSees' ``adapter`` element,
the footing and column are an ``opensees`` module in the coordinator; the coordinator's alpha-OS couples
them.  max_rel_diff = max |hybrid - monolithic| / max |monolithic| of the column top's displacement
(docs/ssi.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.problems.base import Problem, Progress, finite, pyplot, save_figure, write_json


class SsiStudy(Problem[Any]):
    command = "study"
    name = "ssi"
    help = "soil (OpenSees adapter process) + frame (OpenSees module) vs one OpenSees model of soil, footing, frame"
    description = __doc__
    outputs = "table.txt, results.json, ssi.csv and ssi.png"

    def arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--duration", type=float, default=12.0, help="seconds of the record (default: 12)")

    def run(self, args: argparse.Namespace, progress: Progress) -> Any:
        from hybridsim.coordinator.problems.ssi.cases import run_case

        return run_case(args.duration)

    def summary(self, result: Any) -> dict[str, Any]:
        """``{"cases": {"elastic": {max_rel_diff, wall_s, peak_top_x_m, duration_s}}}``."""
        return finite({"cases": {result.key: {"max_rel_diff": result.max_rel_diff, "wall_s": result.wall_s,
                                              "peak_top_x_m": float(np.max(np.abs(result.monolithic[:, -1]))),
                                              "duration_s": result.duration}}})

    def table(self, result: Any) -> str:
        return (f"soil {result.key}: column top x, hybrid vs monolithic AlphaOS: max_rel_diff {result.max_rel_diff:.3e}"
                f" (peak {1e3 * np.max(np.abs(result.monolithic[:, -1])):.2f} mm, {result.wall_s:.1f} s)")

    def write(self, result: Any, out: Path) -> None:
        from hybridsim.coordinator.problems.ssi.cases import DOFS, DT

        (out / "table.txt").write_text(self.table(result) + "\n")
        write_json(out / "results.json", self.summary(result))
        t = DT * np.arange(result.hybrid.shape[0])[:, None]
        np.savetxt(out / "ssi.csv", np.hstack([t, result.hybrid, result.monolithic]), delimiter=",", comments="",
                   header=",".join(["t"] + [f"hybrid.{d}" for d in DOFS] + [f"monolithic.{d}" for d in DOFS]))

    def plots(self, result: Any, out: Path) -> list[Path]:
        from hybridsim.coordinator.problems.ssi.cases import DT

        t = DT * np.arange(result.hybrid.shape[0])
        fig, (top, bottom) = pyplot().subplots(2, 1, figsize=(8, 5.5), sharex=True)
        top.plot(t, 1e3 * result.monolithic[:, -1], "k-", lw=2, label="monolithic (AlphaOS)")
        top.plot(t, 1e3 * result.hybrid[:, -1], "r--", lw=1, label="hybrid (soil process + frame module)")
        top.plot(t, 1e3 * result.hybrid[:, 2], "b-", lw=1, label="hybrid footing x")
        top.set_ylabel("column top x (mm)")
        top.set_title(f"soil-foundation-structure: max_rel_diff {result.max_rel_diff:.2e}")
        top.legend()
        bottom.plot(t, 1e3 * (result.hybrid[:, -1] - result.monolithic[:, -1]))
        bottom.set_ylabel("hybrid - monolithic (mm)")
        bottom.set_xlabel("t (s)")
        return [save_figure(fig, out / "ssi.png")]
