"""Intensity and response measures of a campaign's runs, read from their results files.

- ``Sa(T)``: the pseudo-spectral acceleration omega^2 max|u| (g) of a linear oscillator of period T and damping
  ratio zeta (5 %) under the run's whole ground motion (its first component, as scaled and resampled for the run,
  from the experiment its file keeps: a stopped run's too), u'' + 2 zeta omega u' + omega^2 u = -a_g, integrated exactly for an a_g linear between
  samples (Nigam and Jennings, "Calculation of response spectra from strong-motion earthquake records", BSSA
  59(2), 1969: the recurrence x_{k+1} = A x_k + B0 a_k + B1 a_{k+1}, here with A, B0, B1 from one matrix
  exponential, C. F. Van Loan, IEEE TAC 23(3), 1978).  T is a number, or each run's first natural period T1
  (the pre-test's, ``natural_periods_s``).
- the peak interstorey drift ratio: max over t and storeys i of |u_i(t) - u_{i-1}(t)| / h_i, u_0 = 0, of the
  floors' displacements relative to the ground (the coordinator's DOFs), bottom floor first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np
from scipy.linalg import expm

from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.motion import STANDARD_GRAVITY
from hybridsim.coordinator.recorder.read import read_attributes
from hybridsim.coordinator.simulation import stored_experiment

FIRST_PERIOD = "T1"
PERIOD = "period_s"
"""the column of the period (s) each run's Sa was taken at"""


@dataclass(frozen=True)
class Measures:
    """What to measure in each run's file: Sa at ``period`` (s, or ``T1``; None: none) with damping ``zeta``,
    and the drift of the floors ``drift`` (DOF names, bottom up) of storey heights ``heights`` (m; one for all)."""

    period: float | str | None = None
    drift: tuple[str, ...] = ()
    heights: tuple[float, ...] = ()
    zeta: float = 0.05

    def __post_init__(self) -> None:
        if isinstance(self.period, str) and self.period != FIRST_PERIOD or isinstance(self.period, float) \
                and not self.period > 0:
            raise UsageError(f"--sa-period: give a period in s (> 0) or {FIRST_PERIOD}, not {self.period}")
        if self.drift and len(self.heights) not in (1, len(self.drift)):
            raise UsageError(f"--storey-height: give one height (m) or one per --drift floor ({len(self.drift)}), "
                             f"not {len(self.heights)}")
        if any(not h > 0 for h in self.heights):
            raise UsageError(f"--storey-height: give heights in m (> 0), not {list(self.heights)}")

    @property
    def intensity(self) -> str:
        return f"Sa({self.period if self.period == FIRST_PERIOD else f'{self.period:g} s'}, {100 * self.zeta:g} %) (g)"

    response = "peak interstorey drift ratio"


def spectral_acceleration(acceleration: Sequence[float], dt: float, period: float, zeta: float = 0.05) -> float:
    """omega^2 max_k |u_k| (m/s^2) of the oscillator under ``acceleration`` (m/s^2, samples dt s apart, at rest
    before the first)."""
    omega = 2 * np.pi / period
    block = np.zeros((4, 4))
    block[:2, :2] = dt * np.array([[0.0, 1.0], [-omega ** 2, -2 * zeta * omega]])
    block[1, 2] = -dt  # the load -a_g(t) = -(a_k + s (a_{k+1} - a_k)), s = (t - t_k) / dt
    block[2, 3] = 1.0
    exact = expm(block)
    a_matrix, start, ramp = exact[:2, :2], exact[:2, 2], exact[:2, 3]
    a = np.asarray(acceleration, float)
    x, peak = np.zeros(2), 0.0
    for k in range(a.size - 1):
        x = a_matrix @ x + start * a[k] + ramp * (a[k + 1] - a[k])
        peak = max(peak, abs(x[0]))
    return omega ** 2 * peak


def peak_drift(displacement: np.ndarray, heights: Sequence[float]) -> float:
    """max |u_i - u_{i-1}| / h_i over time and storeys; ``displacement`` is (steps, floors), bottom up (m)."""
    u = np.column_stack([np.zeros(len(displacement)), displacement])
    return float(np.max(np.abs(np.diff(u, axis=1)) / np.broadcast_to(heights, (u.shape[1] - 1,))))


def measure(path: Path, measures: Measures) -> dict[str, float]:
    """The run's measures, named by :attr:`Measures.intensity` and :attr:`Measures.response`."""
    out, attrs = {}, read_attributes(path)
    asked = "--sa-period" if measures.period is not None else "--drift" if measures.drift else None
    if asked and "experiment_table" not in attrs:
        raise UsageError(f"{asked}: {path.name} is not an experiment's results file (a problem's run, such as a "
                         "maRTHS trial, keeps no excitation or structure to measure): its campaign's intensity is "
                         "the table's scale; leave out --sa-period and --drift")
    if measures.period is not None:
        period = json.loads(attrs["natural_periods_s"])[0] if measures.period == FIRST_PERIOD else measures.period
        experiment = stored_experiment(attrs)
        out[measures.intensity] = spectral_acceleration(experiment.motion.acceleration, experiment.dt, period,
                                                        measures.zeta) / STANDARD_GRAVITY
        out[PERIOD] = period
    if measures.drift:
        dofs = json.loads(attrs["dofs"])
        missing = [d for d in measures.drift if d not in dofs]
        if missing:
            raise UsageError(f"--drift: {path.name} has no DOF {missing[0]!r}; name floors of {', '.join(dofs)}")
        with h5py.File(path, "r") as f:
            out[measures.response] = peak_drift(f["displacement"][:, [dofs.index(d) for d in measures.drift]],
                                                measures.heights)
    return out


def measured(rows: dict[str, np.ndarray], measures: Measures, folder: Path) -> dict[str, np.ndarray]:
    """``rows`` with a column per measure, read from each run's results file (its path as the table holds it,
    or its name in ``folder``, the table's)."""
    values = []
    for output in rows["output"]:
        path = Path(str(output))
        path = path if path.is_file() else folder / path.name
        if not path.is_file():
            raise UsageError(f"the run file {output} is in neither its place nor {folder}; keep the runs' files "
                             "beside the table")
        values.append(measure(path, measures))
    names = list(values[0]) if values else []
    return {**rows, **{name: np.array([v[name] for v in values]) for name in names}}
