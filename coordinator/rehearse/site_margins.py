"""The delay and gain margins of a virtual-lab site: the loop's stability under an added actuator delay or gain.

Stability is the loop's, not the record's: each margin run is the experiment with its excitation replaced by one
step of the record's peak acceleration (a velocity kick of PGA dt, the record's own scale) followed by
``margin_duration`` s of free vibration, and the run is stable when it completes (no gate, guard or divergence
stops it) and its free vibration decays at every interface DOF of the site (the peak |x| of the run's last quarter
below that of its second: :func:`hybridsim.coordinator.rehearse.delayed_sdof.decays`).  The knobs are the lab's
own keys (hybridsim.modules.plant.knobs): every actuator's ``delay`` plus the added delay (s), its ``gain`` times
the gain factor.  Each margin is the largest added delay or gain factor found stable by bisection
(:func:`hybridsim.coordinator.rehearse.bisection.largest_stable`), one site's knob turned at a time with the
others as written: a margin per site says which lab limits the test.
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hybridsim.coordinator.errors import RunStopped, UsageError
from hybridsim.coordinator.experiment import Experiment
from hybridsim.coordinator.experiment_schema import REHEARSE, default
from hybridsim.coordinator.motion import GroundMotion
from hybridsim.coordinator.rehearse.bisection import largest_stable
from hybridsim.coordinator.rehearse.delayed_sdof import decays
from hybridsim.coordinator.simulation import run_experiment, stored_attributes


def pulse_experiment(experiment: Experiment, duration: float) -> Experiment:
    """``experiment`` under one step of its record's peak acceleration (m/s^2, at t = dt), then free vibration
    to ``duration`` (s)."""
    if experiment.program is not None:
        raise UsageError("rehearse: the margins of a test program ([[stages]]) are not sought; give "
                         "rehearse.delay_margin = false and rehearse.gain_margin = false")
    peak = max([experiment.motion.pga, *(float(np.max(np.abs(c.acceleration))) for c in experiment.more_components)])
    if not peak > 0:
        raise UsageError("rehearse: the record is all zeros: the margins' pulse is its peak acceleration (give a "
                         "record, or rehearse.delay_margin = false and rehearse.gain_margin = false)")
    pulse = np.zeros(int(round(duration / experiment.dt)) + 1)
    pulse[1] = peak
    return dataclasses.replace(experiment, motion=GroundMotion(experiment.dt, pulse, "margin pulse"),
                               more_components=(), records=False)


def with_knobs(experiment: Experiment, site: str, delay: float, gain: float) -> Experiment:
    """``experiment`` with ``delay`` (s) added to the actuators of ``site``'s lab and their gain times ``gain``."""
    modules = []
    for spec in experiment.modules:
        if spec.name == site:
            config = copy.deepcopy(spec.config)
            actuators = config["backend"]["plant"]["actuators"]
            for table in actuators if isinstance(actuators, list) else [actuators]:
                table["delay"] = table.get("delay", 0.0) + delay
                table["gain"] = table.get("gain", 1.0) * gain
            spec = dataclasses.replace(spec, config=config)
        modules.append(spec)
    return dataclasses.replace(experiment, modules=tuple(modules))


def stable(experiment: Experiment, site: str, output: Path) -> bool:
    """Whether the run completes and its free vibration decays at every interface DOF of ``site``."""
    try:
        run_experiment(experiment, output=output, overwrite=True)
    except RunStopped:
        return False
    if stored_attributes(output).get("status") != "completed":
        return False
    with h5py.File(output, "r") as f:
        displacement = np.asarray(f[f"modules/{site}/displacement"][()])
    return all(decays(column) for column in displacement.T)


def _bracket(table: dict[str, Any], key: str) -> tuple[float, float]:
    """rehearse.``key``: [stable, unstable], two numbers, the first below the second."""
    bracket = default(REHEARSE, table, key)
    if len(bracket) != 2 or not bracket[0] < bracket[1]:
        raise UsageError(f"rehearse.{key}: give [stable, unstable], two numbers, the first below the second, "
                         f"not {bracket}")
    return float(bracket[0]), float(bracket[1])


def margins(experiment: Experiment, site: str, table: dict[str, Any], out: Path) -> dict[str, Any]:
    """The delay margin (s added) and the gain margin (the factor) of ``site`` as ``table`` ([rehearse]) asks,
    each None when not sought; the runs' files in ``out``."""
    base = pulse_experiment(experiment, default(REHEARSE, table, "margin_duration"))
    out.mkdir(parents=True, exist_ok=True)
    found: dict[str, Any] = {"delay_margin": None, "gain_margin": None}
    if default(REHEARSE, table, "delay_margin"):
        bracket, tolerance = _bracket(table, "delay_margin_bracket"), default(REHEARSE, table, "delay_margin_tolerance")
        added = largest_stable(lambda tau: stable(with_knobs(base, site, tau, 1.0), site, out / f"{site}_delay.h5"),
                               *bracket, tolerance)
        found["delay_margin"] = {"site": site, "s": added, "tolerance_s": tolerance, "bracket_s": list(bracket)}
    if default(REHEARSE, table, "gain_margin"):
        bracket, tolerance = _bracket(table, "gain_margin_bracket"), default(REHEARSE, table, "gain_margin_tolerance")
        factor = largest_stable(lambda g: stable(with_knobs(base, site, 0.0, g), site, out / f"{site}_gain.h5"),
                                *bracket, tolerance)
        found["gain_margin"] = {"site": site, "factor": factor, "tolerance": tolerance, "bracket": list(bracket)}
    return found
