"""The NARX study on the maRTHS benchmark (COMPENSATORS.md): El Centro at 40 %, nominal plant.

Cases (one compensator per actuator, the benchmark's loop of ``marths``):

- baselines: no compensation, RLS-AC as shipped;
- inverse compensation with a good and a poor delay estimate: good is the
  delay J1 measures on the uncompensated run (what a lab measures before the
  test), poor is half of it;
- NARX (measurement filtered by a 5th-order 6 Hz Butterworth, OLS unless a
  ridge gamma is given): 2nd order at three window lengths, orders 1, 2, 4 at
  L = 1024, 4th order with ridge gamma = 1, 1e-2, 1e-7, 1e-9, and 2nd order
  with each of the six second-order products of its taps added.

Every NARX case runs twice: as COMPENSATORS.md defines it, and with two
changes written into the name (suffix ``-fg``): the regressand is the command
through the same filter (``f``, the arrangement of RLS-AC, so the filter's
delay drops out of the inverse model) and the parameters are held while the
window's commands stay within ten sensor-noise deviations (``g``, so the 5 s
rest at the start of the record is not fitted).  ``-f`` and ``-g`` alone are
run on the 2nd-order, L = 1024 case to separate the two, and ``-g`` on the
1st order, which stays stable and shows what the one-sided filter does.

A run is unstable when a guard trips (``hybridsim.modules.experimental.guards``): the
command saturates the servo input (3.8 V), or the tracking error exceeds
twice the largest stroke the reference structure asks of that actuator
(a bounded response that is at most as large as the target cannot get
there).  Its criteria are then those of the samples before the stop.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from hybridsim.coordinator.problems.base import finite
from hybridsim.coordinator.problems.marths import data, loop, parts
from hybridsim.coordinator.problems.marths.evaluation import criteria
from hybridsim.modules.experimental.compensators.base import Compensator
from hybridsim.modules.experimental.compensators.kinds import build_compensator
from hybridsim.modules.experimental.compensators.narx import FILTER_CUTOFF_HZ, FILTER_ORDER, Terms
from hybridsim.modules.experimental.guards import GuardedCompensator, Limits, RunawayStopped

RECORD, SCALE = "elcentro", 0.4
WINDOWS = (128, 1024, 8192)
"""samples: short, the study's 1024, long (1/8 s, 1 s, 8 s)"""
ORDERS = (1, 2, 4)
RIDGES = (1.0, 1e-2, 1e-7, 1e-9)
"""gamma (mm^2) of the 4th-order ridge cases"""
PRODUCTS = tuple((p, q) for p in range(3) for q in range(p, 3))
"""the six second-order products x[n-p] x[n-q] of a 2nd-order model's taps"""
POOR_DELAY_FRACTION = 0.5
DIVERGENCE_STROKE_MULTIPLE = 2.0
ACTUATORS = ("actuator 1", "actuator 2")


@dataclass(frozen=True)
class NarxCase:
    """One NARX configuration; ``filter_command`` and ``gated`` are the study's two changes."""

    order: int
    window: int = 1024
    ridge: float = 0.0
    products: tuple[tuple[int, int], ...] = ()
    filter_command: bool = False
    gated: bool = False

    @property
    def terms(self) -> Terms:
        return Terms(self.order, self.products)

    def table(self) -> dict[str, Any]:
        """The compensator table of one actuator (``parts.narx_table``)."""
        return parts.narx_table(self.order, self.window, self.ridge, self.products, self.filter_command,
                                       self.gated)

    @property
    def name(self) -> str:
        name = f"narx{self.order}-L{self.window}"
        if self.ridge:
            name += f"-ridge{self.ridge:g}"
        for label in self.terms.labels()[self.order + 1:]:
            name += "+" + label.replace("*", "")
        suffix = ("f" if self.filter_command else "") + ("g" if self.gated else "")
        return f"{name}-{suffix}" if suffix else name

    def parameters(self, excitation_mm: float) -> dict[str, Any]:
        return {"order": self.order, "window": self.window, "solver": "ridge" if self.ridge else "ols",
                "ridge": self.ridge, "products": [list(p) for p in self.products], "terms": self.terms.labels(),
                "measurement_filter": {"order": FILTER_ORDER, "cutoff_hz": FILTER_CUTOFF_HZ},
                "filter_command": self.filter_command,
                "excitation_mm": excitation_mm if self.gated else 0.0}


@dataclass(frozen=True)
class Case:
    """A row of the study: ``kind`` none | rls | inverse | narx."""

    name: str
    kind: str
    group: str
    narx: NarxCase | None = None
    delay_fraction: float = 1.0
    """inverse: the assumed delay as a fraction of the measured one"""


