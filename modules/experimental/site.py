"""The experimental site: transfer system + one compensator per actuator + control backend + feedback force.

One control sample per :meth:`ExperimentalSite.advance`: the target (x, theta)
of the interface becomes two target strokes (coupler kinematics), each
compensator turns its target into a command, the backend holds the commands
over the sample and returns the strokes measured at its end, and the frame
model turns the measured motion into the feedback force.
:meth:`ExperimentalSite.start` is the reading at rest before the first sample.

At its edge the site speaks the coordinator's interface DOFs (x, theta1,
theta2): x lateral (m), theta1 the controlled rotation, theta2 the free one
(rad), each multiplied by ``signs`` to get the frame's own sign convention
(counter-clockwise positive); forces (N, N*m) use the same signs.  The
command for theta2 is ignored (that joint rotates freely on the specimen).
The compensators see millimetres, the rest is SI.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from hybridsim.modules.experimental.compensators.base import Compensator
from hybridsim.modules.experimental.kinematics import Coupler
from hybridsim.modules.experimental.physical_frame import FeedbackForce

MM_PER_M = 1000.0


class ControlBackend(Protocol):
    """Where the commands go: a lab (virtual or real) that moves the actuators and reads the sensors (m)."""

    def reading(self) -> np.ndarray: ...

    def drive(self, command: np.ndarray) -> np.ndarray: ...

    def commit(self) -> None: ...

    def state(self) -> Any: ...

    def set_state(self, state: Any) -> None: ...


@dataclass(frozen=True)
class SiteResponse:
    """What the site measured at the end of a sample, in the coordinator's interface DOFs."""

    displacement: np.ndarray
    """(x, theta1, theta2) of the interface: measured x, theta and the free rotation (m, rad)"""
    force: np.ndarray
    """(F_x, M_1, M_2) at those DOFs: F5[0:3] of the frame model (N, N*m)"""


class SiteRecord:
    """Per control sample k: target strokes, commands (mm; sample k's command), measured strokes (mm)."""

    FIELDS = ("target_strokes", "commands", "measured_strokes")

    def __init__(self, capacity: int = 1024) -> None:
        self.arrays = {name: np.full((capacity, 2), np.nan) for name in self.FIELDS}
        self.samples = 0
        """number of samples with a measurement"""

    def _reserve(self, k: int) -> None:
        size = self.arrays["measured_strokes"].shape[0]
        if k >= size:
            for name, old in self.arrays.items():
                grown = np.full((max(2 * size, k + 1), 2), np.nan)
                grown[:size] = old
                self.arrays[name] = grown

    def measured(self, k: int, strokes_mm: np.ndarray) -> None:
        self._reserve(k)
        self.arrays["measured_strokes"][k] = strokes_mm
        self.samples = k + 1

    def commanded(self, k: int, targets_mm: np.ndarray, commands_mm: np.ndarray) -> None:
        self._reserve(k)
        self.arrays["target_strokes"][k] = targets_mm
        self.arrays["commands"][k] = commands_mm

    def array(self, name: str, samples: int | None = None) -> np.ndarray:
        """A logged signal (samples x 2), the first ``samples`` rows (default: all measured)."""
        return self.arrays[name][: self.samples if samples is None else samples].copy()


class ExperimentalSite:
    """Coupler + compensators + backend + frame force, advanced one control sample at a time."""

    def __init__(self, coupler: Coupler, compensators: Sequence[Compensator], feedback: FeedbackForce,
                 backend: ControlBackend, signs: Sequence[float] = (1.0, 1.0, 1.0)) -> None:
        if len(compensators) != 2:
            raise ValueError("the maRTHS coupler has two actuators: give one compensator per actuator")
        self.coupler = coupler
        self.compensators = tuple(compensators)
        self.feedback = feedback
        self.backend = backend
        self.signs = np.asarray(signs, float)
        if self.signs.shape != (3,) or not np.all(np.abs(self.signs) == 1.0):
            raise ValueError("signs: three factors of +1 or -1, one per interface DOF (x, theta1, theta2)")
        self.record = SiteRecord()
        self.sample = -1
        """the last measured sample (-1: not started)"""
        self._measured_mm = np.zeros(2)

    def start(self) -> SiteResponse:
        """The reading at rest (sample 0), before any command."""
        if self.sample != -1:
            raise RuntimeError("the site has already started")
        return self._measure(self.backend.reading())

    def advance(self, target: np.ndarray) -> SiteResponse:
        """Move toward ``target`` = (x, theta1, theta2) for one sample; return what was measured."""
        x, theta = target[0] * self.signs[0], target[1] * self.signs[1]
        targets_mm = self.coupler.strokes(x, theta) * MM_PER_M
        measured = self._measured_mm
        commands_mm = np.array([c.command(float(t), float(m))
                                for c, t, m in zip(self.compensators, targets_mm, measured)])
        self.record.commanded(self.sample, targets_mm, commands_mm)
        return self._measure(self.backend.drive(commands_mm / MM_PER_M))

    def probe(self, command: np.ndarray) -> SiteResponse:
        """A quasi-static probe before the test (pre-test of initial stiffness): nothing moves, nothing is
        recorded; the frame model's static force at the commanded (x, theta1)."""
        x, theta = command[0] * self.signs[0], command[1] * self.signs[1]
        force, q = self.feedback.static_force(x, theta)
        return SiteResponse(self.signs * np.array([x, theta, q[2]]), self.signs * force)

    def _measure(self, strokes: np.ndarray) -> SiteResponse:
        self.sample += 1
        self._measured_mm = strokes * MM_PER_M
        self.record.measured(self.sample, self._measured_mm)
        x, theta = self.coupler.frame(strokes[0], strokes[1])
        force, q = self.feedback.force(x, theta)
        return SiteResponse(self.signs * np.array([x, theta, q[2]]), self.signs * force)

    def commit(self) -> None:
        self.backend.commit()

    def state(self) -> dict[str, Any]:
        """The committed physical state (no record), JSON-serialisable."""
        return {"sample": self.sample, "measured_mm": self._measured_mm.tolist(),
                "compensators": [c.state() for c in self.compensators], "feedback": self.feedback.state(),
                "backend": self.backend.state()}

    def set_state(self, state: dict[str, Any]) -> None:
        self.sample = int(state["sample"])
        self._measured_mm = np.array(state["measured_mm"], float)
        for compensator, s in zip(self.compensators, state["compensators"]):
            compensator.set_state(s)
        self.feedback.set_state(state["feedback"])
        self.backend.set_state(state["backend"])
