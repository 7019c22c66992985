"""The metrics of the implicit RTHS benchmark (specification section 10), all at the specimen DOF e.

- response error against the exact reference, over the whole case:
  peak = max|d - d_ref| / max|d_ref|, RMS = rms(d - d_ref) / rms(d_ref),
  peak value = (max|d| - max|d_ref|) / max|d_ref| (forced cases only);
- single-step error (linear specimens): d*_{i+1} solves the equivalent-force
  equation exactly with the true specimen from the method's own state
  (d_i, v_i, a_i); first step |d_1 - d*_1| / |d*_1 - d_0|, over the run
  sqrt(sum (d_{i+1} - d*_{i+1})^2) / sqrt(sum (d*_{i+1} - d_i)^2);
- iterations per step and compute time per iteration (medians, us);
- new-method diagnostics: window-edge picks, targets outside the measured
  range, safeguard closures, steps that hit k_max.

All errors are in per cent.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from hybridsim.coordinator.problems.implicit_rths.methods import RunHistory, StepReport
from hybridsim.coordinator.problems.implicit_rths.methods.equivalent_force import EquivalentForceNewmark
from hybridsim.coordinator.problems.implicit_rths.cases import Case, CaseStudy, Run


@dataclass(frozen=True)
class ResponseErrors:
    peak_pct: float
    rms_pct: float
    peak_value_pct: float


def response_errors(d: np.ndarray, d_ref: np.ndarray) -> ResponseErrors:
    """Peak, RMS and peak-value errors (%) of a displacement history against the reference (same samples)."""
    d, d_ref = np.asarray(d, float), np.asarray(d_ref, float)
    peak_ref = np.max(np.abs(d_ref))
    with np.errstate(over="ignore", invalid="ignore"):
        peak = np.max(np.abs(d - d_ref)) / peak_ref
        rms = np.sqrt(np.mean((d - d_ref) ** 2)) / np.sqrt(np.mean(d_ref**2))
        peak_value = (np.max(np.abs(d)) - peak_ref) / peak_ref
    return ResponseErrors(100.0 * float(peak), 100.0 * float(rms), 100.0 * float(peak_value))


def exact_step_targets(case: Case, history: RunHistory) -> np.ndarray:
    """d*_{i+1} (m), i = 0..N-1: the exact solution of each step from the run's own state (linear specimen)."""
    s = case.structure
    newmark = EquivalentForceNewmark(s.mass, s.damping, case.dt)
    true_stiffness = case.new_specimen().initial_stiffness
    k_true_inv = np.linalg.inv(newmark.k_pd + s.stiffness_with_specimen(true_stiffness))
    return np.array([k_true_inv @ newmark.equivalent_force(case.loads[i + 1], history.displacement[i],
                                                           history.velocity[i], history.acceleration[i])
                     for i in range(case.steps)])


def single_step_errors(d: np.ndarray, d_star: np.ndarray) -> tuple[float, float]:
    """(first-step, whole-run) single-step errors (%) from d_i (N+1 values) and d*_{i+1} (N values)."""
    d, d_star = np.asarray(d, float), np.asarray(d_star, float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        first = abs(d[1] - d_star[0]) / abs(d_star[0] - d[0])
        overall = np.sqrt(np.sum((d[1:] - d_star) ** 2)) / np.sqrt(np.sum((d_star - d[:-1]) ** 2))
    return 100.0 * float(first), 100.0 * float(overall)


@dataclass(frozen=True)
class Timing:
    """Median compute times (us) of a step's first, inner and last iterations, of a step, and per iteration;
    the worst iteration and the worst step (us) against the real-time budgets dt and Dt."""

    first_us: float
    inner_us: float | None
    """None when no step has more than two iterations"""
    last_us: float
    step_us: float
    per_iteration_us: float
    """median over steps of (step time / iterations)"""
    worst_iteration_us: float
    worst_step_us: float
    late_iterations: int
    """iterations that took longer than one control sample dt"""
    late_steps: int
    """steps whose iterations together took longer than one integration step Dt"""


def timing(reports: tuple[StepReport, ...], sample_period: float, dt: float) -> Timing:
    """Timing statistics of step reports against the budgets ``sample_period`` dt and ``dt`` Dt (s)."""
    times = [r.compute_ns for r in reports if r.compute_ns]
    inner = [t for ts in times for t in ts[1:-1]]
    return Timing(first_us=float(np.median([ts[0] for ts in times])) / 1e3,
                  inner_us=float(np.median(inner)) / 1e3 if inner else None,
                  last_us=float(np.median([ts[-1] for ts in times])) / 1e3,
                  step_us=float(np.median([sum(ts) for ts in times])) / 1e3,
                  per_iteration_us=float(np.median([sum(ts) / len(ts) for ts in times])) / 1e3,
                  worst_iteration_us=max(max(ts) for ts in times) / 1e3,
                  worst_step_us=max(sum(ts) for ts in times) / 1e3,
                  late_iterations=sum(t > sample_period * 1e9 for ts in times for t in ts),
                  late_steps=sum(sum(ts) > dt * 1e9 for ts in times))


@dataclass(frozen=True)
class RunMetrics:
    """Everything the study reports about one run."""

    method: str
    rho_e: float
    variant: str
    iterations_mean: float
    iterations_max: int
    iterations_histogram: dict[int, int]
    errors: ResponseErrors
    first_step_error_pct: float | None
    """None for a nonlinear specimen"""
    step_error_pct: float | None
    timing: Timing
    edge_picks: int
    outside_range: int
    safeguard_steps: int
    nonconverged_steps: int


def run_metrics(case: Case, reference: RunHistory, run: Run) -> RunMetrics:
    e = case.structure.specimen_dof
    history = run.history
    d = history.displacement[:, e]
    first = overall = None
    if case.linear:
        first, overall = single_step_errors(d, exact_step_targets(case, history)[:, e])
    iterations = history.iterations
    reports = history.reports
    return RunMetrics(
        method=run.variant.method, rho_e=run.variant.rho_e, variant=run.variant.label,
        iterations_mean=float(iterations.mean()), iterations_max=int(iterations.max()),
        iterations_histogram=dict(sorted(Counter(int(k) for k in iterations).items())),
        errors=response_errors(d, reference.displacement[:, e]),
        first_step_error_pct=first, step_error_pct=overall, timing=timing(run.timing_reports, case.sample_period, case.dt),
        edge_picks=sum(r.edge_pick for r in reports), outside_range=sum(r.outside_range for r in reports),
        safeguard_steps=sum(r.safeguard for r in reports), nonconverged_steps=sum(not r.converged for r in reports))


def case_metrics(study: CaseStudy) -> tuple[list[RunMetrics], list[RunMetrics]]:
    """(standard runs, sensitivity runs) of a case study."""
    return ([run_metrics(study.case, study.reference, r) for r in study.runs],
            [run_metrics(study.case, study.reference, r) for r in study.sensitivity])
