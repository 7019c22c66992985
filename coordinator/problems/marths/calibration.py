"""Offline calibration of the RLS-AC initial parameters theta0, P0 (SPEC §16).

Open loop: the numerical substructure alone (feedback inputs tied to 0) is
driven by the ground motion; its interface motion becomes target strokes,
which go to the plant uncompensated (command = target) with the benchmark's
sensor noise.  Per run and actuator, with regressor rows
G_k = [xm(k), xm(k-1), xm(k-2), xm(k-3)] and targets y_k = xt(k) in metres
(k = 3 .. N-1): P0 = (G^T G)^-1, theta0 = P0 G^T y.  The shipped parameters
are the plain means of theta0 and of P0 over 3 records x 3 scales x
(1 nominal + 10 uncertain plants) = 99 runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from hybridsim.coordinator.problems.executors import Resources, execute
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


def calibration_runs(trials: int = 10) -> list[CalibrationRun]:
    """The runs of §16: case c = 0..8 over (El Centro, Kobe, Morgan) x (0.2, 0.4, 0.6); per case the nominal
    plant (noise seed 123), then uncertain trial t = 1..``trials`` with plant seed 1000 + 100 c + t and noise
    seed 7000 + that plant seed."""
    runs = []
    cases = [(r, s) for r in data.RECORDS for s in SCALES]
    for c, (record, scale) in enumerate(cases):
        runs.append(CalibrationRun(c, record, scale, "nominal", None, 123))
        for t in range(1, trials + 1):
            seed = 1000 + 100 * c + t
            runs.append(CalibrationRun(c, record, scale, "uncertain", seed, 7000 + seed))
    return runs


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


def calibrate(trials: int = 10, workers: int = 1) -> Calibration:
    """All runs of :func:`calibration_runs`, serially or on a process pool of ``workers``."""
    runs = calibration_runs(trials)
    fits = execute(fit, [(r,) for r in runs], Resources(workers))
    return Calibration(runs, np.array([f[0] for f in fits]), np.array([f[1] for f in fits]))


def shipped() -> tuple[np.ndarray, np.ndarray]:
    """(theta0, P0) as shipped with the benchmark: shapes (2, 4) and (2, 4, 4)."""
    parameters = data.rls_initial_parameters()
    return (np.array([parameters["theta0_1"], parameters["theta0_2"]]), np.array([parameters["P0_1"], parameters["P0_2"]]))
