"""Bring a site's actuators to given strokes under its gate (``hybridsim site experimental --config SITE --move-to
STROKES``): what the operator runs when the site refuses to start because its actuators stand away from the
test's start, or a restore because they stand away from the checkpoint's.

The control reads where the actuators are (its read request: nothing moves), then each control sample commands
the next point of a straight ramp, ``gate.move_speed`` x dt further (m), paced at the site's control sample on
the wall clock, every command through the site's gate (stroke, increment and velocity from the measured stroke,
force, the site's hold); it ends when every actuator is commanded at its stroke.  A target beyond an actuator's
runaway guard (its ``command`` bound or servo ``volts``, on the site's strokes from ``gate.start``, loop units mm)
is refused before anything is sent: the straight ramp between two points within those bounds stays within them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.modules.experimental.config import CONFIG, actuator_tables, per_actuator, site_setup
from hybridsim.modules.experimental.controls import OpenContext, open_control
from hybridsim.modules.experimental.guards import Limits
from hybridsim.modules.experimental.site import MM_PER_M, build_site
from hybridsim.wire.contract import ModuleError


def move_to(config: Mapping[str, Any], strokes: Sequence[float], base_dir: Path | None = None) -> list[str]:
    """Ramp the actuators of the site ``config`` describes to ``strokes`` (m: one per actuator, or one for all);
    one line per actuator saying from where to where it went, in how many samples."""
    CONFIG.check(config)
    speed = config.get("gate", {}).get("move_speed")
    if speed is None:
        raise ModuleError("experimental module: --move-to ramps at the lab's gate.move_speed (m/s): declare it in "
                          "the site's gate table, e.g. gate = { move_speed = 0.002 }")
    dt = float(config["dt"])
    setup = site_setup(config)
    try:
        target = np.broadcast_to(np.asarray(strokes, float), (setup.actuators,)).copy()
    except ValueError:
        raise ModuleError(f"experimental module: --move-to gives one stroke for every actuator or one per actuator "
                          f"({setup.actuators}), not {len(strokes)}") from None
    refusal = _guard_refusal(config, target)
    if refusal:
        raise ModuleError(f"experimental module: --move-to {refusal}; nothing was sent")
    with contextlib.ExitStack() as stack:
        table = config.get("setup")
        control = open_control(config["backend"], OpenContext(
            dt, stack, base_dir, table if isinstance(table, Mapping) else None, False, 1, False, setup.actuators))
        gate = build_site(config, control, record=False).backend
        gate.start_tolerance, gate.start = np.inf, None  # wherever they are, to the control's own strokes
        beyond = np.flatnonzero(~(np.abs(target) <= gate.stroke))
        if beyond.size:
            i = int(beyond[0])
            raise ModuleError(f"experimental module: --move-to {target[i] * 1e3:.4g} mm is beyond actuator {i + 1}'s "
                              f"stroke limit {gate.stroke[i] * 1e3:.4g} mm; nothing was sent")
        try:
            start, _ = gate.read()
            samples = _ramp(gate, start, target, float(speed) * dt, dt)
        finally:
            gate.close()
    return [f"actuator {i + 1}: {start[i] * 1e3:.4g} mm -> {target[i] * 1e3:.4g} mm in {samples} samples "
            f"({samples * dt:.3g} s at {float(speed) * 1e3:.4g} mm/s)" for i in range(target.size)]


def _guard_refusal(config: Mapping[str, Any], target: np.ndarray) -> str | None:
    """Why ``target`` (m, the control's own strokes) is beyond an actuator's runaway guard (None: it is not): its
    ``command`` bound or servo ``volts`` on the command in the site's loop units (mm from ``gate.start``)."""
    start = per_actuator(config.get("gate", {}), "start", 0.0, target.size)
    for i, table in enumerate(actuator_tables(config, target.size)):
        if "guard" not in table:
            continue
        limits = Limits(**{key: float(value) for key, value in table["guard"].items()})
        command = float(target[i] - start[min(i, start.size - 1)]) * MM_PER_M
        volts = limits.volts_per_unit * command + limits.volts_offset
        if not abs(command) <= limits.command:
            return (f"{target[i] * 1e3:.4g} mm is beyond actuator {i + 1}'s runaway guard: command {command:.4g} "
                    f"beyond its bound {limits.command:.4g}")
        if not abs(volts) <= limits.volts:
            return (f"{target[i] * 1e3:.4g} mm is beyond actuator {i + 1}'s runaway guard: servo input {volts:.3f} V "
                    f"beyond +-{limits.volts:g} V")
    return None


def _ramp(gate: Any, start: np.ndarray, target: np.ndarray, step: float, dt: float) -> int:
    """Command the ramp from ``start`` to ``target`` (m), at most ``step`` (m) a sample, one sample every ``dt``
    (s) of the wall clock; the samples it took."""
    position, samples = start.copy(), 0
    due = time.monotonic()
    while np.any(position != target):
        position = np.where(np.abs(target - position) <= step, target, position + step * np.sign(target - position))
        due += dt
        time.sleep(max(0.0, due - time.monotonic()))
        gate.command(position, position)
        samples += 1
        if gate.tripped is not None:
            raise gate.trip()
    return samples
