"""Several excitation components: records, each with its own influence vector, scale and start time.

The effective load of a multi-support-free, multi-component excitation (Chopra, Dynamics of Structures,
section 13.1 and its three components of ground motion):

    f(t) = -M sum_c r_c a_c(t - t0_c)

with r_c the influence vector of component c (one value per DOF: 1 on the translations along its direction,
a lever arm or 1 on rotations for a rotational record) and a_c its record (m/s^2, rad/s^2 for a rotational
one), zero before its start t0_c and after its end.  Every record is resampled to the integration step from
its own t = 0 (linear interpolation, as a single record is); a start is a whole number of steps, so the
padding is exact.  The experiment keeps the first component as its ``motion`` and ``influence`` (one
record: exactly today's run) and the others as :class:`Component` values on the same grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hybridsim.coordinator.motion import GroundMotion, MotionError


@dataclass(frozen=True)
class Component:
    """One component on the run's grid t_k = k dt (zeros before its start and after its end)."""

    name: str
    influence: np.ndarray
    """r_c, one value per structure DOF"""
    acceleration: np.ndarray
    """a_c(t_k - t0_c) (m/s^2 or rad/s^2)"""
    start_s: float = 0.0
    unit: str = "m/s^2"
    """its record's unit: m/s^2, or rad/s^2 for a rotational component"""


def on_grid(records: Sequence[GroundMotion], starts: Sequence[float], dt: float,
            duration: float | None) -> list[np.ndarray]:
    """Each record (already on step ``dt`` from its own t = 0) placed at its start (s, a whole number of steps) on
    one grid of ``duration`` (s; default: to the latest end); MotionError naming what cannot be placed."""
    offsets = []
    for record, start in zip(records, starts):
        steps = round(start / dt)
        if abs(steps * dt - start) > 1e-9 * max(dt, start):
            raise MotionError(f"component {record.name!r} starts at {start:g} s, not a whole number of steps of "
                              f"{dt:g} s: give start_s = {steps * dt:g} (or {(steps + 1) * dt:g})")
        offsets.append(steps)
    last = max(k + r.acceleration.size - 1 for k, r in zip(offsets, records))
    if duration is not None:
        wanted = int(np.floor(duration / dt * (1 + 1e-12)))
        if wanted > last:
            raise MotionError(f"the latest component ends at {last * dt:g} s; cannot run {duration:g} s")
        last = wanted
    grids = []
    for k, record in zip(offsets, records):
        grid = np.zeros(last + 1)
        taken = record.acceleration[:max(last + 1 - k, 0)]
        grid[k:k + taken.size] = taken
        grids.append(grid)
    return grids


def dataset_labels(components: Sequence[Component]) -> dict[str, dict[str, list[str]]]:
    """The results file's ``ground_components`` labels (its columns, named as the components, and their units) when
    there are several."""
    if len(components) < 2:
        return {}
    return {"ground_components": {"dofs": [c.name for c in components], "units": [c.unit for c in components]}}


def peaks(components: Sequence[Component], dt: float) -> dict[str, dict[str, float]]:
    """Each component's peak |a_c| over the run (m/s^2 or rad/s^2), the time it occurs (s) and its start (s)."""
    out = {}
    for c in components:
        k = int(np.argmax(np.abs(c.acceleration)))
        out[c.name] = {"peak": float(abs(c.acceleration[k])), "unit": c.unit, "time_s": k * dt, "start_s": c.start_s}
    return out
