"""Offline calibration of the RLS-AC initial parameters theta0, P0 (SPEC §16).

Open loop: the numerical substructure alone (feedback inputs tied to 0) is
driven by the ground motion; its interface motion becomes target strokes,
which go to the plant uncompensated (command = target) with the benchmark's
sensor noise.  Per run and actuator, with regressor rows
G_k = [xm(k), xm(k-1), xm(k-2), xm(k-3)] and targets y_k = xt(k) in metres
(k = 3 .. N-1): P0 = (G^T G)^-1, theta0 = P0 G^T y.  The shipped parameters
are the plain means of theta0 and of P0 over 3 records x 3 scales x
(1 nominal + 10 uncertain plants) = 99 runs: a campaign (:class:`Fits`, ``[campaign] problem =
"marths-calibration"``, one row per run with its theta0) on any executor of the campaign machinery.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.coordinator.campaign.grid import Run, expand
from hybridsim.coordinator.campaign.runner import run_campaign
from hybridsim.coordinator.campaign.subjects.base import write_outcome
from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.problems.executors import Resources, executor_for
from hybridsim.coordinator.problems.marths import data, parts
from hybridsim.coordinator.problems.marths.loop import ground_acceleration
from hybridsim.coordinator.problems.marths.structure import THETA_CONTROLLED, X_FLOOR1, NewmarkMap, numerical_substructure
from hybridsim.modules.plant.sensors import SensorNoise

SCALES = (0.2, 0.4, 0.6)
TAPS = 4


@dataclass(frozen=True)
class CalibrationRun:
    """One open-loop run: record, scale, plant and the seeds of §16."""

    case: int
    record: str
    scale: float
    plant: str
    plant_seed: int | None
    noise_seed: int


def campaign_runs(trials: int = 10) -> list[Run]:
    """The runs of §16 as a campaign's: every record and scale, seeds 0..``trials`` (:func:`run_of`)."""
    return expand({"record": list(data.RECORDS), "scale": list(SCALES)}, trials + 1)


def run_of(run: Run) -> CalibrationRun:
    """A campaign run of §16: case c of (El Centro, Kobe, Morgan) x (0.2, 0.4, 0.6); seed 0 the nominal plant
    (noise seed 123), seed t >= 1 the uncertain plant of seed 1000 + 100 c + t, noise seed 7000 + that plant seed."""
    values = dict(run.values + run.drawn)
    extra = sorted(set(values) - {"record", "scale"})
    if extra:
        raise UsageError(f"campaign run {run.run_id}: {extra[0]} is not a setting of a calibration run; give "
                         "[campaign.grid] record and scale only (SPEC §16)")
    if set(values) != {"record", "scale"} or values["record"] not in data.RECORDS or values["scale"] not in SCALES:
        raise UsageError(f"campaign run {run.run_id}: a calibration run is a record of {', '.join(data.RECORDS)} "
                         f"at a scale of {', '.join(map(str, SCALES))} (SPEC §16): give [campaign.grid] record and "
                         "scale from those")
    case = data.RECORDS.index(values["record"]) * len(SCALES) + SCALES.index(values["scale"])
    if run.seed == 0:
        return CalibrationRun(case, values["record"], values["scale"], "nominal", None, 123)
    seed = 1000 + 100 * case + run.seed
    return CalibrationRun(case, values["record"], values["scale"], "uncertain", seed, 7000 + seed)


def calibration_runs(trials: int = 10) -> list[CalibrationRun]:
    """The 9 (1 + ``trials``) runs of §16, case by case (:func:`run_of`)."""
    return [run_of(run) for run in campaign_runs(trials)]


@cache
def open_loop_targets(record: str, scale: float) -> np.ndarray:
    """Target strokes (N x 2, m) of the numerical substructure without feedback (read-only)."""
    ticks = data.record(record).ticks(parts.SAMPLE_RATE)
    u = NewmarkMap.of(numerical_substructure(), parts.DT).displacements(
        ground_acceleration(record, scale, ticks))
    strokes = parts.coupler().strokes(u[:, X_FLOOR1], -u[:, THETA_CONTROLLED]).T
    strokes.setflags(write=False)
    return strokes


