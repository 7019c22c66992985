"""`hybridsim study dynamic`: the coupling of dynamic modules (docs/dynamic_modules.md) measured on a linear chain.

A 4-DOF shear chain split at x2 into two dynamic `linear` modules with mass on both sides of the interface and the
coordinator's x2 (``chain.py``), run for real through the coordinator.  Cases: ``alpha-os-exact`` (one OpenSees
model under AlphaOS, the discrete closed form of the partition), ``stability`` (the free decay's spectral radius
against HHT-alpha's, Hilber, Hughes & Taylor 1977, and sub-stepping at omega_max dt = 29 and 2900),
``closed-form`` (the continuous closed form at dt = 0.01, 0.005 s, with and without sub-steps) and
``closed-form-fine`` (dt = 2.5e-5 s over 0.5 s: to 1e-8; a minute or two).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.problems.base import Problem, Progress, finite, run_cases, write_json


@dataclass
class Outcome:
    key: str
    figures: dict[str, float]
    wall_s: float


def _exact(folder: Path) -> dict[str, float]:
    from hybridsim.coordinator.problems.dynamic.runs import ALPHA, hybrid, one_model

    x2, record = hybrid(folder, ALPHA, 1, 0.01, 3.0)
    reference = one_model(record, 0.01)
    return {"max_rel_diff_vs_opensees_alphaos": float(np.max(np.abs(x2 - reference)) / np.max(np.abs(reference)))}


def _stability(folder: Path) -> dict[str, float]:
    import scipy.linalg

    from hybridsim.coordinator.problems.dynamic import chain
    from hybridsim.coordinator.problems.dynamic.runs import ALPHA, free_decay, one_model, pulse, radius

    omegas = np.sqrt(scipy.linalg.eigh(*chain.matrices()[::-1])[0])
    out = {"omega_max_dt_at_dt_1": float(omegas[-1]),
           "hht_radius_at_dt_1": max(chain.hht_spectral_radius(w, ALPHA) for w in omegas),
           "radius_at_dt_1": radius(free_decay(folder, 1.0, 1, 160), 50, 150),
           "radius_at_dt_1_4_substeps": radius(free_decay(folder, 1.0, 4, 160), 50, 150)}
    for dt in (1.0, 100.0):
        x, reference = free_decay(folder, dt, 1), np.abs(one_model(pulse(60), dt, damped=False))
        out[f"max_rel_diff_vs_opensees_alphaos_at_dt_{dt:g}"] = float(np.max(np.abs(x - reference))
                                                                       / np.max(reference))
    sub = free_decay(folder, 100.0, 4)
    out["decay_40_steps_at_dt_100_4_substeps"] = float(np.max(sub[50:60]) / np.max(sub[10:20]))
    return out


def _closed_form(pairs: tuple[tuple[float, int], ...], duration: float) -> Callable[[Path], dict[str, float]]:
    def run(folder: Path) -> dict[str, float]:
        from hybridsim.coordinator.problems.dynamic import chain
        from hybridsim.coordinator.problems.dynamic.runs import AMPLITUDE, OMEGA_G, hybrid

        out = {}
        for dt, substeps in pairs:
            x2, _ = hybrid(folder, 0.0, substeps, dt, duration)
            exact = chain.closed_form(dt * np.arange(x2.size), AMPLITUDE, OMEGA_G)
            out[f"max_rel_diff_dt_{dt:g}_substeps_{substeps}"] = float(np.max(np.abs(x2 - exact))
                                                                         / np.max(np.abs(exact)))
        return out

    return run


CASES: dict[str, Callable[[Path], dict[str, float]]] = {
    "alpha-os-exact": _exact,
    "stability": _stability,
    "closed-form": _closed_form(((0.01, 1), (0.01, 4), (0.005, 1), (0.005, 4)), 1.0),
    "closed-form-fine": _closed_form(((2.5e-5, 1), (2.5e-5, 4)), 0.5),
}


def _run(key: str) -> Outcome:
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dynamic-") as folder:
        figures = CASES[key](Path(folder))
    return Outcome(key, figures, time.perf_counter() - start)


class DynamicStudy(Problem[list]):
    command = "study"
    name = "dynamic"
    help = "dynamic modules (their own mass): the coupling's exactness, stability and accuracy on a linear chain"
    description = __doc__
    outputs = "table.txt, results.json"
    plots_by_default = False

    def arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--case", choices=(*CASES, "all"), default="all",
                            help="one case or all (default: all; closed-form-fine takes a minute or two)")

    def run(self, args: argparse.Namespace, progress: Progress) -> list:
        return run_cases({k: k for k in CASES}, args.case, _run, progress,
                         lambda key, o: f"{key}: done in {o.wall_s:.1f} s")

    def summary(self, result: list) -> dict[str, Any]:
        """``{"cases": {key: {figure: value, ..., "wall_s": s}}}``."""
        return finite({"cases": {o.key: {**o.figures, "wall_s": o.wall_s} for o in result}})

    def table(self, result: list) -> str:
        lines = [f"{'case':18s} {'figure':44s} {'value':>12s}"]
        for o in result:
            lines += [f"{o.key:18s} {name:44s} {value:12.4g}" for name, value in o.figures.items()]
            lines.append(f"{o.key:18s} {'wall time (s)':44s} {o.wall_s:12.1f}")
        return "\n".join(lines)

    def write(self, result: list, out: Path) -> None:
        (out / "table.txt").write_text(self.table(result) + "\n")
        write_json(out / "results.json", self.summary(result))
