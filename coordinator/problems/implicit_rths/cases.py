"""The implicit RTHS benchmark (Wang, Liu, Wu, Xu 2015): structures, cases, method variants, the study.

Cases (specification section 9):

| key | structure, specimen | Dt, dt (n) | actuator | load |
|---|---|---|---|---|
| S1 | SDOF, linear | 0.04 s, 4 ms (10) | ideal | free vibration from d_0 = 0.01 m, 1 s |
| S2 | SDOF, linear | 0.01 s, 1 ms (10) | 700/(700+s) | as S1 |
| M1 | 5-story, linear | 0.01 s, 1 ms (10) | ideal | El Centro NS 0.2 g, whole record |
| M2 | 5-story, bilinear | 0.01 s, 1 ms (10) | 700/(700+s) | as M1 |
| M3 | 5-story, linear | 0.01 s, 1 ms (10) | 700/(700+s) | as M1 |

Every case runs Shing, EFCM (the paper's K_I = 400 1/s and the deadbeat
K_I dt = 1), and the new method with nearest and interpolated back-search,
each with rho_E = 1 and rho_E = 0; S2 and M2 add the sensitivity variants.
Every parameter comes from the specification; none is tuned.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.problems.implicit_rths.methods import (
    EfcmMethod, ImplicitRthsMethod, NcdcMethod, RunHistory, ShingMethod, SplitStructure, StepReport, SpecimenLab,
    exact_reference, run)
from hybridsim.coordinator.motion import GroundMotion, read_csv
from hybridsim.modules.plant.first_order import FirstOrderActuator
from hybridsim.modules.plant.specimens import BilinearSpecimen, LinearSpecimen, Specimen

DATA = Path(__file__).resolve().parents[2] / "data" / "marths"
ELCENTRO = DATA / "ground_motion_elcentro.csv"
TARGET_PGA = 0.2 * 9.81
"""m/s^2: 0.2 g as the specification scales it"""
SHORT_DURATION = 10.0
"""s: the CI variant of the building cases"""
ACTUATOR_BANDWIDTH = 700.0
"""omega_a of the actuator 700/(700+s) (rad/s)"""

CASE_KEYS = ("S1", "S2", "M1", "M2", "M3")
METHODS = ("shing", "efcm", "efcm-deadbeat", "ncdc-nearest", "ncdc-interp")
RHO_E_VALUES = (1.0, 0.0)
SENSITIVITY_CASES = ("S2", "M2")


# -- structures ---------------------------------------------------------------------------------------

def sdof_structure() -> SplitStructure:
    """M = 1 kg, K_N = 2e3 N/m, linear specimen K_E = 2e3 N/m, undamped: omega = sqrt(4000) rad/s."""
    return SplitStructure(np.eye(1), np.zeros((1, 1)), np.array([[2e3]]), specimen_dof=0, specimen_stiffness=2e3)


STORY_MASS = 100.0
"""kg"""
STORY_STIFFNESS = 40e3
"""N/m"""


def five_story_structure() -> SplitStructure:
    """Shear building, 100 kg and 40 kN/m per story, undamped; half of the bottom story is the specimen."""
    n = 5
    k = np.zeros((n, n))
    for story in range(n):  # story j joins floor j-1 (ground for j = 0) and floor j
        k[story, story] += STORY_STIFFNESS
        if story > 0:
            k[story - 1, story - 1] += STORY_STIFFNESS
            k[story - 1, story] -= STORY_STIFFNESS
            k[story, story - 1] -= STORY_STIFFNESS
    half = STORY_STIFFNESS / 2.0
    k[0, 0] -= half  # the experimental half of the first-story column
    return SplitStructure(STORY_MASS * np.eye(n), np.zeros((n, n)), k, specimen_dof=0, specimen_stiffness=half)


# -- ground motion ------------------------------------------------------------------------------------

def elcentro_acceleration(dt: float, duration: float | None = None) -> np.ndarray:
    """El Centro NS as section 9.1 processes it (m/s^2 at t_i = i dt).

    Drop the samples before the last zero that precedes the first non-zero
    value (file time 4.98 s) and start the clock there; scale to a PGA of
    0.2 x 9.81 m/s^2; resample by linear interpolation.
    """
    record = read_csv(ELCENTRO)
    first_motion = int(np.flatnonzero(record.acceleration)[0])
    trimmed = GroundMotion(record.dt, record.acceleration[first_motion - 1:], "elcentro_ns")
    return trimmed.scaled_to_pga(TARGET_PGA).resampled(dt, duration).acceleration


# -- cases --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One benchmark case: structure, specimen law, clocks, actuator, load and initial state."""

    key: str
    name: str
    structure: SplitStructure
    new_specimen: Callable[[], Specimen]
    dt: float
    """integration step Dt (s)"""
    samples_per_step: int
    """n = Dt / dt"""
    bandwidth: float
    """actuator omega_a (rad/s); inf for the ideal actuator"""
    loads: np.ndarray
    """F_i (N), one row per step i = 0..N"""
    displacement0: np.ndarray
    velocity0: np.ndarray
    forced: bool
    """an earthquake (True) or free vibration (False)"""
    linear: bool
    """the specimen is linear (single-step errors are defined)"""

    @property
    def steps(self) -> int:
        return self.loads.shape[0] - 1

    @property
    def sample_period(self) -> float:
        return self.dt / self.samples_per_step

    def lab(self) -> SpecimenLab:
        """A fresh virtual lab: the actuator at rest at d_0,e and a new specimen."""
        y0 = float(self.displacement0[self.structure.specimen_dof])
        return SpecimenLab(FirstOrderActuator(self.bandwidth, self.sample_period, y0), self.new_specimen())

    def reference(self) -> RunHistory:
        """The exact (monolithic, actuator-free) solution."""
        return exact_reference(self.structure, self.new_specimen(), self.dt, self.loads, self.displacement0,
                               self.velocity0)


