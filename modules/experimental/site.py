"""The experimental site: setup + one compensator per actuator + control backend + force source.

One control sample per :meth:`ExperimentalSite.advance`: the interface target
becomes the setup's DOFs (the force source says how), the setup's forward map
gives one target stroke per actuator, each actuator's compensator turns its
target into a command, the backend holds the commands over the sample and
returns the strokes measured at its end (and its load cells), the setup's
inverse gives the measured pose and the force source the interface
displacements and forces.  :meth:`ExperimentalSite.start` is the reading at rest.

Force sources: :class:`LoadCells` (the DOF forces J(q)^T f of the measured
load-cell forces f in the measured configuration q: any rig) and
:class:`FrameFeedback` (the maRTHS benchmark's frame model fed by the measured
motion, its interface x, theta1, theta2 with the free rotation theta2 from the model).

Interface values are multiplied by ``signs`` (+-1 per interface DOF) to get
the rig's own sign convention; forces use the same signs.  The compensators
see millimetres, the rest is SI.  Per actuator, a target stroke beyond
``stroke_limits`` or a measured load beyond ``force_limits`` stops the site
(:class:`ActuatorLimitExceeded`) before the command is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from hybridsim.wire.contract import ModuleError
from hybridsim.modules.experimental.compensators.base import Compensator
from hybridsim.modules.experimental.physical_frame import FeedbackForce
from hybridsim.modules.experimental.setups.base import Setup
from hybridsim.modules.rowlog import RowLog

MM_PER_M = 1000.0


class ControlBackend(Protocol):
    """Where the commands go: a lab (virtual or real) that moves the actuators and reads its sensors.

    A lab's own controller is one more class with these methods: ``reading`` the strokes (m) at the
    current sample, ``drive`` holds one command per actuator (m) over a sample and returns the strokes
    at its end, ``loads`` the load-cell forces (N, pushing positive) at the current sample (zeros
    without load cells); ``commit``, ``state`` and ``set_state`` as the site's trials need them.
    """

    def reading(self) -> np.ndarray: ...

    def drive(self, command: np.ndarray) -> np.ndarray: ...

    def loads(self) -> np.ndarray: ...

    def commit(self) -> None: ...

    def state(self) -> Any: ...

    def set_state(self, state: Any) -> None: ...


class ForceSource(Protocol):
    """Between the interface and the setup: the setup DOFs of a target, the response to a measurement."""

    def target(self, command: np.ndarray) -> np.ndarray:
        """The setup's DOFs (m, rad) of an interface target (rig sign)."""
        ...

    def respond(self, pose: np.ndarray, loads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(interface displacements, forces) of the measured pose and load-cell forces of one sample."""
        ...

    def probe(self, command: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(displacements, forces) of a quasi-static probe at an interface command; nothing moves."""
        ...

    def state(self) -> Any: ...

    def set_state(self, state: Any) -> None: ...


CANNOT_PROBE = ("this control cannot probe the specimen before the test: give initial_stiffness (a DOFs x DOFs "
                "matrix) for the pre-test")
"""why a site with load-cell forces and a control without a virtual specimen in its process cannot answer the
coordinator's pre-test"""


class LoadCells:
    """DOF forces from the load cells through the setup: r = J(q)^T f, q the measured pose.

    A pre-test probe asks ``probe_loads`` (a virtual lab's specimen) for the load-cell forces at the
    strokes of the probed pose, or uses ``stiffness`` (DOFs x DOFs: r = K d) when a lab cannot probe.
    """

    def __init__(self, setup: Setup, probe_loads: Callable[[np.ndarray], np.ndarray] | None = None,
                 stiffness: np.ndarray | None = None) -> None:
        self.setup = setup
        self.probe_loads = probe_loads
        self.stiffness = stiffness

    def target(self, command: np.ndarray) -> np.ndarray:
        return command

    def respond(self, pose: np.ndarray, loads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return pose, self.setup.dof_forces(pose, loads)

    def probe(self, command: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.stiffness is not None:
            return command, self.stiffness @ command
        if self.probe_loads is None:
            raise ModuleError(f"experimental module: {CANNOT_PROBE}")
        return command, self.setup.dof_forces(command, self.probe_loads(self.setup.strokes(command)))

    def state(self) -> None:
        return None

    def set_state(self, state: None) -> None:
        """Stateless."""


class FrameFeedback:
    """The maRTHS benchmark's feedback force: interface (x, theta1, theta2), setup (x, theta1); the frame
    model's F5[0:3] from the measured motion, theta2 its free rotation (the load cells are not used)."""

    def __init__(self, feedback: FeedbackForce) -> None:
        self.feedback = feedback

    def target(self, command: np.ndarray) -> np.ndarray:
        return command[:2]

    def respond(self, pose: np.ndarray, loads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x, theta = pose
        force, q = self.feedback.force(x, theta)
        return np.array([x, theta, q[2]]), force

    def probe(self, command: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        force, q = self.feedback.static_force(command[0], command[1])
        return np.array([command[0], command[1], q[2]]), force

    def state(self) -> Any:
        return self.feedback.state()

    def set_state(self, state: Any) -> None:
        self.feedback.set_state(state)


class ActuatorLimitExceeded(ModuleError):
    """A target stroke or a measured load beyond an actuator's limit: the site stops before sending it."""


@dataclass(frozen=True)
class SiteResponse:
    """What the site measured at the end of a sample, in the coordinator's interface DOFs."""

    displacement: np.ndarray
    """interface displacements (m, rad): the measured pose (and, for the frame model, its free rotation)"""
    force: np.ndarray
    """interface forces (N, N*m)"""


class SiteRecord:
    """Per control sample k: target strokes, commands (mm; sample k's command), measured strokes (mm) and, with
    ``load_cells``, the load-cell forces (N), one column per actuator (per load cell: ``cells``, default one per
    actuator).

    It holds the samples from :attr:`first` on: :meth:`forget` drops earlier ones once they are stored
    elsewhere (the coordinator's results file, the site's record file), so a long run's record stays
    bounded (:class:`~hybridsim.modules.rowlog.RowLog`: no allocation once grown).  With ``keep`` False it
    holds nothing (nobody asked for a record).
    """

    FIELDS = ("target_strokes", "commands", "measured_strokes")

    def __init__(self, actuators: int = 2, load_cells: bool = False, capacity: int = 1024,
                 cells: int | None = None, keep: bool = True) -> None:
        self.fields = self.FIELDS + (("measured_loads",) if load_cells else ())
        self.keep = keep
        self.logs = {name: RowLog(actuators if name != "measured_loads" else cells or actuators,
                                  capacity if keep else 0) for name in self.fields}
        self.samples = 0
        """number of samples with a measurement"""

    @property
    def first(self) -> int:
        """the first sample held (the ones before were forgotten)"""
        return self.logs["measured_strokes"].first

    def measured(self, k: int, strokes_mm: np.ndarray, loads: np.ndarray) -> None:
        self.samples = k + 1
        if not self.keep:
            return
        self.logs["measured_strokes"].at(k)[:] = strokes_mm
        if "measured_loads" in self.logs:
            self.logs["measured_loads"].at(k)[:] = loads

    def commanded(self, k: int, targets_mm: np.ndarray, commands_mm: np.ndarray) -> None:
        if not self.keep or k < self.first:  # restarted at k + 1 (restored): sample k is not this record's
            return
        self.logs["target_strokes"].at(k)[:] = targets_mm
        self.logs["commands"].at(k)[:] = commands_mm

    def hold(self, k: int) -> None:
        """Sample k ends the run (no step follows it, so no command is sent at it): its target and command are the
        ones the actuators hold, sample k - 1's, not unwritten rows (NaN)."""
        for name in ("target_strokes", "commands"):
            log = self.logs[name]
            if self.keep and log.rows == k and k - 1 >= log.first:
                log.at(k)[:] = log.at(k - 1).copy()

    def array(self, name: str, samples: int | None = None, start: int = 0) -> np.ndarray:
        """A logged signal (samples x actuators): samples ``start`` .. ``samples`` - 1 (default: all measured;
        ``start`` at least :attr:`first`)."""
        stop = self.samples if samples is None else samples
        log = self.logs[name]
        if not self.keep:
            return log.values[:0].copy()
        if start < log.first:
            raise ValueError(f"site record: samples before {log.first} were stored and forgotten, not {start}")
        out = np.full((max(stop - start, 0), log.values.shape[1]), np.nan)  # rows not logged yet: NaN
        held = log.head(min(stop, log.rows), start)
        out[: len(held)] = held
        return out

    def restart(self, at: int) -> None:
        """Hold nothing; the next sample logged is ``at`` (a site restored from a checkpoint)."""
        for log in self.logs.values():
            log.restart(at)
        self.samples = at

    def forget(self, below: int) -> None:
        """Drop the samples before ``below`` (they are stored elsewhere)."""
        if self.keep:
            for log in self.logs.values():
                log.forget(min(below, self.samples))


class ExperimentalSite:
    """Setup + compensators + backend + force source, advanced one control sample at a time."""

    def __init__(self, setup: Setup, compensators: Sequence[Compensator], forces: ForceSource,
                 backend: ControlBackend, signs: Sequence[float],
                 stroke_limits: Sequence[float] | None = None, force_limits: Sequence[float] | None = None,
                 record: bool = True) -> None:
        if len(compensators) != setup.actuators:
            raise ValueError(f"the setup has {setup.actuators} actuators: give one compensator per actuator, "
                             f"not {len(compensators)}")
        self.setup = setup
        self.compensators = tuple(compensators)
        self.forces = forces
        self.backend = backend
        self.signs = np.asarray(signs, float)
        if self.signs.ndim != 1 or not np.all(np.abs(self.signs) == 1.0):
            raise ValueError("signs: one factor of +1 or -1 per interface DOF")
        n = setup.actuators
        self.stroke_limits = np.full(n, np.inf) if stroke_limits is None else np.asarray(stroke_limits, float)
        self.force_limits = np.full(n, np.inf) if force_limits is None else np.asarray(force_limits, float)
        if np.any(np.isfinite(self.force_limits)) and not setup.actuator_cells:
            raise ValueError("actuators[].force: this rig's load cells are not the actuators' (it reads "
                             f"{setup.cells} others), so there is no actuator load to limit")
        self.record = SiteRecord(n, isinstance(forces, LoadCells), cells=setup.cells, keep=record)
        self.sample = -1
        """the last measured sample (-1: not started)"""
        self._measured_mm = np.zeros(n)

    def start(self) -> SiteResponse:
        """The reading at rest (sample 0), before any command."""
        if self.sample != -1:
            raise RuntimeError("the site has already started")
        return self._measure(self.backend.reading())

    def advance(self, target: np.ndarray) -> SiteResponse:
        """Move toward the interface ``target`` for one sample; return what was measured."""
        targets = self.setup.strokes(self.forces.target(target * self.signs))
        beyond = np.flatnonzero(np.abs(targets) > self.stroke_limits)
        if beyond.size:
            i = int(beyond[0])
            raise ActuatorLimitExceeded(f"actuator {i + 1}: target stroke {targets[i] * 1e3:.4g} mm beyond its "
                                        f"limit {self.stroke_limits[i] * 1e3:.4g} mm at sample {self.sample + 1}; "
                                        "nothing was sent")
        targets_mm = targets * MM_PER_M
        measured = self._measured_mm
        commands_mm = np.array([c.command(float(t), float(m))
                                for c, t, m in zip(self.compensators, targets_mm, measured)])
        self.record.commanded(self.sample, targets_mm, commands_mm)
        return self._measure(self.backend.drive(commands_mm / MM_PER_M))

    def probe(self, command: np.ndarray) -> SiteResponse:
        """A quasi-static probe before the test (pre-test of initial stiffness): nothing moves, nothing is
        recorded."""
        displacement, force = self.forces.probe(command * self.signs)
        return SiteResponse(self.signs * displacement, self.signs * force)

    def _measure(self, strokes: np.ndarray) -> SiteResponse:
        self.sample += 1
        loads = self.backend.loads()
        self._measured_mm = strokes * MM_PER_M
        self.record.measured(self.sample, self._measured_mm, loads)
        over = np.flatnonzero(np.abs(loads[:len(self.force_limits)]) > self.force_limits)
        if over.size:
            i = int(over[0])
            raise ActuatorLimitExceeded(f"actuator {i + 1}: load cell reads {loads[i]:.6g} N, beyond its limit "
                                        f"{self.force_limits[i]:.6g} N at sample {self.sample}")
        displacement, force = self.forces.respond(self.setup.pose(strokes), loads)
        return SiteResponse(self.signs * displacement, self.signs * force)

    def commit(self) -> None:
        self.backend.commit()

    def state(self) -> dict[str, Any]:
        """The committed physical state (no record), JSON-serialisable."""
        return {"sample": self.sample, "measured_mm": self._measured_mm.tolist(),
                "compensators": [c.state() for c in self.compensators], "feedback": self.forces.state(),
                "backend": self.backend.state()}

    def set_state(self, state: dict[str, Any]) -> None:
        self.sample = int(state["sample"])
        self._measured_mm = np.array(state["measured_mm"], float)
        for compensator, s in zip(self.compensators, state["compensators"]):
            compensator.set_state(s)
        self.forces.set_state(state["feedback"])
        self.backend.set_state(state["backend"])
