"""Runaway guards: stop a test cleanly when an actuator's compensation runs away.

A :class:`GuardedCompensator` wraps the compensator of one actuator and,
every control sample, checks what a lab watches before a command leaves the
controller:

- divergence: the measured displacement is farther from the target than
  ``Limits.tracking`` (checked with the command, after the inner compensator's sample);
- command bound: the command is not finite or beyond ``Limits.command``;
- saturation: the command's servo voltage, volts = gain * command + offset,
  is beyond ``Limits.volts``.

When one of them trips, :class:`RunawayStopped` (a
:class:`~hybridsim.wire.contract.ModuleError`: a site daemon reports it, the
coordinator's run stops on it) is raised with a one-line reason and the
offending command is never sent.  Units are the loop's (mm in the
maRTHS benchmark), volts in V.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Key, Number, Schema
from hybridsim.modules.kernels import kernel
from hybridsim.wire.contract import ModuleError
from hybridsim.modules.experimental.compensators.base import Compensator


@dataclass(frozen=True)
class Limits:
    """What trips the guard; infinite: not checked."""

    tracking: float = math.inf
    """bound on |measured - target| (loop units)"""
    command: float = math.inf
    """bound on |command| (loop units)"""
    volts: float = math.inf
    """saturation of the servo voltage |gain * command + offset| (V)"""
    volts_per_unit: float = 0.0
    """the DAQ's gain from command to volts (V per loop unit)"""
    volts_offset: float = 0.0
    """the DAQ's offset (V)"""

    def __post_init__(self) -> None:
        for name in ("tracking", "command", "volts"):
            if not getattr(self, name) > 0:
                raise ValueError(f"guard limit {name} must be positive (math.inf: not checked)")
        if math.isfinite(self.volts) and self.volts_per_unit == 0.0:
            raise ValueError("guard: a volts limit needs the DAQ gain volts_per_unit")


CONFIG = Schema("guard", "What stops the run when an actuator's compensation runs away (absent: not checked).", {
    "tracking": Key(Number("loop units", 0, open_minimum=True), "bound on |measured - target|"),
    "command": Key(Number("loop units", 0, open_minimum=True), "bound on |command|"),
    "volts": Key(Number("V", 0, open_minimum=True), "saturation of |volts_per_unit * command + volts_offset|"),
    "volts_per_unit": Key(Number("V/loop unit"), "the DAQ's gain from command to volts", default=0.0),
    "volts_offset": Key(Number("V"), "the DAQ's offset", default=0.0),
})


class RunawayStopped(ModuleError):
    """A guard stopped the run: ``reason`` says which actuator, what and when; ``sample`` is the control sample."""

    def __init__(self, reason: str, actuator: str, sample: int, time: float) -> None:
        super().__init__(reason)
        self.reason = reason
        self.actuator = actuator
        self.sample = sample
        self.time = time

    def __reduce__(self) -> tuple[type, tuple[str, str, int, float]]:
        """Pickle with every field (process pools and Dask ship the exception back)."""
        return type(self), (self.reason, self.actuator, self.sample, self.time)


DIVERGED, NOT_FINITE, BEYOND, SATURATES = 1, 2, 3, 4
"""what :func:`runaway` found, in the order it checks"""


@kernel
def runaway(bounds: np.ndarray, target: float, measured: float, command: float) -> int:
    """0 if a sample is within the guard's ``bounds`` (tracking, command, volts, volts_per_unit, volts_offset:
    :class:`Limits`), else the first check that trips: |measured - target| beyond tracking (:data:`DIVERGED`),
    a command that is not finite, beyond its bound, or whose servo voltage saturates."""
    if not abs(measured - target) <= bounds[0]:
        return DIVERGED
    if not math.isfinite(command):
        return NOT_FINITE
    if abs(command) > bounds[1]:
        return BEYOND
    if abs(bounds[3] * command + bounds[4]) > bounds[2]:
        return SATURATES
    return 0


class GuardedCompensator(Compensator):
    """``inner`` with the runaway checks of ``limits``; ``label`` names the actuator in the reason."""

    def __init__(self, inner: Compensator, limits: Limits, label: str, sample_period: float) -> None:
        self.inner = inner
        self.limits = limits
        self.label = label
        self.sample_period = float(sample_period)
        self.sample = 0
        """the control sample of the next call"""
        self.name = inner.name
        self.bounds = np.array([limits.tracking, limits.command, limits.volts, limits.volts_per_unit,
                                limits.volts_offset])
        """the limits as :func:`runaway` reads them"""

    def command(self, target: float, measured: float) -> float:
        """The inner compensator's command if no guard trips (:func:`runaway`), else :class:`RunawayStopped`: the
        command is never returned, so never sent."""
        command = self.inner.command(target, measured)
        trip = runaway(self.bounds, target, measured, command)
        if trip:
            self.stop(trip, target, measured, command)
        self.sample += 1
        return command

    def stop(self, trip: int, target: float, measured: float, command: float) -> None:
        """Raise the :class:`RunawayStopped` of a check that tripped (:func:`runaway`'s code) at this sample."""
        limits = self.limits
        volts = limits.volts_per_unit * command + limits.volts_offset
        what = {DIVERGED: f"measured {measured:.4g} diverged from target {target:.4g} "
                          f"(|error| {abs(measured - target):.4g} > {limits.tracking:.4g})",
                NOT_FINITE: f"command is not a finite number ({command})",
                BEYOND: f"command {command:.4g} beyond the bound {limits.command:.4g}",
                SATURATES: f"command {command:.4g} saturates the servo input ({volts:.3f} V beyond "
                           f"+-{limits.volts:g} V)"}[trip]
        self._stop(what, self.sample)

    def _stop(self, what: str, sample: int) -> None:
        time = sample * self.sample_period
        raise RunawayStopped(f"{self.label}: {what} at t = {time:.4f} s (sample {sample})", self.label, sample,
                             time)

    def parameters(self) -> np.ndarray:
        return self.inner.parameters()

    def state(self) -> dict[str, Any]:
        return {"sample": self.sample, "inner": self.inner.state()}

    def set_state(self, state: dict[str, Any]) -> None:
        self.sample = int(state["sample"])
        self.inner.set_state(state["inner"])
