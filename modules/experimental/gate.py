"""The site's gate: the one holder of its control, through which every command and reading passes.

Whatever asks the actuators to move (a step from any channel or protocol, the site clock's predictions and
held samples, a step taken back, the end of a session) reaches the control only through :meth:`Gate.command`,
which applies every limit of the actuators before anything is sent (a compiled run of many samples, the maRTHS
loop's ticks, gets the control only from :meth:`Gate.compiled`, when :func:`within_limits`, the check
:meth:`Gate.command` makes, is all there is to check, and makes that check on every command):

- a target or command that is not finite (NaN, Inf);
- ``stroke``: |target stroke| and |command| per actuator (m);
- ``increment``: |command - measured stroke| per control sample (m), from the position the control last
  measured (never from a position a client claims);
- ``velocity``: |command - measured stroke| / dt (m/s), dt the site's own control sample (never a client's dt);
- ``force``: the load cell measured after a sample (N): beyond it the site is held.

A site may declare where its test starts (``gate.start``: a specimen installed at an offset): the site's strokes
are from there, the limits and messages in the control's own.

A hold (an :class:`Interlock`) lasts until an operator clears it at the site: across samples, steps taken
back, restores, sessions and reconnections (the interlock belongs to the site, not to a session).  Reading
(:meth:`Gate.read`) asks the control for its measurement only; it never commands.  A checkpoint's position
is checked before the site is restored to it (:meth:`Gate.check_restore`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hybridsim.modules.experimental.controls.base import Control
from hybridsim.modules.kernels import kernel
from hybridsim.modules.limits import Interlock
from hybridsim.wire.contract import ModuleError


class ActuatorLimitExceeded(ModuleError):
    """A target, a command or a measured load beyond an actuator's limit: the site stops before sending it."""


@kernel
def within_limits(commands: np.ndarray, targets: np.ndarray | None, measured: np.ndarray | None,
                  pose: np.ndarray | None, stroke_bounds: np.ndarray, steps: np.ndarray,
                  pose_limits: np.ndarray) -> bool:
    """Every limit of :class:`Gate` holds for one sample (None: not checked): |command|, |target| <= stroke bound,
    |command - measured| <= step, |pose| <= pose limit.  NaN and Inf fail ``<=`` with the finite bounds."""
    for i in range(commands.size):
        if not abs(commands[i]) <= stroke_bounds[i]:
            return False
        if targets is not None and not abs(targets[i]) <= stroke_bounds[i]:
            return False
        if measured is not None and not abs(commands[i] - measured[i]) <= steps[i]:
            return False
    if pose is not None:
        for j in range(pose.size):
            if not abs(pose[j]) <= pose_limits[j]:
                return False
    return True


def _limits(values: Sequence[float] | None, n: int) -> np.ndarray:
    return np.full(n, np.inf) if values is None else np.asarray(values, float)


_NO_POSE = np.zeros(0)


