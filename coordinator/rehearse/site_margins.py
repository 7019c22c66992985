"""The delay and gain margins of a virtual-lab site: the loop's stability under an added actuator delay or gain.

Stability is the loop's, not the record's: each margin run is the experiment with its excitation replaced by one
step of the record's peak acceleration (a velocity kick of PGA dt, the record's own scale) followed by
``margin_duration`` s of free vibration, and the run is stable when it completes (no gate, guard or divergence
stops it) and its free vibration decays at every DOF of the structure the as-written run moves (the peak |x|
of the run's last quarter below that of its second: :func:`hybridsim.coordinator.rehearse.delayed_sdof.decays`)
without growing past :data:`GROWTH` times the as-written run's peak (a yielding specimen bounds an unstable loop's
growth in a limit cycle the decay alone would pass).  The knobs are the lab's
own keys (hybridsim.modules.plant.knobs): every actuator's ``delay`` plus the added delay (s), its ``gain`` times
the gain factor.  Each margin is the largest added delay or gain factor found stable by bisection
(:func:`hybridsim.coordinator.rehearse.bisection.largest_stable`), one site's knob turned at a time with the
others as written: a margin per site says which lab limits the test.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
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
from hybridsim.modules.plant.module import KNOBS

LONGEST_DELAY = float(KNOBS["delay"].type.maximum)
"""s: the most a virtual lab's delay knob takes (its schema's)"""


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


def _actuators(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The actuator tables of a virtual-lab site's ``config`` (either form of its plant's ``actuators``)."""
    actuators = config["backend"]["plant"]["actuators"]
    return actuators if isinstance(actuators, list) else [actuators]


def check_delay_bracket(experiment: Experiment, site: str, table: dict[str, Any]) -> None:
    """Refuse in one line, when the delay margin is sought, a delay bracket whose top, added to an actuator's own
    delay, passes the lab's delay knob (at most :data:`LONGEST_DELAY` s): its runs would be refused by the site,
    not found unstable."""
    if not default(REHEARSE, table, "delay_margin"):
        return
    top = float(default(REHEARSE, table, "delay_margin_bracket")[-1])
    own = max(float(t.get("delay", 0.0)) for spec in experiment.modules if spec.name == site
              for t in _actuators(spec.config))
    if own + top > LONGEST_DELAY:
        raise UsageError(f"rehearse.delay_margin_bracket: its top {top:g} s added to the actuator delay of site "
                         f"{site!r} ({own:g} s) passes the lab's longest delay, {LONGEST_DELAY:g} s; give a top of at "
                         f"most {LONGEST_DELAY - own:g} s")


def with_knobs(experiment: Experiment, site: str, delay: float, gain: float) -> Experiment:
    """``experiment`` with ``delay`` (s) added to the actuators of ``site``'s lab and their gain times ``gain``."""
    modules = []
    for spec in experiment.modules:
        if spec.name == site:
            config = copy.deepcopy(spec.config)
            for table in _actuators(config):
                table["delay"] = table.get("delay", 0.0) + delay
                table["gain"] = table.get("gain", 1.0) * gain
            spec = dataclasses.replace(spec, config=config)
        modules.append(spec)
    return dataclasses.replace(experiment, modules=tuple(modules))


GROWTH = 2.0
"""a margin run whose peak |x| at a DOF exceeds this many times the as-written loop's has lost stability, whatever
bounds it afterwards (a yielding specimen turns an unstable loop's growth into a limit cycle that may even decay)"""


def response(experiment: Experiment, output: Path) -> np.ndarray | None:
    """The structure's displacements (steps x DOFs, the coordinator's: a lab's gain knob scales what the site
    measures, not them) of a run that completes; None when a gate, guard or divergence stops it."""
    try:
        run_experiment(experiment, output=output, overwrite=True)
    except RunStopped:
        return None
    if stored_attributes(output).get("status") != "completed":
        return None
    with h5py.File(output, "r") as f:
        return np.asarray(f["displacement"][()])


