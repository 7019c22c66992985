"""Back-search: the specimen force at a trial displacement, looked up in what the lab has measured.

The nearly-complete delay compensation method drives the specimen ahead of
the numerical substructure, so the displacement a Newton iterate asks for
has usually been passed already within the step.  Two lookups over the
window of measured samples (y_m, f_m):

- ``nearest``: the sample whose y is closest to the target, ties to the
  latest; its force.
- ``interp``: the latest pair of consecutive samples whose y bracket the
  target, the force interpolated linearly at the target; ``nearest`` when
  no pair brackets it.

A pick says which data gave the force: ``("sample", m)`` or ``("pair", m)``
(samples m and m + 1), with m the index in the window.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

SearchMode = Literal["nearest", "interp"]
SEARCH_MODES: tuple[str, ...] = ("nearest", "interp")
Pick = tuple[str, int]


def nearest_sample(positions: np.ndarray, target: float) -> int:
    """Index of the sample with y closest to ``target`` (m), the latest one on ties."""
    distance = np.abs(positions - target)
    return int(positions.size - 1 - np.argmin(distance[::-1]))


def bracketing_pair(positions: np.ndarray, target: float) -> int | None:
    """The latest m with ``target`` between y_m and y_{m+1} (inclusive), or None."""
    offset = positions - target
    brackets = np.flatnonzero(offset[:-1] * offset[1:] <= 0.0)
    return int(brackets[-1]) if brackets.size else None


def search_force(positions: np.ndarray, forces: np.ndarray, target: float,
                 mode: SearchMode) -> tuple[float, Pick]:
    """The specimen force (N) for a trial displacement ``target`` (m), and the pick that gave it."""
    if mode == "interp":
        m = bracketing_pair(positions, target)
        if m is not None:
            y0, y1 = positions[m], positions[m + 1]
            if y1 == y0:
                return float(forces[m + 1]), ("pair", m)
            w = (target - y0) / (y1 - y0)
            return float(forces[m] + w * (forces[m + 1] - forces[m])), ("pair", m)
    s = nearest_sample(positions, target)
    return float(forces[s]), ("sample", s)
