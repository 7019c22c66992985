"""The compensator interface: one actuator, one control sample per call.

A compensator maps the target displacement of its actuator to the command
sent to the servo controller, and may learn from the measured displacement
(delay compensation: inverse models, extrapolation, adaptive laws).  The site
runs one compensator per actuator (decentralised) and calls
:meth:`Compensator.command` once per control sample, with that sample's
target and the latest measurement, in the units of the lab's loop (mm for
the maRTHS benchmark, whose initial RLS parameters depend on that choice).
"""

from __future__ import annotations

import abc
from typing import Any

import numpy as np


class Compensator(abc.ABC):
    """Stateful target -> command map of one actuator."""

    name: str = ""

    @abc.abstractmethod
    def command(self, target: float, measured: float) -> float:
        """The command for this sample from its ``target`` and the ``measured`` displacement of this sample."""

    def parameters(self) -> np.ndarray:
        """The current adapted parameters (empty for a fixed map); for parameter histories."""
        return np.zeros(0)

    @abc.abstractmethod
    def state(self) -> dict[str, Any]:
        """Everything the next call depends on, JSON-serialisable (for trials and checkpoints)."""

    @abc.abstractmethod
    def set_state(self, state: dict[str, Any]) -> None:
        """Return to a state given by :meth:`state`."""
