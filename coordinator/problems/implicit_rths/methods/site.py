"""The sample-level interface between an implicit RTHS method and a lab, and the virtual lab.

Clock: control samples m = 0, 1, 2, ... at t_m = m dt.  At every sample the
controller reads the measurement (y_m, f_m) (specimen displacement and
force), computes, and issues a command u_m that is held until m + 1.
:meth:`ControlSite.drive` is that hold: it returns the measurement of the
next sample (the same reading/drive shape as the plant's virtual lab, with
the specimen force beside the displacement).  Units: m, N.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from hybridsim.modules.plant.first_order import FirstOrderActuator
from hybridsim.modules.plant.specimens import Specimen


class Measurement(NamedTuple):
    """What the controller reads at one control sample."""

    displacement: float
    """y: the specimen's measured deformation (m)"""
    force: float
    """f: the specimen's measured force (N)"""


class ControlSite(Protocol):
    """An actuator with a specimen, advanced one control sample per command."""

    sample_period: float
    """dt (s)"""

    def reading(self) -> Measurement:
        """The measurement at the current sample (no time passes)."""
        ...

    def drive(self, command: float) -> Measurement:
        """Hold ``command`` (m) for one sample; return the measurement at the next sample."""
        ...


class SpecimenLab:
    """A virtual lab: a first-order actuator driving a specimen that commits its state at every sample.

    The lab records every sample (command, position, force) for plots and
    hysteresis loops.
    """

    def __init__(self, actuator: FirstOrderActuator, specimen: Specimen) -> None:
        self.actuator = actuator
        self.specimen = specimen
        self.sample_period = actuator.sample_period
        y0 = actuator.position
        self._now = Measurement(y0, specimen.update(y0))
        self.commands: list[float] = []
        self.positions: list[float] = [y0]
        self.forces: list[float] = [self._now.force]

    def reading(self) -> Measurement:
        return self._now

    def drive(self, command: float) -> Measurement:
        y = self.actuator.advance(command)
        self._now = Measurement(y, self.specimen.update(y))
        self.commands.append(command)
        self.positions.append(y)
        self.forces.append(self._now.force)
        return self._now
