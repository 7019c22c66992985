"""Per actuator over one trial: what a lab reads off before a test besides its limits.

The peak command stroke (m) and command velocity (m/s, the command's change over the control sample), the
hydraulic flow that velocity implies, Q = A v (m^3/s, A the piston area when declared), the RMS tracking error
(measured stroke against the target stroke, % of the target's RMS: the benchmark's J2 form) and the peak tracking
error (m).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def figures(commands: np.ndarray, target: np.ndarray, measured: np.ndarray, sample_rate: float,
            piston_area: Sequence[float] | None) -> list[dict[str, float | None]]:
    """One dict per actuator (columns of the samples x actuators arrays, m; ``sample_rate`` in Hz)."""
    velocity = np.max(np.abs(np.diff(commands, axis=0)), axis=0) * sample_rate
    error = measured - target
    with np.errstate(invalid="ignore"):  # a target still at rest: NaN, as the sheet shows it, and no warning
        rms = 100 * np.sqrt(np.mean(error ** 2, axis=0) / np.mean(target ** 2, axis=0))
    return [{"stroke": float(np.max(np.abs(commands[:, a]))), "velocity": float(velocity[a]),
             "flow": None if piston_area is None else float(velocity[a] * piston_area[a]),
             "tracking_rms_percent": float(rms[a]), "tracking_peak": float(np.max(np.abs(error[:, a])))}
            for a in range(commands.shape[1])]
