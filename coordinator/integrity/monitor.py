"""The indicators watched as the run goes: a step listener fed each committed row, O(1) a step.

From row n of the run's window (:mod:`hybridsim.coordinator.window`) it takes the structure's state and ground
acceleration (the energy balance, :class:`EnergyBalance`) and, at each watched module's interface, the command
(the structure's displacement at its DOFs), the measurement and the measured force (its energy error, and per DOF
the tracking indicator and the online delay). A threshold crossed acts once per module and indicator, as its
:class:`~hybridsim.coordinator.integrity.rules.Rule` says: warn, hold the site's gate, or stop the run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hybridsim.coordinator.errors import RunStopped
from hybridsim.coordinator.integrity.delay import DelayEstimate
from hybridsim.coordinator.integrity.energy import EnergyBalance, EnergyError, StrainEnergy
from hybridsim.coordinator.integrity.rules import Rule
from hybridsim.coordinator.integrity.tracking import TrackingIndicator

log = logging.getLogger(__name__)

Stop = Callable[[str, int, float, str], None]
"""the run's status told of a stop: the reason, the first step not run, its time (s), the module"""


@dataclass
class Watched:
    """One module's indicators: where its DOFs sit in the structure's, its rule, how its site is held."""

    name: str
    index: np.ndarray
    rule: Rule
    dt: float
    hold: Callable[[str], None] | None = None
    """the site's interlock (``Interlock.hold``); None when the site is not in this process"""
    energy: EnergyError = field(default_factory=EnergyError)
    tracking: list[TrackingIndicator] = field(default_factory=list)
    delay: list[DelayEstimate] = field(default_factory=list)
    steps: int = 0
    crossed: set[str] = field(default_factory=set)
    measured: str = ""
    """the results datasets of its measured displacement and force"""
    force: str = ""

    def __post_init__(self) -> None:
        self.measured, self.force = f"modules/{self.name}/displacement", f"modules/{self.name}/force"
        self.tracking = [TrackingIndicator() for _ in self.index]
        self.delay = [DelayEstimate(self.dt) for _ in self.index]

    def observe(self, command: np.ndarray, measured: np.ndarray, force: np.ndarray) -> None:
        """One row: commanded and measured displacement [m], measured force [N] over the module's DOFs."""
        self.energy.observe(command, measured, force)
        for tracking, delay, c, m in zip(self.tracking, self.delay, command, measured):
            tracking.observe(float(c), float(m))
            delay.observe(float(c), float(m))
        self.steps += 1

    def values(self, input_energy: float) -> dict[str, float]:
        """The indicators as they stand: energy_error (1), tracking (m^2), delay (s; 0 until its memory passed)."""
        settled = self.steps * (1.0 - self.delay[0].forgetting) > 1.0 if self.delay else False
        return {"energy_error": self.energy.relative(input_energy),
                "tracking": max((abs(t.value) for t in self.tracking), default=0.0),
                "delay": max((abs(d.delay) for d in self.delay), default=0.0) if settled else 0.0}


