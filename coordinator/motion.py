"""Ground motions: readers (two-column CSV, PEER NGA .AT2), resampling, scaling.

Accelerations are in m/s^2 inside hybridsim.  PEER .AT2 files are in g and
are converted on reading (g = 9.80665 m/s^2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

STANDARD_GRAVITY = 9.80665
"""m/s^2"""
MAX_STEPS = 100_000_000
"""the longest history a run may ask for (about 2.4 GB per DOF of response arrays)"""


class MotionError(ValueError):
    """A ground-motion file or request that cannot be used; the message says why."""


@dataclass(frozen=True)
class GroundMotion:
    """A uniformly sampled ground-acceleration history: a_g(t_k), t_k = k dt."""

    dt: float
    """sample step (s)"""
    acceleration: np.ndarray
    """m/s^2"""
    name: str = ""

    def __post_init__(self) -> None:
        if not (self.dt > 0 and np.isfinite(self.dt)):
            raise MotionError(f"ground motion {self.name!r}: sample step must be positive, got {self.dt}")
        acc = np.asarray(self.acceleration, float)
        if acc.ndim != 1 or acc.size < 2:
            raise MotionError(f"ground motion {self.name!r}: needs at least two samples")
        if not np.all(np.isfinite(acc)):
            raise MotionError(f"ground motion {self.name!r}: has non-finite samples")
        object.__setattr__(self, "acceleration", acc)

    @property
    def duration(self) -> float:
        """Time of the last sample (s)."""
        return self.dt * (self.acceleration.size - 1)

    @property
    def time(self) -> np.ndarray:
        return self.dt * np.arange(self.acceleration.size)

    @property
    def pga(self) -> float:
        """Peak ground acceleration (m/s^2)."""
        return float(np.max(np.abs(self.acceleration)))

    def scaled(self, factor: float) -> "GroundMotion":
        return GroundMotion(self.dt, factor * self.acceleration, self.name)

    def scaled_to_pga(self, pga: float) -> "GroundMotion":
        """Scale so that the peak absolute acceleration is ``pga`` (m/s^2)."""
        if self.pga == 0:
            raise MotionError(f"ground motion {self.name!r} is all zeros; it cannot be scaled to a PGA")
        return self.scaled(pga / self.pga)

    def resampled(self, dt: float, duration: float | None = None) -> "GroundMotion":
        """Linear interpolation onto t_k = k dt, k = 0..floor(duration/dt) (default: the whole record).

        Refining (dt smaller than the record's step) is exact for the
        piecewise-linear record; coarsening aliases and is refused beyond a
        step that skips samples, since it silently discards content.
        """
        if not (dt > 0 and np.isfinite(dt)):
            raise MotionError(f"integration step must be positive, got {dt}")
        end = self.duration if duration is None else duration
        if end > self.duration * (1 + 1e-12):
            raise MotionError(f"ground motion {self.name!r} lasts {self.duration:g} s; cannot run {end:g} s")
        if dt > self.dt * (1 + 1e-12):
            raise MotionError(
                f"integration step {dt:g} s is larger than the record's step {self.dt:g} s of {self.name!r}: "
                "it would skip samples; use a step no larger than the record's"
            )
        n = int(np.floor(end / dt * (1 + 1e-12))) + 1
        if n > MAX_STEPS:
            raise MotionError(f"{end:g} s at a step of {dt:g} s is {n:,} steps, more than {MAX_STEPS:,}; "
                              "use a larger step or a shorter duration")
        t = dt * np.arange(n)
        return GroundMotion(dt, np.interp(t, self.time, self.acceleration), self.name)

    def at(self, step: int) -> float:
        return float(self.acceleration[step])


ACCELERATION_UNITS = {"m/s^2": 1.0, "m/s2": 1.0, "g": STANDARD_GRAVITY, "rad/s^2": 1.0}
"""the units a CSV record's acceleration may be in -> the factor to m/s^2 (rad/s^2: a rotational record, as is)"""


def read_csv(path: str | Path, *, units: str = "m/s^2") -> GroundMotion:
    """Read a two-column CSV ``time, acceleration`` with an optional header line.

    The time column must be uniformly spaced (to 1e-6 relative).  ``units``
    is "m/s^2" or "g".
    """
    path = Path(path)
    lines = [(i, ln) for i, ln in enumerate(_read_text(path).splitlines(), start=1)
             if ln.strip() and not ln.lstrip().startswith("#")]
    try:
        _numbers(lines[0][1])
    except ValueError:
        lines = lines[1:]  # a header line
    except IndexError:
        raise MotionError(f"{path}: the file is empty") from None
    rows = []
    for number, line in lines:
        try:
            rows.append(_numbers(line))
        except ValueError:
            raise MotionError(f"{path}: line {number} is not two numbers (time in s, acceleration)") from None
    data = np.array(rows) if len({len(r) for r in rows}) == 1 else np.zeros((len(rows), 0))
    if data.ndim != 2 or data.shape[1] != 2:
        raise MotionError(f"{path}: expected two columns (time in s, acceleration), got {data.shape[-1]}")
    t, acc = data[:, 0], data[:, 1]
    steps = np.diff(t)
    if steps.size == 0:
        raise MotionError(f"{path}: needs at least two rows (time, acceleration)")
    if np.any(steps <= 0):
        raise MotionError(f"{path}: time column must increase")
    dt = float(np.mean(steps))
    if np.max(np.abs(steps - dt)) > 1e-6 * dt:
        raise MotionError(f"{path}: time column is not uniformly spaced")
    if abs(t[0]) > 1e-9 * dt:
        raise MotionError(f"{path}: time column must start at 0, starts at {t[0]}")
    return GroundMotion(dt, acc * _unit_factor(units, path), path.stem)


def read_at2(path: str | Path) -> GroundMotion:
    """Read a PEER NGA ``.AT2`` file (acceleration in g; NPTS and DT in the fourth line, as NGA-West2 writes it,
    ``NPTS=  5590, DT=   .0050 SEC``, or as the NGA-West1 files, ``5590    0.0050    NPTS, DT``)."""
    path = Path(path)
    lines = _read_text(path).splitlines()
    if len(lines) < 5:
        raise MotionError(f"{path}: too short for a PEER .AT2 file (4 header lines, then data)")
    header = lines[3].upper()
    fields = _at2_header(header)
    if fields is None:
        raise MotionError(f"{path}: line 4 must give 'NPTS= n, DT= dt' (or 'n dt NPTS, DT') as PEER .AT2 files do")
    values = []
    for number, line in enumerate(lines[4:], start=5):
        try:
            values += [float(v) for v in line.split()]
        except ValueError:
            raise MotionError(f"{path}: line {number} holds a value that is not a number") from None
    n, dt = fields
    if len(values) != n:
        raise MotionError(f"{path}: header says NPTS={n} but the file holds {len(values)} values")
    return GroundMotion(dt, np.array(values) * STANDARD_GRAVITY, path.stem)


def _at2_header(line: str) -> tuple[int, float] | None:
    """(NPTS, DT in s) of an .AT2 file's fourth line (upper case), in either PEER layout; None if neither."""
    npts, dt = re.search(r"NPTS\s*=\s*(\d+)", line), re.search(r"DT\s*=\s*([0-9.E+-]+)", line)
    if npts and dt:
        return int(npts.group(1)), float(dt.group(1))
    west1 = re.match(r"\s*(\d+)[\s,]+([0-9.E+-]+)\s+NPTS", line)
    return (int(west1.group(1)), float(west1.group(2))) if west1 else None


MAX_MOTION_BYTES = 32 * 2**20
"""largest ground-motion file read (a CSV of about a million samples; reading takes some 20 times its size)"""


def _read_text(path: Path) -> str:
    """The text of a ground-motion file no larger than MAX_MOTION_BYTES."""
    try:
        size = path.stat().st_size
        if size > MAX_MOTION_BYTES:
            raise MotionError(f"{path} is {size / 2**20:.0f} MiB, more than the {MAX_MOTION_BYTES // 2**20} MiB a "
                              "ground motion may have; trim or resample the record")
        return path.read_text(errors="replace")
    except OSError as exc:
        raise MotionError(f"cannot read ground motion {path}: {exc.strerror}") from None


def read_motion(path: str | Path, *, units: str = "m/s^2") -> GroundMotion:
    """Read a ground motion by file type: ``.AT2`` (PEER, in g) or CSV."""
    return read_at2(path) if Path(path).suffix.lower() == ".at2" else read_csv(path, units=units)


def _numbers(line: str) -> list[float]:
    return [float(v) for v in re.split(r"[,\s;]+", line.strip())]


def _unit_factor(units: str, path: Path) -> float:
    try:
        return ACCELERATION_UNITS[units]
    except KeyError:
        raise MotionError(f"{path}: units must be one of {sorted(ACCELERATION_UNITS)}, got {units!r}") from None