def _free_vibration(key: str, name: str, dt: float, bandwidth: float) -> Case:
    steps = round(1.0 / dt)
    return Case(key, name, sdof_structure(), partial(LinearSpecimen, 2e3), dt, 10, bandwidth,
                np.zeros((steps + 1, 1)), np.array([0.01]), np.zeros(1), forced=False, linear=True)


def _earthquake(key: str, name: str, specimen: Callable[[], Specimen], bandwidth: float, *, linear: bool,
                duration: float | None) -> Case:
    structure = five_story_structure()
    dt = 0.01
    ground = elcentro_acceleration(dt, duration)
    loads = np.outer(ground, -structure.mass @ np.ones(structure.ndof))
    zero = np.zeros(structure.ndof)
    return Case(key, name, structure, specimen, dt, 10, bandwidth, loads, zero, zero.copy(), forced=True,
                linear=linear)


def build_case(key: str, *, short: bool = False) -> Case:
    """The case ``key`` (S1, S2, M1, M2, M3); ``short`` keeps the first 10 s of the building cases."""
    duration = SHORT_DURATION if short else None
    linear_building = partial(LinearSpecimen, 20e3)
    bilinear_building = partial(BilinearSpecimen, 20e3, 0.008, 0.115)  # k0 (N/m), u_y (m), b
    builders: dict[str, Callable[[], Case]] = {
        "S1": lambda: _free_vibration("S1", "S1_sdof_large_step", 0.04, math.inf),
        "S2": lambda: _free_vibration("S2", "S2_sdof_delay", 0.01, ACTUATOR_BANDWIDTH),
        "M1": lambda: _earthquake("M1", "M1_five_story_cost", linear_building, math.inf, linear=True,
                                  duration=duration),
        "M2": lambda: _earthquake("M2", "M2_five_story_elcentro_bilinear", bilinear_building, ACTUATOR_BANDWIDTH,
                                  linear=False, duration=duration),
        "M3": lambda: _earthquake("M3", "M3_five_story_elcentro_linear_delay", linear_building, ACTUATOR_BANDWIDTH,
                                  linear=True, duration=duration),
    }
    try:
        return builders[key]()
    except KeyError:
        raise ValueError(f"unknown case {key!r}; the cases are {', '.join(CASE_KEYS)}") from None


# -- method variants ----------------------------------------------------------------------------------