class IntegrityMonitor:
    """A :data:`~hybridsim.coordinator.control.StepListener`: the structure's energy balance and each watched
    module's indicators, compared with their thresholds after every step."""

    def __init__(self, watched: list[Watched], partition: Any, model: Any, strain: StrainEnergy, stop: Stop,
                 say: Callable[[str], None] = log.warning) -> None:
        """``partition``: its ``sent`` are the commands; ``model``: M, C and -M r (N per m/s^2, a column per
        excitation component); ``strain``: the modules' recoverable energy; ``stop``: tells the status; ``say``:
        where a crossing is said (the log)."""
        shape = np.asarray(model.load_shape(), float)
        self.watched, self.partition, self.stop, self.say = watched, partition, stop, say
        self.load_shape = shape.reshape(shape.shape[0], -1)
        mass, damping = model.mass, model.damping
        self.balance = EnergyBalance(mass=mass, damping=damping, strain=strain)
        self.ground = "ground_components" if shape.ndim == 2 else "ground_acceleration"
        self.crossings: list[dict[str, Any]] = []
        """every threshold crossed: module, indicator, value, threshold, step, time (s), action"""

    def begin(self, n: int, view: Mapping[str, Any]) -> None:
        """Row n, where the loop begins (the pre-test's or a checkpoint's): the state the first step starts from;
        its command is the structure's displacement (the pre-test's last probe is not a step's command)."""
        row, i = _row(view, n)
        x = self._state(row, i)
        for site in self.watched:
            site.observe(x[site.index], row[site.measured][i], row[site.force][i])

    def __call__(self, n: int, view: Mapping[str, Any]) -> None:
        row, i = _row(view, n)
        self._state(row, i)
        sent, time_s = self.partition.sent, float(row["time"][i])
        for site in self.watched:
            site.observe(sent[site.index], row[site.measured][i], row[site.force][i])
            self._compare(site, n, time_s)

    def _state(self, row: Mapping[str, np.ndarray], i: int) -> np.ndarray:
        """Row i of ``row`` into the energy balance; its displacement [m]."""
        x = row["displacement"][i]
        self.balance.observe(x, row["velocity"][i], self.load_shape @ np.atleast_1d(row[self.ground][i]),
                             row["restoring_force"][i])
        return x

    def summary(self) -> dict[str, Any]:
        """The run's figures: the energy balance [J], each module's indicators and energy error [J], the crossings."""
        b = self.balance
        return {"integrity": {
            "balance_j": {"input": b.input, "kinetic": b.kinetic, "damped": b.damped, "restoring": b.restoring,
                          "elastic": b.elastic, "hysteretic": b.hysteretic, "residual": b.residual},
            "modules": {s.name: {**s.values(b.input), "energy_error_j": s.energy.value} for s in self.watched},
            "crossings": self.crossings}}

    def _compare(self, site: Watched, n: int, time_s: float) -> None:
        values = site.values(self.balance.input)
        for indicator, threshold in site.rule.thresholds.items():
            value = values[indicator]
            if value <= threshold or indicator in site.crossed:
                continue
            site.crossed.add(indicator)
            action = "stop" if site.rule.action == "hold" and site.hold is None else site.rule.action
            reason = (f"integrity: {site.name}'s {indicator.replace('_', ' ')} {value:.4g} passed its threshold "
                      f"{threshold:.4g} at step {n} (t = {time_s:.6g} s)")
            self.crossings.append({"module": site.name, "indicator": indicator, "value": value,
                                   "threshold": threshold, "step": n, "time_s": time_s, "action": action})
            self.say(f"{reason}: {action}")
            if action == "hold":
                try:
                    site.hold(reason)  # type: ignore[misc]  (not None: a site out of reach is stopped instead)
                    continue
                except Exception as exc:  # noqa: BLE001 - a hold that did not reach the site stops the run
                    reason, action = f"{reason}; its hold failed ({exc})", "stop"
            if action == "stop":
                self.stop(reason, n + 1, time_s + site.dt, site.name)  # the status's step: the first not run
                raise RunStopped(reason)


def integrity_monitor(rules: Mapping[str, Rule], partition: Any, start: Any, dt: float, stop: Stop
                      ) -> IntegrityMonitor | None:
    """The run's monitor over its modules (:class:`~hybridsim.coordinator.partition.Partition`) from where the loop
    starts (:class:`~hybridsim.coordinator.run_loop.Start`: the structure, its window and step); None when no
    module is watched.  A site in
    this process is held through its interlock, a site daemon through its operator service; a module the
    coordinator cannot hold is stopped instead."""
    watched = [Watched(s.name, s.index, rules[s.name], dt, _hold(s.module)) for s in partition.slots if s.name in rules]
    if not watched:
        return None
    strain = StrainEnergy.of(start.reduction.initial_stiffness, [s.index for s in partition.slots])
    monitor = IntegrityMonitor(watched, partition, start.reduction.model, strain, stop)
    monitor.begin(start.step, start.window.view)
    return monitor


def _row(view: Any, n: int) -> tuple[Mapping[str, np.ndarray], int]:
    """The arrays holding row n and its index there: a run's window (:class:`~hybridsim.coordinator.window.
    WindowView`: its ring's slot, without a column object a lookup) or whole arrays (the report's replay)."""
    window = getattr(view, "window", None)
    return (view, n) if window is None else (window.arrays, window.slot(n))


def _hold(module: Any) -> Callable[[str], None] | None:
    """How ``module``'s site is held: a site daemon's ``hold`` (over the wire), an in-process site's interlock."""
    return getattr(module, "hold", None) or getattr(getattr(module, "interlock", None), "hold", None)
