"""The command side of the lab's DAQ: millimetres to servo volts, saturation, quantization (maRTHS §9).

V_i = u_i / (cg_i g_i) - c_i / g_i with the displacement gain g_i (mm/V),
offset c_i (mm) and correction gain cg_i.  In the benchmark the volts and the
+-3.8 V saturation feed only a log and the realizability check: the plant is
driven by the millimetre command.  ``in_loop=True`` (a study option, not the
benchmark) drives the plant through the DAC instead: saturate, quantize the
volts to ``quantum`` (V), convert back to mm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from hybridsim.modules.kernels import kernel


@kernel
def servo_volts(command_mm: np.ndarray, mm_per_volt: np.ndarray, offset_volts: np.ndarray) -> np.ndarray:
    """V = u / (cg g) - c / g (actuators on the last axis of ``command_mm``)."""
    return command_mm / mm_per_volt - offset_volts


@kernel
def dac_command(command_mm: np.ndarray, mm_per_volt: np.ndarray, offset_volts: np.ndarray, limit: float,
                quantum: float) -> np.ndarray:
    """The command through the DAC: volts saturated at +-``limit``, quantized to ``quantum`` (0: not), back to mm."""
    volts = np.minimum(np.maximum(servo_volts(command_mm, mm_per_volt, offset_volts), -limit), limit)
    if quantum > 0.0:
        volts = np.rint(volts / quantum) * quantum
    return (volts + offset_volts) * mm_per_volt


@dataclass(frozen=True)
class CommandDaq:
    gains: tuple[float, ...]
    """g_i (mm/V)"""
    offsets: tuple[float, ...]
    """c_i (mm)"""
    corrections: tuple[float, ...]
    """cg_i (dimensionless)"""
    limit: float = 3.8
    """saturation (V)"""
    quantum: float | None = None
    """DAC resolution (V); None: not quantized"""
    in_loop: bool = False

    def __post_init__(self) -> None:
        n = len(self.gains)
        if not (len(self.offsets) == len(self.corrections) == n):
            raise ValueError("DAQ: gains, offsets and correction gains need one entry per actuator")
        if self.limit <= 0 or (self.quantum is not None and self.quantum <= 0):
            raise ValueError("DAQ: the saturation limit and the quantum must be positive volts")

    @cached_property
    def mm_per_volt(self) -> np.ndarray:
        """cg_i g_i (mm/V)"""
        return np.asarray(self.corrections, float) * np.asarray(self.gains, float)

    @cached_property
    def offset_volts(self) -> np.ndarray:
        """c_i / g_i (V)"""
        return np.asarray(self.offsets, float) / np.asarray(self.gains, float)

    def volts(self, command_mm: np.ndarray | Sequence[float]) -> np.ndarray:
        """Command volts before saturation; ``command_mm`` has actuators on its last axis."""
        return servo_volts(np.asarray(command_mm, float), self.mm_per_volt, self.offset_volts)

    def applied(self, command_mm: np.ndarray) -> np.ndarray:
        """The millimetre command that reaches the actuators: ``command_mm`` itself unless ``in_loop``."""
        if not self.in_loop:
            return command_mm
        return dac_command(command_mm, self.mm_per_volt, self.offset_volts, self.limit, self.quantum or 0.0)

    def realizable(self, max_abs_volts: Sequence[float]) -> bool:
        """The benchmark's check: a run is flagged only if *every* actuator exceeded the limit."""
        return not all(v > self.limit for v in max_abs_volts)