def _narx_cases(variant: dict[str, bool]) -> list[NarxCase]:
    base = [NarxCase(2, window) for window in WINDOWS]
    base += [NarxCase(order) for order in ORDERS if order != 2]
    base += [NarxCase(4, ridge=gamma) for gamma in RIDGES]
    base += [NarxCase(2, products=(pair,)) for pair in PRODUCTS]
    return [replace(c, **variant) for c in base]


def _group(narx: NarxCase) -> str:
    if narx.products:
        return "nonlinear terms"
    if narx.ridge:
        return "ridge"
    return "window" if narx.order == 2 else "order"


def cases() -> list[Case]:
    """The study's rows, in table order."""
    rows = [Case("none", "none", "baseline"), Case("rls", "rls", "baseline"),
            Case("ic-good", "inverse", "inverse compensation", delay_fraction=1.0),
            Case("ic-poor", "inverse", "inverse compensation", delay_fraction=POOR_DELAY_FRACTION)]
    for variant in ({}, {"filter_command": True, "gated": True}):
        rows += [Case(n.name, "narx", _group(n), n) for n in _narx_cases(variant)]
    apart = [NarxCase(2, filter_command=True), NarxCase(2, gated=True), NarxCase(1, gated=True)]
    rows += [Case(n.name, "narx", "filter and gate apart", n) for n in apart]
    return rows


@dataclass(frozen=True)
class Setting:
    """What every case shares: the run, the measured delays, the guards' limits, the gate."""

    spec: loop.RunSpec
    limits: tuple[Limits, Limits]
    excitation_mm: float
    delays_s: tuple[float, float] | None = None
    """J1 of the uncompensated run (s), per actuator: the inverse compensation's good estimate"""


def setting(duration: float | None = None) -> Setting:
    """The study's run (the first ``duration`` s of the record if given), the guards' limits and the gate."""
    spec = loop.RunSpec(record=RECORD, scale=SCALE, compensator="none", plant="nominal", duration=duration)
    strokes = _reference_strokes(spec)
    limits = tuple(Limits(tracking=DIVERGENCE_STROKE_MULTIPLE * float(np.max(np.abs(strokes[:, i]))), **saturation)
                   for i, saturation in enumerate(parts.guard_tables()))
    return Setting(spec, limits, parts.narx_excitation_mm())  # type: ignore[arg-type]


def _reference_strokes(spec: loop.RunSpec) -> np.ndarray:
    """The target strokes (mm) the reference structure would ask for: coupler of (xRef, rRef)."""
    ref = loop.reference_response(spec.record, spec.scale, spec.ticks())
    return parts.coupler().strokes(ref[:, 0] / 1000.0, ref[:, 1]).T * 1000.0


def compensators(case: Case, s: Setting) -> tuple[list[Compensator], dict[str, Any]]:
    """The two compensators of ``case`` and its parameters for the JSON."""
    if case.kind in ("none", "rls"):
        parameters = {} if case.kind == "none" else {
            "forgetting": data.constants()["controller_rlsac"]["forgetting_factor"],
            "initial": "rls_initial_parameters.json (as shipped)"}
        return [build_compensator(t) for t in parts.compensator_tables(case.kind)], parameters
    if case.kind == "inverse":
        if s.delays_s is None:
            raise ValueError("inverse compensation needs the delays measured without compensation (Setting.delays_s)")
        delays = [case.delay_fraction * d for d in s.delays_s]
        pair = [build_compensator(t) for t in parts.compensator_tables("inverse", delays)]
        return pair, {"delay_s": delays, "delay_fraction_of_measured": case.delay_fraction,
                      "a0": [float(c.parameters()[0]) for c in pair], "a1": [float(c.parameters()[1]) for c in pair]}
    if case.kind == "narx" and case.narx is not None:
        return [build_compensator(case.narx.table()) for _ in range(2)], case.narx.parameters(s.excitation_mm)
    raise ValueError(f"case {case.name}: unknown kind {case.kind!r}")


class ParameterHistory(Compensator):
    """``inner`` with its parameters logged after every control sample (samples x parameters)."""

    def __init__(self, inner: Compensator, samples: int) -> None:
        self.inner = inner
        self.name = inner.name
        self.log = np.full((samples, inner.parameters().size), np.nan)
        self.samples = 0

    def command(self, target: float, measured: float) -> float:
        command = self.inner.command(target, measured)
        if self.samples < self.log.shape[0]:
            self.log[self.samples] = self.inner.parameters()
        self.samples += 1
        return command

    def parameters(self) -> np.ndarray:
        return self.inner.parameters()

    def state(self) -> dict[str, Any]:
        return {"samples": self.samples, "inner": self.inner.state()}

    def set_state(self, state: dict[str, Any]) -> None:
        self.samples = int(state["samples"])
        self.inner.set_state(state["inner"])


