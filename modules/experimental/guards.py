"""Runaway guards: stop a test cleanly when an actuator's compensation runs away.

A :class:`GuardedCompensator` wraps the compensator of one actuator and,
every control sample, checks what a lab watches before a command leaves the
controller:

- divergence: the measured displacement is farther from the target than
  ``Limits.tracking``;
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

    def command(self, target: float, measured: float) -> float:
        sample = self.sample
        error = measured - target
        if not abs(error) <= self.limits.tracking:
            self._stop(f"measured {measured:.4g} diverged from target {target:.4g} "
                       f"(|error| {abs(error):.4g} > {self.limits.tracking:.4g})", sample)
        command = self.inner.command(target, measured)
        if not math.isfinite(command):
            self._stop(f"command is not a finite number ({command})", sample)
        if abs(command) > self.limits.command:
            self._stop(f"command {command:.4g} beyond the bound {self.limits.command:.4g}", sample)
        volts = self.limits.volts_per_unit * command + self.limits.volts_offset
        if abs(volts) > self.limits.volts:
            self._stop(f"command {command:.4g} saturates the servo input ({volts:.3f} V beyond "
                       f"+-{self.limits.volts:g} V)", sample)
        self.sample += 1
        return command

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
