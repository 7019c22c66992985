"""The maRTHS benchmark data shipped in ``coordinator/data/marths`` (MIT, see its licence file).

Readers only: every number here comes from the data files; what the numbers
mean is in the benchmark specification (SPEC.md of the benchmark, cited by
section in the docstrings).  SI units (N, m, kg, s, rad) unless a name says
mm or V.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "marths"
RECORDS = ("elcentro", "kobe", "morgan")


@cache
def constants() -> dict[str, Any]:
    """``benchmark_constants.json``: every scalar constant of the benchmark."""
    return json.loads((DATA_DIR / "benchmark_constants.json").read_text())


def _matrix_csv(name: str) -> np.ndarray:
    with open(DATA_DIR / name, newline="") as handle:
        return np.array([[float(v) for v in row] for row in csv.reader(handle) if row])


@cache
def reference_matrices() -> tuple[np.ndarray, np.ndarray]:
    """(K, M) of the 29-DOF reference frame in SAP2000 equation order (§4)."""
    stiffness, mass = _matrix_csv("K_matrix.csv"), _matrix_csv("M_matrix.csv")
    stiffness.setflags(write=False)
    mass.setflags(write=False)
    return stiffness, mass


@cache
def lateral_dofs() -> tuple[int, ...]:
    """0-based indices of the DOFs in the Ux column of ``joint_dof.csv`` (the influence vector, §4)."""
    with open(DATA_DIR / "joint_dof.csv", newline="") as handle:
        ux = {int(row["Ux"]) for row in csv.DictReader(handle)}
    return tuple(sorted(d - 1 for d in ux if d > 0))


@dataclass(frozen=True)
class Record:
    """An unscaled ground-acceleration record as distributed: time stamps (s) and accelerations (m/s^2)."""

    name: str
    time: np.ndarray
    acceleration: np.ndarray

    @property
    def end(self) -> float:
        return float(self.time[-1])

    def ticks(self, sample_rate: float) -> int:
        """N = floor(t_end fs) + 1 samples at ``sample_rate`` (Hz) (§2)."""
        return math.floor(self.end * sample_rate) + 1

    def sampled(self, scale: float, sample_rate: float) -> np.ndarray:
        """ag(t_k) = scale * linear interpolation of the record at t_k = k/fs, k = 0..N-1 (§3)."""
        t = np.arange(self.ticks(sample_rate)) / sample_rate
        return scale * np.interp(t, self.time, self.acceleration)


@cache
def record(name: str) -> Record:
    """One of ``RECORDS`` (columns time_s, accel_m_s2)."""
    if name not in RECORDS:
        raise KeyError(f"unknown maRTHS record {name!r}; the benchmark ships {', '.join(RECORDS)}")
    file = constants()["ground_motion"]["records"][name]["file"]
    with open(DATA_DIR / file, newline="") as handle:
        rows = [(float(r["time_s"]), float(r["accel_m_s2"])) for r in csv.DictReader(handle)]
    data = np.array(rows)
    return Record(name, data[:, 0].copy(), data[:, 1].copy())


@cache
def nominal_plant_state_space() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A, B, C) of the shipped 8-state nominal plant, mm -> mm, rad/s (§8.1); D = 0."""
    data = json.loads((DATA_DIR / "nominal_plant_ss.json").read_text())
    if np.any(np.asarray(data["D"], float)) or data["Ts"] != 0:
        raise ValueError("nominal_plant_ss.json: expected a continuous plant with D = 0")
    return tuple(np.asarray(data[k], float) for k in ("A", "B", "C"))  # type: ignore[return-value]


@cache
def rls_initial_parameters() -> dict[str, Any]:
    """``rls_initial_parameters.json``: theta0_i (4 taps) and P0_i (4x4) per actuator (§11.2)."""
    return json.loads((DATA_DIR / "rls_initial_parameters.json").read_text())


def complex_of(pair: list[float]) -> complex:
    """A complex number written as ``[real, imag]`` in the JSON files."""
    return complex(pair[0], pair[1])