_BUILDERS: dict[str, Callable[..., ImplicitRthsMethod]] = {
    "shing": ShingMethod,
    "efcm": EfcmMethod,
    "efcm-deadbeat": EfcmMethod.deadbeat,
    "ncdc-nearest": partial(NcdcMethod, search="nearest"),
    "ncdc-interp": partial(NcdcMethod, search="interp"),
}


@dataclass(frozen=True)
class Variant:
    """A method, its rho_E, and the options that set a sensitivity variant apart from the default."""

    method: str
    rho_e: float
    label: str = "default"
    options: Mapping[str, Any] = field(default_factory=dict)

    def build(self, case: Case) -> ImplicitRthsMethod:
        return _BUILDERS[self.method](case.structure, case.dt, case.samples_per_step, rho_e=self.rho_e,
                                      **self.options)


def standard_variants() -> list[Variant]:
    """Every method with rho_E = 1 and with rho_E = 0."""
    return [Variant(method, rho) for rho in RHO_E_VALUES for method in METHODS]


def sensitivity_variants() -> list[Variant]:
    """Section 9's sensitivity runs, rho_E = 1 (the defaults are in :func:`standard_variants`)."""
    variants = [Variant(m, 1.0, f"dtau={k}dt", {"over_prediction_samples": k})
                for k in (1, 4) for m in ("ncdc-nearest", "ncdc-interp")]
    variants += [Variant(m, 1.0, "window=2steps", {"window_steps": 2}) for m in ("ncdc-nearest", "ncdc-interp")]
    variants.append(Variant("efcm", 1.0, "no-lead", {"lead": False}))
    variants.append(Variant("shing", 1.0, "order=2", {"order": 2}))
    return variants


@dataclass(frozen=True)
class Run:
    """A method variant's run on a case, with the lab's sample-by-sample record."""

    variant: Variant
    history: RunHistory
    positions: np.ndarray
    """y_m of every control sample (m)"""
    forces: np.ndarray
    """f_m of every control sample (N)"""
    timing_reports: tuple[StepReport, ...]
    """the step reports of every timing round (the responses of all rounds are identical)"""


def run_variant(case: Case, variant: Variant) -> Run:
    lab = case.lab()
    method = variant.build(case)
    history = run(method, lab, case.loads, case.displacement0, case.velocity0)
    return Run(variant, history, np.array(lab.positions), np.array(lab.forces), history.reports)


@dataclass(frozen=True)
class CaseStudy:
    """The reference, the standard runs and the sensitivity runs of one case."""

    case: Case
    reference: RunHistory
    runs: tuple[Run, ...]
    sensitivity: tuple[Run, ...]


def study_case(case: Case, *, sensitivity: bool = True, rounds: int = 1) -> CaseStudy:
    """Run every variant on ``case``; with ``rounds`` > 1 the whole set is repeated, interleaved, for timing.

    The responses are deterministic, so every round gives the same numbers;
    the step reports of all rounds are pooled for the timing medians.
    """
    variants = standard_variants()
    extra = sensitivity_variants() if sensitivity and case.key in SENSITIVITY_CASES else []
    everything = variants + extra
    rounds_of_runs = [[run_variant(case, v) for v in everything] for _ in range(max(1, rounds))]
    merged = [_merge_rounds([r[i] for r in rounds_of_runs]) for i in range(len(everything))]
    return CaseStudy(case, case.reference(), tuple(merged[:len(variants)]), tuple(merged[len(variants):]))


def _merge_rounds(runs: list[Run]) -> Run:
    """The first round's run with the step reports of every round."""
    return replace(runs[0], timing_reports=tuple(rep for r in runs for rep in r.history.reports))


TIMING_ROUNDS = {"M1": 3}
"""interleaved repetitions of the whole variant set, for the compute-time comparison (section 10)"""


def run_study(keys: list[str], *, short: bool = False, sensitivity: bool = True) -> list[CaseStudy]:
    """Every variant on every case in ``keys``, in that order."""
    return [study_case(build_case(k, short=short), sensitivity=sensitivity, rounds=TIMING_ROUNDS.get(k, 1))
            for k in keys]