@dataclass
class CaseResult:
    case: Case
    parameters: dict[str, Any]
    unstable: bool
    reason: str | None
    criteria: dict[str, list[float | None]]
    parameter_history: list[np.ndarray]
    """per actuator: samples x parameters (NaN after a stop)"""
    strokes: dict[str, np.ndarray] = field(repr=False, default_factory=dict)
    """target_strokes, measured_strokes (mm) of the samples run"""
    wall_s: float = 0.0


def run_case(case: Case, s: Setting) -> CaseResult:
    """Run one case; a guard that trips marks it unstable and its criteria cover the samples before the stop."""
    start = time.perf_counter()
    inner, parameters = compensators(case, s)
    n = s.spec.ticks()
    logged = [ParameterHistory(c, n) for c in inner]
    guarded = [GuardedCompensator(c, limits, label, parts.DT)
               for c, limits, label in zip(logged, s.limits, ACTUATORS)]
    try:
        history = loop.run(s.spec, guarded)
        stop: RunawayStopped | None = None
    except RunawayStopped as exc:
        stop = exc
        before = replace(s.spec, duration=(exc.sample - 1) * parts.DT)  # ticks = exc.sample
        history = loop.run(before, compensators(case, s)[0]) if exc.sample >= 2 else None
    parameters["peak_abs"] = [np.nanmax(np.abs(c.log), axis=0, initial=0.0).tolist() for c in logged]
    parameters["final"] = [c.inner.parameters().tolist() for c in logged]
    with np.errstate(divide="ignore", invalid="ignore"):  # a stop in the rest period: zero reference std
        j = finite(criteria(history, parts.SAMPLE_RATE)) if history is not None else _empty_criteria()
    strokes = {} if history is None else {"target_strokes": history.target_strokes,
                                          "measured_strokes": history.measured_strokes}
    return CaseResult(case, finite(parameters), stop is not None, None if stop is None else stop.reason, j,
                      [c.log for c in logged], strokes, time.perf_counter() - start)


def _empty_criteria() -> dict[str, list[None]]:
    sizes = {"J8": 4, "J10": 4}
    return {f"J{i}": [None] * sizes.get(f"J{i}", 2) for i in range(1, 11)}


@dataclass
class Study:
    setting: Setting
    results: list[CaseResult]


def run_study(names: Iterable[str] | None = None, duration: float | None = None,
              progress: Callable[[CaseResult], None] | None = None) -> Study:
    """Run the study's cases (all, or those ``names``), the first ``duration`` s of the record only if given.

    The uncompensated case runs first in any case: its J1 is the inverse compensation's good estimate.
    """
    everything = cases()
    wanted = [c.name for c in everything] if names is None else list(names)
    unknown = sorted(set(wanted) - {c.name for c in everything})
    if unknown:
        raise KeyError(f"unknown case(s) {', '.join(unknown)}; the study has {', '.join(c.name for c in everything)}")
    s = setting(duration)
    uncompensated = run_case(everything[0], s)
    if uncompensated.unstable:
        raise RuntimeError(f"the uncompensated run stopped ({uncompensated.reason}): no delay to estimate")
    s = replace(s, delays_s=tuple(j1 / 1000.0 for j1 in uncompensated.criteria["J1"]))
    results = []
    for case in everything:
        if case.name not in wanted:
            continue
        results.append(uncompensated if case.kind == "none" else run_case(case, s))
        if progress is not None:
            progress(results[-1])
    return Study(s, results)


def best_narx(study: Study) -> CaseResult | None:
    """The stable NARX case with the lowest mean J2 over the two actuators."""
    stable = [r for r in study.results if r.case.kind == "narx" and not r.unstable]
    return min(stable, key=lambda r: float(np.mean(r.criteria["J2"])), default=None)


def study_json(study: Study) -> dict[str, Any]:
    """``{"cases": {name: {"compensator", "parameters", "unstable", "reason", "J"}}}``."""
    return {"cases": {r.case.name: {"compensator": r.case.kind, "parameters": r.parameters, "unstable": r.unstable,
                                    "reason": r.reason, "J": r.criteria} for r in study.results}}