def measured_strokes(run: CalibrationRun) -> np.ndarray:
    """The plant's measured strokes (N x 2, m) under the uncompensated targets, noise included."""
    targets_mm = open_loop_targets(run.record, run.scale) * 1000.0
    positions = parts.actuators(run.plant, run.plant_seed).response(targets_mm)
    noise = SensorNoise(parts.noise_sigma_mm(), run.noise_seed).sequence(positions.shape[0])
    return (positions + noise) / 1000.0


def fit(run: CalibrationRun) -> tuple[np.ndarray, np.ndarray]:
    """(theta0, P0) of one run: shapes (2, 4) and (2, 4, 4), regressors in metres."""
    measured, targets = measured_strokes(run), open_loop_targets(run.record, run.scale)
    n = measured.shape[0]
    thetas, ps = [], []
    for i in range(2):
        g = np.column_stack([measured[TAPS - 1 - j: n - j, i] for j in range(TAPS)])
        y = targets[TAPS - 1:, i]
        p = np.linalg.inv(g.T @ g)
        thetas.append(p @ (g.T @ y))
        ps.append(p)
    return np.array(thetas), np.array(ps)


@dataclass
class Calibration:
    runs: list[CalibrationRun]
    thetas: np.ndarray
    """(runs, 2, 4)"""
    ps: np.ndarray
    """(runs, 2, 4, 4)"""

    @property
    def theta0(self) -> np.ndarray:
        """Plain mean of theta0 over the runs (2 x 4)."""
        return self.thetas.mean(axis=0)

    @property
    def p0(self) -> np.ndarray:
        """Plain mean of P0 over the runs (2 x 4 x 4), not the inverse of a mean G^T G."""
        return self.ps.mean(axis=0)

    def standard_error(self) -> np.ndarray | None:
        """Standard error of the mean of theta0 from the trial-to-trial scatter (2 x 4); None without trials.

        The scatter is the pooled standard deviation of the uncertain runs
        about their case mean (records and scales differ systematically).
        """
        cases = np.array([r.case for r in self.runs])
        uncertain = np.array([r.plant == "uncertain" for r in self.runs])
        groups = [self.thetas[(cases == c) & uncertain] for c in np.unique(cases[uncertain])]
        if sum(len(g) for g in groups) <= len(groups):
            return None
        deviations = np.concatenate([g - g.mean(axis=0) for g in groups])
        pooled = np.sqrt((deviations**2).sum(axis=0) / (deviations.shape[0] - len(groups)))
        return pooled / np.sqrt(len(self.runs))

    def parameters(self) -> dict[str, list]:
        """In the layout of ``rls_initial_parameters.json``."""
        return {"theta0_1": self.theta0[0].tolist(), "theta0_2": self.theta0[1].tolist(),
                "P0_1": self.p0[0].tolist(), "P0_2": self.p0[1].tolist()}


@dataclass(frozen=True)
class Fits:
    """The calibration's runs as a campaign's subject (``[campaign] problem = "marths-calibration"``): a run's
    file holds its theta0 (the table's ``evaluation.theta0.<actuator>.<tap>``) and P0; a fit is made afresh."""

    start_method = "fork"
    """a fit starts no child process: forked workers inherit the imports"""

    def check(self, runs: Sequence[Run]) -> None:
        for run in runs:
            run_of(run)

    def make(self, run: Run, path: Path) -> dict[str, Any]:
        theta, p = fit(run_of(run))
        return write_outcome(path, {"evaluation": {"theta0": theta.tolist()}, "P0": p.tolist()})

    def resume(self, path: Path) -> None:
        return None


def calibrate(trials: int = 10, workers: int = 1) -> Calibration:
    """All runs of :func:`campaign_runs` as a campaign, serially or on a process pool of ``workers``."""
    runs, resources = campaign_runs(trials), Resources(workers)
    with tempfile.TemporaryDirectory(prefix="marths-calibration-") as folder:
        rows = run_campaign(Fits(), runs, folder, executor_for(resources, len(runs)), resources)
    thetas = np.array([row.summary["evaluation"]["theta0"] for row in rows])
    return Calibration([run_of(row.run) for row in rows], thetas, np.array([row.summary["P0"] for row in rows]))


def shipped() -> tuple[np.ndarray, np.ndarray]:
    """(theta0, P0) as shipped with the benchmark: shapes (2, 4) and (2, 4, 4)."""
    parameters = data.rls_initial_parameters()
    return (np.array([parameters["theta0_1"], parameters["theta0_2"]]), np.array([parameters["P0_1"], parameters["P0_2"]]))
