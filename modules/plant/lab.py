"""The virtual lab: actuators, stroke sensors, the DAQ, and a virtual specimen read by load cells.

Its edges are SI (strokes in m, load-cell forces in N); inside it works in the
plant's units (mm for the maRTHS plant: ``units_per_metre`` = 1000).  Sample k:
``reading()`` is what the stroke sensors show of position_k; ``drive(u)`` holds u
over sample k, moves to k + 1 (the specimen follows the actuators' true positions
and is committed there) and returns that sample's reading; ``loads()`` is what the
load cells show at the current sample (zeros without a specimen: no load cells).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from hybridsim.modules.plant.actuators import Actuators
from hybridsim.modules.plant.daq import CommandDaq
from hybridsim.modules.plant.sensors import Sensor


class LabSpecimen(Protocol):
    """What makes a lab's load-cell forces (hybridsim.modules.plant.virtual_specimen, .simulated_domain)."""

    cells: int
    """how many load-cell readings it makes (one per actuator unless the rig reads braces or rods)"""
    rest_loads: np.ndarray
    """its load-cell readings at rest, before the first sample (N)"""

    def commit(self, strokes: np.ndarray, tick: int) -> np.ndarray: ...

    def probe(self, strokes: np.ndarray, tick: int) -> np.ndarray: ...

    def state(self) -> Any: ...

    def set_state(self, state: Any) -> None: ...

    def close(self) -> None: ...


class VirtualLab:
    """An emulated lab: ``drive`` commands (m), get measured strokes (m) and load-cell forces (N)."""

    REWINDS = True
    """its actuators go back with a state it is given (they are virtual)"""

    def __init__(self, actuators: Actuators, strokes: Sensor, daq: CommandDaq, units_per_metre: float = 1000.0,
                 specimen: LabSpecimen | None = None, load_cells: Sensor | None = None) -> None:
        self.actuators = actuators
        self.strokes = strokes
        self.daq = daq
        self.units_per_metre = float(units_per_metre)
        self.specimen = specimen
        self.load_cells = load_cells
        self.tick = 0
        self.max_volts = np.zeros(len(daq.gains))
        self._loads = np.zeros(len(daq.gains)) if specimen is None else specimen.rest_loads.copy()
        """true load-cell forces at the current sample (N)"""

    def reading(self) -> np.ndarray:
        """Measured strokes (m) at the current sample."""
        return self.strokes.read(self.actuators.position(), self.tick) / self.units_per_metre

    def loads(self) -> np.ndarray:
        """Measured load-cell forces (N) at the current sample."""
        if self.load_cells is None:
            return self._loads.copy()
        return self.load_cells.read(self._loads, self.tick)

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """The strokes (m) and load-cell forces (N) measured at the current sample; nothing moves."""
        return self.reading(), self.loads()

    def command(self, command: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Hold ``command`` (m) over the current sample; the strokes (m) and load-cell forces (N) measured at the
        next."""
        command_plant = np.asarray(command, float) * self.units_per_metre
        np.maximum(self.max_volts, np.abs(self.daq.volts(command_plant)), out=self.max_volts)
        self.actuators.advance(self.daq.applied(command_plant))
        self.tick += 1
        position = self.actuators.position()
        if self.specimen is not None:
            self._loads = self.specimen.commit(position / self.units_per_metre, self.tick)
        strokes = self.strokes.read(position, self.tick) / self.units_per_metre
        return strokes, self._loads.copy() if self.load_cells is None else self.load_cells.read(self._loads, self.tick)

    def drive(self, command: np.ndarray) -> np.ndarray:
        """Hold ``command`` (m) over the current sample; return the measured strokes (m) at the next."""
        return self.command(command)[0]

    def probe(self, strokes: np.ndarray) -> np.ndarray:
        """The specimen's load-cell forces (N) if the actuators stood at ``strokes`` (m); nothing moves or is
        committed (a pre-test probe; no sensors)."""
        if self.specimen is None:
            raise ValueError("the lab has no specimen to probe")
        return self.specimen.probe(np.asarray(strokes, float), self.tick)

    def commit(self) -> None:
        """Nothing to do: an in-process lab is committed by the snapshot of its caller."""

    def state(self) -> dict[str, Any]:
        state = {"actuators": self.actuators.state(), "tick": self.tick, "max_volts": self.max_volts.tolist()}
        if self.specimen is not None:
            state.update(specimen=self.specimen.state(), loads=self._loads.tolist())
        return state

    def set_state(self, state: dict[str, Any]) -> None:
        self.actuators.set_state(state["actuators"])
        self.tick = int(state["tick"])
        self.max_volts = np.array(state["max_volts"], float)
        if self.specimen is not None:
            self.specimen.set_state(state["specimen"])
            self._loads = np.array(state["loads"], float)

    def close(self) -> dict[str, float]:
        """Let the specimen go (an OpenSees domain); the lab is not driven again.  Its figures: the largest
        servo command of each channel (V)."""
        specimen, self.specimen = self.specimen, None
        if specimen is not None:
            specimen.close()
        return {f"max_command_volts_{i + 1}": float(v) for i, v in enumerate(self.max_volts)}
