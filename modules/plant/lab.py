"""The virtual lab: actuators, displacement sensors and the DAQ, one control sample at a time.

Its edges are SI (strokes in m); inside it works in the plant's units (mm for
the maRTHS plant: ``units_per_metre`` = 1000).  Sample k: ``reading()`` is
position_k + noise_k; ``drive(u)`` holds u over sample k, moves to k + 1 and
returns that sample's reading.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hybridsim.modules.plant.actuators import Actuators
from hybridsim.modules.plant.daq import CommandDaq
from hybridsim.modules.plant.sensors import SensorNoise


class VirtualLab:
    """An emulated lab: ``drive`` commands (m), get measured strokes (m)."""

    def __init__(self, actuators: Actuators, noise: SensorNoise, daq: CommandDaq,
                 units_per_metre: float = 1000.0) -> None:
        self.actuators = actuators
        self.noise = noise
        self.daq = daq
        self.units_per_metre = float(units_per_metre)
        self.tick = 0
        self.max_volts = np.zeros(len(daq.gains))

    def reading(self) -> np.ndarray:
        """Measured strokes (m) at the current sample."""
        return (self.actuators.position() + self.noise.sample(self.tick)) / self.units_per_metre

    def drive(self, command: np.ndarray) -> np.ndarray:
        """Hold ``command`` (m) over the current sample; return the measured strokes (m) at the next."""
        command_plant = np.asarray(command, float) * self.units_per_metre
        np.maximum(self.max_volts, np.abs(self.daq.volts(command_plant)), out=self.max_volts)
        self.actuators.advance(self.daq.applied(command_plant))
        self.tick += 1
        return self.reading()

    def commit(self) -> None:
        """Nothing to do: an in-process lab is committed by the snapshot of its caller."""

    def state(self) -> dict[str, Any]:
        return {"actuators": self.actuators.state(), "tick": self.tick, "max_volts": self.max_volts.tolist()}

    def set_state(self, state: dict[str, Any]) -> None:
        self.actuators.set_state(state["actuators"])
        self.tick = int(state["tick"])
        self.max_volts = np.array(state["max_volts"], float)