def stable(x: np.ndarray | None, reference: np.ndarray) -> bool:
    """Whether a run's response ``x`` (None: stopped) is stable: at every DOF the as-written run moved
    (``reference``: its peaks), its free vibration decays and never grows past GROWTH times that peak."""
    if x is None:
        return False
    moving = reference > 0
    return bool(np.all(np.max(np.abs(x[:, moving]), axis=0) <= GROWTH * reference[moving])
                and all(decays(column) for column in x[:, moving].T))


def _largest(stable_at: Callable[[float], bool], table: dict[str, Any], key: str, tolerance: float,
             site: str) -> tuple[float, list[float], bool]:
    """The largest value stable in rehearse.``key``'s bracket [stable, unstable] (two numbers, the first below the
    second) to ``tolerance``, the bracket, and whether its top was still stable (then the margin is at least it);
    a bracket without a margin in it is refused in one line naming the key and ``site``."""
    bracket = default(REHEARSE, table, key)
    if len(bracket) != 2 or not bracket[0] < bracket[1]:
        raise UsageError(f"rehearse.{key}: give [stable, unstable], two numbers, the first below the second, "
                         f"not {bracket}")
    low, high = float(bracket[0]), float(bracket[1])
    if stable_at(high) and stable_at(low):
        return high, [low, high], True
    try:
        return largest_stable(stable_at, low, high, tolerance), [low, high], False
    except UsageError as exc:
        raise UsageError(f"rehearse.{key} of site {site!r}: {exc}") from None


def margins(experiment: Experiment, site: str, table: dict[str, Any], out: Path) -> dict[str, Any]:
    """The delay margin (s added) and the gain margin (the factor) of ``site`` as ``table`` ([rehearse]) asks,
    each None when not sought; the runs' files in ``out``."""
    found: dict[str, Any] = {"delay_margin": None, "gain_margin": None}
    if not (default(REHEARSE, table, "delay_margin") or default(REHEARSE, table, "gain_margin")):
        return found
    base = pulse_experiment(experiment, default(REHEARSE, table, "margin_duration"))
    out.mkdir(parents=True, exist_ok=True)
    written = response(base, out / f"{site}_as_written.h5")
    reference = np.zeros(0) if written is None else np.max(np.abs(written), axis=0)
    if not stable(written, reference):
        raise UsageError(f"rehearse: site {site!r}'s loop is unstable as written (the margins' pulse response does "
                         "not decay): no margin; give rehearse.delay_margin = false and gain_margin = false to "
                         "see its trials")

    seen: dict[tuple[float, float], bool] = {(0.0, 1.0): True}  # (added delay, gain): stable; as written, it is

    def knobbed(delay: float, gain: float) -> bool:
        if (delay, gain) not in seen:
            x = response(with_knobs(base, site, delay, gain), out / f"{site}_knobbed.h5")
            seen[delay, gain] = stable(x, reference)
        return seen[delay, gain]

    if default(REHEARSE, table, "delay_margin"):
        tolerance = default(REHEARSE, table, "delay_margin_tolerance")
        added, bracket, above = _largest(lambda tau: knobbed(tau, 1.0), table, "delay_margin_bracket",
                                         tolerance, site)
        found["delay_margin"] = {"site": site, "s": added, "tolerance_s": tolerance, "bracket_s": bracket,
                                 "above_bracket": above}
    if default(REHEARSE, table, "gain_margin"):
        tolerance = default(REHEARSE, table, "gain_margin_tolerance")
        factor, bracket, above = _largest(lambda g: knobbed(0.0, g), table, "gain_margin_bracket",
                                          tolerance, site)
        found["gain_margin"] = {"site": site, "factor": factor, "tolerance": tolerance, "bracket": bracket,
                                "above_bracket": above}
    return found
