"""The implicit RTHS study's outputs: the comparison table, the JSON, the plots (matplotlib Agg)."""

from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.problems.base import finite, pyplot, save_figure
from hybridsim.coordinator.problems.implicit_rths.cases import CaseStudy
from hybridsim.coordinator.problems.implicit_rths.metrics import RunMetrics

COLOURS = {"shing": "C0", "efcm": "C1", "efcm-deadbeat": "C2", "ncdc-nearest": "C3", "ncdc-interp": "C4"}
PLOT_RANGE = 1.5
"""displacement axes span +-1.5 times the reference peak; a run that grows beyond it leaves the axes"""
ERROR_AXIS_RUNS_BELOW_PCT = 100.0
"""the error axis is scaled to the runs with a peak error below this (%); the others leave the axes"""


# -- JSON ---------------------------------------------------------------------------------------------

def run_json(case_linear: bool, m: RunMetrics) -> dict[str, Any]:
    """One run as the issue specifies it (non-finite numbers become null)."""
    out: dict[str, Any] = {"method": m.method, "rho_e": int(m.rho_e), "iterations_mean": m.iterations_mean,
                           "iterations_max": m.iterations_max, "peak_error_pct": finite(m.errors.peak_pct),
                           "rms_error_pct": finite(m.errors.rms_pct)}
    if case_linear:
        out["first_step_error_pct"] = finite(m.first_step_error_pct)
    out["us_per_iteration"] = m.timing.per_iteration_us
    return out


def study_json(studies: list[CaseStudy], metrics: dict[str, tuple[list[RunMetrics], list[RunMetrics]]]
               ) -> dict[str, Any]:
    """``{"cases": {key: [run, ...]}, "sensitivity": {key: [run + "variant", ...]}}``."""
    cases = {s.case.key: [run_json(s.case.linear, m) for m in metrics[s.case.key][0]] for s in studies}
    sensitivity = {s.case.key: [{**run_json(s.case.linear, m), "variant": m.variant}
                                for m in metrics[s.case.key][1]] for s in studies if metrics[s.case.key][1]}
    out: dict[str, Any] = {"cases": cases}
    if sensitivity:
        out["sensitivity"] = sensitivity
    return out


def full_json(studies: list[CaseStudy], metrics: dict[str, tuple[list[RunMetrics], list[RunMetrics]]]
              ) -> dict[str, Any]:
    """Every metric of every run, with the case parameters, for the results file."""
    def one(m: RunMetrics) -> dict[str, Any]:
        d = asdict(m)
        d["iterations_histogram"] = {str(k): v for k, v in m.iterations_histogram.items()}
        return finite(d)

    return {s.case.key: {"name": s.case.name, "dt_s": s.case.dt, "samples_per_step": s.case.samples_per_step,
                         "steps": s.case.steps, "actuator_bandwidth_rad_s": finite(s.case.bandwidth),
                         "reference_peak_m": float(np.max(np.abs(s.reference.displacement[:, 0]))),
                         "runs": [one(m) for m in metrics[s.case.key][0]],
                         "sensitivity": [one(m) for m in metrics[s.case.key][1]]}
            for s in studies}


# -- table --------------------------------------------------------------------------------------------

def _pct(x: float | None) -> str:
    if x is None:
        return "-"
    if not math.isfinite(x):
        return "nan"
    return f"{x:.3g}" if abs(x) < 1e4 else f"{x:.1e}"


def format_table(study: CaseStudy, standard: list[RunMetrics], sensitivity: list[RunMetrics]) -> str:
    """The comparison table of one case (errors vs the exact reference, iterations, time per iteration)."""
    c = study.case
    actuator = "ideal" if math.isinf(c.bandwidth) else f"{c.bandwidth:g}/({c.bandwidth:g}+s)"
    peak_ref = float(np.max(np.abs(study.reference.displacement[:, c.structure.specimen_dof])))
    lines = [f"{c.key} {c.name}: Dt = {c.dt:g} s, dt = {c.sample_period:g} s, {c.steps} steps, actuator {actuator}, "
             f"reference peak {1e3 * peak_ref:.4g} mm",
             f"{'method':<14}{'rho_E':>5} {'variant':<14}{'it mean':>8}{'it max':>7}{'peak %':>10}{'rms %':>10}"
             f"{'peakval %':>10}{'step1 %':>10}{'step %':>10}{'us/it':>7}  diagnostics"]
    for m in standard + sensitivity:
        diag = "" if not m.method.startswith("ncdc") else (
            f"outside {m.outside_range}, edge {m.edge_picks}, safeguard {m.safeguard_steps}, "
            f"k_max {m.nonconverged_steps}")
        lines.append(
            f"{m.method:<14}{m.rho_e:>5g} {m.variant:<14}{m.iterations_mean:>8.2f}{m.iterations_max:>7d}"
            f"{_pct(m.errors.peak_pct):>10}{_pct(m.errors.rms_pct):>10}"
            f"{_pct(m.errors.peak_value_pct if c.forced else None):>10}{_pct(m.first_step_error_pct):>10}"
            f"{_pct(m.step_error_pct):>10}{m.timing.per_iteration_us:>7.1f}  {diag}")
    return "\n".join(lines)