class Gate:
    """``control`` behind the limits of ``actuators`` actuators (each limit one value per actuator, inf: none);
    ``sample_period``: the site's control sample (s), the velocity limit's dt."""

    def __init__(self, control: Control, actuators: int, sample_period: float,
                 stroke: Sequence[float] | None = None, force: Sequence[float] | None = None,
                 increment: Sequence[float] | None = None, velocity: Sequence[float] | None = None,
                 interlock: Interlock | None = None, start_tolerance: float = np.inf,
                 restore_tolerance: float = np.inf, start: Sequence[float] | None = None) -> None:
        self._control = control
        self.stroke = _limits(stroke, actuators)
        self.force = _limits(force, actuators)
        self._forces = self.force.tolist()
        self.step = np.minimum(_limits(increment, actuators), _limits(velocity, actuators) * sample_period)
        """the largest move per sample from the measured stroke (m): increment and velocity dt"""
        self.stroke_bounds = np.minimum(self.stroke, np.finfo(float).max)
        self.steps = np.minimum(self.step, np.finfo(float).max)
        """the stroke and step limits as finite floats (none: the largest float), so NaN and Inf fail ``<=``"""
        self.interlock = interlock or Interlock()
        self.start_tolerance = start_tolerance
        """m: the largest distance of an actuator from :attr:`start` at the first reading"""
        self.start = None if start is None or not np.any(start) else np.asarray(start, float)
        """the strokes (m) where the test starts (a specimen installed at an offset), the site's zero: the site
        commands and reads strokes from it, the control is sent and measures them from its own zero (None: 0)"""
        self.restore_tolerance = restore_tolerance
        """m: the largest distance of a lab controller's actuator from where a checkpoint to restore measured it"""
        self.measured: np.ndarray | None = None
        """the strokes the control measured last (m); None before the first reading"""
        self.sample = 0
        """samples commanded since the reading at rest (for messages)"""
        self.tripped: str | None = None
        """why the last measurement put the site on hold (None: it did not)"""
        self.pose_limits: np.ndarray | None = None
        """|target| per interface DOF (m, rad: the site's ``[limits]`` displacement), checked on every sample's
        target, the site clock's predictions included; None: none"""
        self._probe = getattr(control, "probe", None)
        """the control's quasi-static probe (a virtual lab's specimen), if it has one: nothing moves"""

    # -- the control's verbs, gated -------------------------------------------------------------------------------
    @property
    def probes(self) -> bool:
        """Whether the control can answer a pre-test (:meth:`probe`)."""
        return self._probe is not None

    def probe(self, strokes: np.ndarray) -> np.ndarray:
        """The load cells (N) the control's quasi-static probe (a virtual lab's specimen) finds at ``strokes`` (m):
        nothing moves.  Only for a control that :attr:`probes`."""
        assert self._probe is not None
        loads: np.ndarray = self._probe(strokes)
        return loads

    def read(self) -> tuple[np.ndarray, np.ndarray]:
        """The strokes (m) and loads (N) now, by the control's read request (nothing moves)."""
        strokes, loads = self._control.read()
        start = np.zeros(strokes.size) if self.start is None else self.start
        away = np.flatnonzero(np.abs(strokes - start) > self.start_tolerance) if self.measured is None else ()
        if len(away):
            i = int(away[0])
            raise ModuleError(f"experimental module: actuator {i + 1} is at {strokes[i] * 1e3:.4g} mm and the test "
                              f"starts at {start[i] * 1e3:.4g} mm (within start_tolerance = "
                              f"{self.start_tolerance * 1e3:.4g} mm): bring the actuators there (hybridsim site "
                              f"experimental --config SITE --move-to {','.join(f'{s:g}' for s in start)}, at the "
                              "gate's move_speed), or declare that start (gate.start, m per actuator); nothing was "
                              "sent")
        self.measured = np.array(strokes, float)
        if np.any(np.abs(loads[:self.force.size]) > self.force):
            self._overloaded(loads)
        return strokes - start, loads

    def command(self, commands: np.ndarray, targets: np.ndarray | None = None,
                pose: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Hold ``commands`` (m) over one sample if every limit allows them (``targets``: the target strokes they
        compensate, m, checked against the stroke limit too; ``pose``: the interface target they come from, m or
        rad, checked against :attr:`pose_limits`); what the control measured at its end.  Commands, targets and
        the measurement are from :attr:`start` (the limits and the messages are the control's own strokes)."""
        start = self.start
        if start is not None:
            commands = commands + start
            targets = None if targets is None else targets + start
        if self.interlock.reason is not None or not self._allows(commands, targets, pose):
            self.refuse(commands, targets, pose)
        strokes, loads = self._control.command(commands)
        self.sample += 1
        self.measured = np.array(strokes, float)
        if any(abs(load) > limit for load, limit in zip(loads.tolist(), self._forces)):  # (one crossing)
            self._overloaded(loads)
        return (strokes if start is None else strokes - start), loads

    def _allows(self, commands: np.ndarray, targets: np.ndarray | None, pose: np.ndarray | None) -> bool:
        """Every limit holds: the test of every sample (:func:`within_limits`, compiled)."""
        return within_limits(commands, targets, self.measured, None if self.pose_limits is None else pose,
                             self.stroke_bounds, self.steps, self.pose_bounds)

    @property
    def pose_bounds(self) -> np.ndarray:
        """:attr:`pose_limits` as :func:`within_limits` takes them (empty: none)."""
        return _NO_POSE if self.pose_limits is None else self.pose_limits

    def compiled(self) -> Control | None:
        """The control, for a compiled run of many samples that checks every command with :func:`within_limits`
        (the maRTHS loop's ticks, hybridsim.coordinator.problems.marths.tick), if that is every check this gate
        makes: no declared start, no hold, no force limit; else None (the samples go through :meth:`command`).
        The kernel holds the interpreter's lock while it runs, so nothing in this process (a site clock's thread, an
        operator's call) can set a hold it would miss between two of its commands."""
        if self.start is not None or self.interlock.reason is not None or np.any(np.isfinite(self.force)):
            return None
        return self._control

    def ran(self, samples: int, measured: np.ndarray) -> None:
        """``samples`` commands were sent by a compiled run (:meth:`compiled`); the control measured ``measured``
        (m) at the last."""
        self.sample += samples
        if samples:
            self.measured = np.array(measured, float)

    def refuse(self, commands: np.ndarray, targets: np.ndarray | None, pose: np.ndarray | None) -> None:
        """Raise the refusal that names the first limit the sample breaks (nothing was sent)."""
        if self.interlock.reason is not None:
            raise ActuatorLimitExceeded(f"the site is held since {self.interlock.reason}; an operator clears the hold "
                                        "at the site (hybridsim site-control HOST:PORT --clear), nothing moves until "
                                        "then")
        sample = self.sample + 1
        if pose is not None and self.pose_limits is not None:
            beyond = np.flatnonzero(~(np.abs(pose) <= self.pose_limits))
            if beyond.size:
                i = int(beyond[0])
                raise ActuatorLimitExceeded(f"interface DOF {i + 1}: target {pose[i]:.6g} beyond the site's "
                                            f"displacement limit {self.pose_limits[i]:.6g} at sample {sample}; "
                                            "nothing was sent")
        for what, values in (("target stroke", targets), ("command", commands)):
            if values is None:
                continue
            if not np.all(np.isfinite(values)):
                raise ActuatorLimitExceeded(f"a {what} is not finite ({values.tolist()}) at sample {sample}; nothing "
                                            "was sent")
            beyond = np.flatnonzero(np.abs(values) > self.stroke)
            if beyond.size:
                i = int(beyond[0])
                raise ActuatorLimitExceeded(f"actuator {i + 1}: {what} {values[i] * 1e3:.4g} mm beyond its limit "
                                            f"{self.stroke[i] * 1e3:.4g} mm at sample {sample}; nothing was sent")
        jump = np.abs(commands - self.measured)
        i = int(np.flatnonzero(~(jump <= self.step))[0])
        raise ActuatorLimitExceeded(f"actuator {i + 1}: command {commands[i] * 1e3:.4g} mm is "
                                    f"{jump[i] * 1e3:.4g} mm from its measured stroke "
                                    f"{self.measured[i] * 1e3:.4g} mm, beyond {self.step[i] * 1e3:.4g} mm "
                                    f"per sample (increment, velocity) at sample {sample}; nothing was sent")

    def _overloaded(self, loads: np.ndarray) -> None:
        """A load beyond its limit holds the site (:attr:`tripped` says why: the site keeps the sample's record,
        then stops with :meth:`trip`)."""
        i = int(np.flatnonzero(np.abs(loads[:self.force.size]) > self.force)[0])
        self.tripped = (f"actuator {i + 1}: load cell reads {loads[i]:.6g} N, beyond its limit {self.force[i]:.6g} N "
                        f"at sample {self.sample}")
        self.interlock.hold(self.tripped)

    def trip(self) -> ActuatorLimitExceeded:
        """The refusal of the sample that put the site on hold, saying so as every later refusal does (a run's
        stop keeps it: hybridsim.coordinator.recorder.holds)."""
        reason, self.tripped = self.tripped, None
        return ActuatorLimitExceeded(f"the site is held since {reason}")

    def commit(self) -> None:
        self._control.commit()

    def state(self) -> Any:
        return self._control.state()

    def set_state(self, state: Any, measured: np.ndarray, sample: int) -> None:
        """The control taken back to ``state`` (a trial discarded, a checkpoint restored) at ``sample`` where it had
        measured ``measured`` (m); a control whose actuators go back with it (a virtual lab, a plant daemon:
        ``REWINDS``) is there again, another (a lab's controller) stays where it measured last."""
        self._control.set_state(state)
        self.sample = sample
        if getattr(self._control, "REWINDS", False):
            self.measured = self._absolute(measured)

    def check_restore(self, measured_mm: Sequence[float]) -> None:
        """Refuse a checkpoint whose measured strokes (mm) are not one finite value per actuator within the stroke
        limits, or, at a control whose actuators stay where they are (a lab's controller), farther than
        :attr:`restore_tolerance` from where its read request finds them (then the increment goes on from there).
        A control whose actuators go back with the checkpoint is checked once it has (:meth:`rewound`)."""
        values = np.asarray(measured_mm, float)
        if values.shape == self.stroke.shape:
            values = self._absolute(values, 1e3)
        if values.shape != self.stroke.shape or not np.all(np.isfinite(values)):
            raise ModuleError(f"experimental module: the checkpoint's measured strokes {values.tolist()} are not one "
                              f"finite value per actuator ({self.stroke.size}); refused, nothing moved")
        beyond = np.flatnonzero(np.abs(values) / 1e3 > self.stroke)
        if beyond.size:
            i = int(beyond[0])
            raise ModuleError(f"experimental module: the checkpoint puts actuator {i + 1} at {values[i]:.4g} mm, beyond "
                              f"its limit {self.stroke[i] * 1e3:.4g} mm; refused, nothing moved")
        if not getattr(self._control, "REWINDS", False):
            self._settle(self._control.read(), values, "bring it there (hybridsim site experimental --config SITE "
                         "--move-to STROKES) or restore a checkpoint taken where it is; refused, nothing moved")

    def rewound(self, measured_mm: Sequence[float]) -> None:
        """After a restore, at a control whose actuators went back with the checkpoint (a virtual lab, a plant
        daemon: ``REWINDS``): the increment goes on from where the control says they are now (its ``reading``,
        which neither moves nor steps), refused if that is farther than :attr:`restore_tolerance` from the
        checkpoint's measured strokes (mm) (an edited checkpoint)."""
        if getattr(self._control, "REWINDS", False):
            self._settle((self._control.reading(), None), self._absolute(measured_mm, 1e3),
                         "the checkpoint's measured strokes do not match the state it gives the control (an edited "
                         "checkpoint?): restore one as it was written; refused, and the next command is measured "
                         "from where the control is")

    def _settle(self, reading: tuple[np.ndarray, np.ndarray | None], values_mm: np.ndarray, fix: str) -> None:
        """The increment's reference is ``reading``'s strokes (m); refuse if one is farther than
        :attr:`restore_tolerance` from ``values_mm`` (the checkpoint's, mm); an overload in its loads holds the site."""
        strokes, loads = reading
        self.measured = np.array(strokes, float)
        away = np.flatnonzero(~(np.abs(strokes - values_mm / 1e3) <= self.restore_tolerance))
        if away.size:
            i = int(away[0])
            raise ModuleError(f"experimental module: actuator {i + 1} is at {strokes[i] * 1e3:.4g} mm and the "
                              f"checkpoint has it at {values_mm[i]:.4g} mm (restore_tolerance = "
                              f"{self.restore_tolerance * 1e3:.4g} mm): {fix}")
        if loads is not None and np.any(np.abs(loads[:self.force.size]) > self.force):
            self._overloaded(loads)

    def _absolute(self, strokes: Any, unit: float = 1.0) -> np.ndarray:
        """Strokes from :attr:`start` as the control's own (``unit``: of the strokes, per m: 1e3 for mm)."""
        return np.array(strokes, float) + (0.0 if self.start is None else unit * self.start)

    def close(self) -> dict[str, float]:
        return self._control.close()

    def records(self, since: int, final: bool) -> Any:
        """The control's own records (a plant daemon's DAQ log)."""
        own = getattr(self._control, "records", None)
        return [] if own is None else own(since, final)

    def checkpoint_state(self) -> Any:
        own = getattr(self._control, "checkpoint_state", None)
        return self._control.state() if own is None else own()

    @property
    def plant_stats(self) -> dict[str, Any]:
        """The figures of the plant module a plant daemon control steps (empty for other controls): a copy, never
        the module (nothing but the gate holds what moves the actuators)."""
        plant = getattr(self._control, "module", None)
        return {} if plant is None else dict(plant.stats)