def format_timing(study: CaseStudy, standard: list[RunMetrics]) -> str:
    """Median compute time (us) of the first, inner and last iteration and per step, with ratios to Shing,
    and the worst iteration and step against the budgets (one dt per iteration for Shing and EFCM, one Dt
    per step for the new method)."""
    c = study.case
    base = {m.rho_e: m.timing.step_us for m in standard if m.method == "shing"}
    lines = [f"{c.key} compute time (us; medians over steps, runs interleaved in one process; "
             f"budgets dt = {1e6 * c.sample_period:g} us, Dt = {1e6 * c.dt:g} us)",
             f"{'method':<14}{'rho_E':>5}{'first':>8}{'inner':>8}{'last':>8}{'per step':>10}{'per it':>8}"
             f"{'step/shing':>12}{'worst it':>10}{'worst step':>12}{'late it':>9}{'late steps':>12}"]
    for m in standard:
        t = m.timing
        inner = "-" if t.inner_us is None else f"{t.inner_us:.1f}"
        lines.append(f"{m.method:<14}{m.rho_e:>5g}{t.first_us:>8.1f}{inner:>8}{t.last_us:>8.1f}{t.step_us:>10.1f}"
                     f"{t.per_iteration_us:>8.1f}{t.step_us / base[m.rho_e]:>12.2f}{t.worst_iteration_us:>10.0f}"
                     f"{t.worst_step_us:>12.0f}{t.late_iterations:>9d}{t.late_steps:>12d}")
    return "\n".join(lines)


# -- plots --------------------------------------------------------------------------------------------

def write_plots(study: CaseStudy, standard: list[RunMetrics], out_dir: Path) -> list[Path]:
    """Displacement and error histories, iterations per step, and (bilinear case) the hysteresis loops."""
    plt = pyplot()
    c = study.case
    e = c.structure.specimen_dof
    t = c.dt * np.arange(c.steps + 1)
    d_ref = study.reference.displacement[:, e]
    by_rho = {rho: [(r, m) for r, m in zip(study.runs, standard) if m.rho_e == rho]
              for rho in sorted({m.rho_e for m in standard}, reverse=True)}
    written = []

    fig, axes = plt.subplots(2, len(by_rho), figsize=(7 * len(by_rho), 7), sharex=True, squeeze=False)
    for col, (rho, pairs) in enumerate(by_rho.items()):
        top, bottom = axes[0, col], axes[1, col]
        top.plot(t, 1e3 * d_ref, "k-", lw=2.0, label="exact reference")
        for r, m in pairs:
            d = r.history.displacement[:, e]
            label = f"{m.method} (peak error {_pct(m.errors.peak_pct)} %)"
            top.plot(t, 1e3 * d, lw=1.0, color=COLOURS[m.method], label=label)
            bottom.plot(t, 1e3 * (d - d_ref), lw=1.0, color=COLOURS[m.method], label=label)
        peak_ref = 1e3 * float(np.max(np.abs(d_ref)))
        top.set_ylim(-PLOT_RANGE * peak_ref, PLOT_RANGE * peak_ref)
        bounded = [m.errors.peak_pct for _, m in pairs if m.errors.peak_pct < ERROR_AXIS_RUNS_BELOW_PCT]
        error_limit = 1.1e-2 * peak_ref * max(bounded) if bounded and max(bounded) > 0 else peak_ref
        bottom.set_ylim(-error_limit, error_limit)
        top.set_title(f"{c.key}: first-story (specimen DOF) displacement, rho_E = {rho:g}")
        top.set_ylabel("displacement (mm)")
        bottom.set_ylabel("error d - d_ref (mm)")
        bottom.set_xlabel("time (s)")
        top.legend(fontsize=7, loc="upper right")
    written.append(save_figure(fig, out_dir / f"{c.key}_displacement.png"))

    fig, axes = plt.subplots(1, len(by_rho), figsize=(7 * len(by_rho), 3.5), squeeze=False)
    for col, (rho, pairs) in enumerate(by_rho.items()):
        ax = axes[0, col]
        for r, m in pairs:
            ax.step(t[1:], r.history.iterations, where="post", lw=0.8, color=COLOURS[m.method],
                    label=f"{m.method} (mean {m.iterations_mean:.2f})")
        ax.set(title=f"{c.key}: iterations per step, rho_E = {rho:g}", xlabel="time (s)", ylabel="iterations")
        ax.legend(fontsize=7)
    written.append(save_figure(fig, out_dir / f"{c.key}_iterations.png"))

    if not c.linear:
        fig, axes = plt.subplots(1, len(by_rho), figsize=(7 * len(by_rho), 5.5), squeeze=False)
        for col, (rho, pairs) in enumerate(by_rho.items()):
            ax = axes[0, col]
            ax.plot(1e3 * d_ref, study.reference.specimen_force, "k-", lw=2.5, label="exact reference (step ends)")
            for r, m in pairs:
                ax.plot(1e3 * r.positions, r.forces, lw=0.6, color=COLOURS[m.method],
                        label=f"{m.method} (measured, every sample)")
            ax.set(title=f"{c.key}: specimen force-displacement, rho_E = {rho:g}",
                   xlabel="specimen displacement (mm)", ylabel="specimen force (N)")
            ax.legend(fontsize=7)
        written.append(save_figure(fig, out_dir / f"{c.key}_hysteresis.png"))
    return written
