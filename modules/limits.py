"""Safety at the site: per-DOF limits checked in ``propose`` before anything moves, and operator confirmation.

A site's configuration may carry a ``[limits]`` table; :func:`with_limits`
then wraps the module so that every new command is checked against:

``displacement``  max |d| (m, rad) per DOF
``increment``     max |d - d_now| per step, where d_now is the last executed command (m, rad)
``velocity``      max |d - d_now| / dt (m/s, rad/s), dt the session's: a coordinator's integration step, or
                  the step a lab protocol's session is given by the site's own configuration (a protocol whose
                  client sends no time step, at a site that declares none, is refused: never an assumed 1 s)
``force``         max |f| (N, N*m): before moving, the force predicted with ``force_stiffness``
                  (the diagonal stiffness estimate, N/m) as f_now + k (d - d_now); after moving, an
                  interlock refuses every further step once a measured force exceeds the limit

Each value is a number for every DOF or a list with one number per DOF.  A
refused step puts the site on hold: the actuators keep their last command
and every later proposal is refused with the original reason until a new
session opens; a hold from a measured overload stays across new sessions, restores and the site's
restarts with ``--hold-file`` (:class:`Interlock`, until an operator clears it: hybridsim site-control --clear).  ``confirm_first = N`` asks the operator at the site's
terminal to confirm each of the first N steps (as UI-SIMCOR's lab plugins do).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.modules.base import checkpoint_json
from hybridsim.modules.config_schema import Integer, Key, Number, Numbers, Schema
from hybridsim.wire.contract import (Command, Description, Module, ModuleError, Record, Session, StepRefused, StepResult,
                                     module_records)

log = logging.getLogger("hybridsim.site")

LIMIT_KINDS = ("displacement", "increment", "velocity", "force")


def _per_dof(unit: str) -> Numbers:
    return Numbers(unit, (0, 1), Number(minimum=0))


CONFIG = Schema("limits", "The site's safety limits, checked in propose before anything moves; each bound is one "
                "number for every DOF or a list with one number per DOF.", {
                    "displacement": Key(_per_dof("m or rad"), "max |d| per DOF"),
                    "increment": Key(_per_dof("m or rad"), "max |d - d_now| per step"),
                    "velocity": Key(_per_dof("m/s or rad/s"), "max |d - d_now| / dt"),
                    "force": Key(_per_dof("N or N*m"), "max |f|: predicted before moving (with force_stiffness), "
                                 "and an interlock on the measured force after"),
                    "force_stiffness": Key(_per_dof("N/m or N*m/rad"), "diagonal stiffness that predicts the force",
                                           default=0.0),
                    "confirm_first": Key(Integer(0, unit="steps"), "the operator confirms each of the first N steps "
                                         "at the site's terminal", default=0),
                })
Confirm = Callable[[str], bool]


def terminal_confirm(question: str) -> bool:
    """Ask on the site's terminal; anything but y/yes refuses."""
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


class Interlock:
    """A site's hold: once set (a measured overload, a relaxation beyond its threshold), every command is refused
    until an operator clears it; it belongs to the site, not to a session (a daemon hands it to the module of
    each new session)."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._lock = threading.Lock()
        """a site clock's thread may set the hold while the operator's call clears it"""
        self.paths: list[Path] = []
        """the files that show the hold (the site's ``--hold-file``, kept across its restarts; the notice its
        operator's other commands read: :mod:`hybridsim.modules.experimental.held`)"""

    def keep_in(self, path: Path) -> None:
        """Keep the hold in ``path`` too from now on (written when set, removed when cleared); a hold the file
        holds already (a site restarted while held) is the site's at once."""
        path = Path(path)
        self.paths.append(path)
        if path.exists():
            self.hold(path.read_text().strip() or "a hold kept in " + str(path))
        elif self.reason is not None:
            self._write(self.reason)

    def hold(self, reason: str) -> None:
        with self._lock:
            if self.reason is not None:
                return
            self.reason = reason
            self._write(reason)
        log.warning("site held: %s (every command refused until an operator clears the hold)", reason)

    def clear(self, operator: str) -> str | None:
        """Clear the hold (logged with ``operator``); the reason it had."""
        with self._lock:
            reason, self.reason = self.reason, None
            for path in self.paths:
                path.unlink(missing_ok=True)
        if reason is not None:
            log.warning("site hold cleared by %s (it was: %s)", operator, reason)
        return reason

    def _write(self, reason: str) -> None:
        for path in self.paths:
            partial = path.with_name(path.name + ".partial")
            partial.write_text(reason + "\n")
            os.replace(partial, path)


@dataclass(frozen=True)
class SafetyLimits:
    """Per-DOF bounds (inf where not set) and the number of steps to confirm."""

    displacement: np.ndarray
    increment: np.ndarray
    velocity: np.ndarray
    force: np.ndarray
    force_stiffness: np.ndarray
    confirm_first: int = 0

    @classmethod
    def from_config(cls, table: Mapping[str, Any], ndof: int) -> "SafetyLimits":
        CONFIG.check(table, "limits")
        values = {key: _dof_values(table, key, ndof, np.inf) for key in LIMIT_KINDS}
        stiffness = _dof_values(table, "force_stiffness", ndof, 0.0)
        return cls(**values, force_stiffness=stiffness, confirm_first=table.get("confirm_first", 0))


def _dof_values(table: Mapping[str, Any], key: str, ndof: int, default: float) -> np.ndarray:
    """The bound ``key`` for each of ``ndof`` DOFs (its declared type already checked)."""
    if key not in table:
        return np.full(ndof, default)
    try:
        return np.broadcast_to(np.asarray(table[key], dtype=float), (ndof,)).copy()
    except ValueError:
        raise ModuleError(f"limits.{key} must be a number or a list of {ndof} numbers (one per DOF)") from None


class LimitedModule:
    """A module behind the site's safety limits; everything else passes through."""

    exclusive_sessions = True
    """a site with limits moves something: a second coordinator's Open is refused unless it takes over"""

    def __init__(self, inner: Module, limits: SafetyLimits, confirm: Confirm = terminal_confirm) -> None:
        self.inner = inner
        self.limits = limits
        self.confirm = confirm
        self._names: tuple[str, ...] = ()
        self._units: tuple[tuple[str, str], ...] = ()
        self._dt = 0.0
        self._now: np.ndarray | None = None
        self._force: np.ndarray | None = None
        self._hold: str | None = None
        """a refused command's hold: it lasts as long as the session"""
        self._interlock = getattr(inner, "interlock", None) or Interlock()
        if hasattr(inner, "pose_limits"):  # an experimental site: its gate checks every sample's target
            inner.pose_limits = limits.displacement  # type: ignore[attr-defined]
        self._proposed: tuple[int, np.ndarray] | None = None
        self._confirmed = 0

    @property
    def interlock(self) -> Interlock:
        """The site's hold from a measured overload (shared with an inner site's gate)."""
        return self._interlock

    @interlock.setter
    def interlock(self, interlock: Interlock) -> None:
        self._interlock = interlock
        if hasattr(self.inner, "interlock"):
            self.inner.interlock = interlock  # type: ignore[attr-defined]

    def describe(self) -> Description:
        return self.inner.describe()

    def open(self, session: Session) -> None:
        if np.any(np.isfinite(self.limits.velocity)) and not session.dt_declared:
            raise ModuleError(f"limits.velocity: the session {session.run_id or ''} carries no time step and the site "
                              "declares none: set the step's dt in the site's table of that protocol (e.g. "
                              "[openfresco] dt = 0.01), or drop limits.velocity; refused, nothing moved")
        self.inner.open(session)
        self._names, self._dt = tuple(session.dof_names), session.dt
        self._units = tuple((d.unit, d.force_unit) for d in self.inner.describe().dofs)
        n = len(self._names)
        self._now, self._force = np.zeros(n), np.zeros(n)
        self._proposed, self._confirmed, self._hold = None, 0, None  # a refused command held the last session

    def propose(self, step: int, command: Command) -> None:
        d = np.asarray(command.displacement, float)
        if self._proposed is not None and self._proposed[0] == step and np.array_equal(self._proposed[1], d):
            self.inner.propose(step, command)  # a retry: already checked
            return
        held = self._hold or self._interlock.reason
        if held is not None:
            raise StepRefused(step, f"site on hold: {held}" + ("" if self._hold else "; an operator clears it at the "
                                                               "site (hybridsim site-control HOST:PORT --clear)"))
        if self._now is not None and d.shape == self._now.shape:
            reason = self._violation(d)
            if reason is not None:
                self._hold = f"step {step}: {reason}"
                raise StepRefused(step, f"{reason}; the site is on hold, actuators keep their last command")
            if self._confirmed < self.limits.confirm_first:
                targets = ", ".join(f"{name} = {value:.6g}" for name, value in zip(self._names, d))
                if not self.confirm(f"step {step}: move to {targets}?"):
                    self._hold = f"step {step}: the operator did not confirm"
                    raise StepRefused(step, "the operator did not confirm the step; the site is on hold")
                self._confirmed += 1
        self.inner.propose(step, command)
        self._proposed = (step, d.copy())

    def _violation(self, d: np.ndarray) -> str | None:
        """The first limit the command breaks, naming the limit, the DOF and the values; None if none."""
        lim, now = self.limits, self._now
        assert now is not None and self._force is not None
        increment = np.abs(d - now)
        predicted_force = np.abs(self._force + lim.force_stiffness * (d - now))
        checks = (("displacement", np.abs(d), lim.displacement, "{0}"),
                  ("increment", increment, lim.increment, "{0} per step"),
                  ("velocity", increment / self._dt, lim.velocity, "{0}/s"),
                  ("force", predicted_force, lim.force, "{1} (predicted)"))
        for kind, value, bound, unit in checks:
            over = np.flatnonzero(value > bound)
            if over.size:
                i = int(over[0])
                return (f"{kind} limit on DOF {self._names[i]!r}: {value[i]:.6g} > {bound[i]:.6g} "
                        f"{unit.format(*self._units[i])}")
        return None

    def execute(self, step: int) -> StepResult:
        result = self.inner.execute(step)
        self._now, self._force = np.array(result.displacement, float), np.array(result.force, float)
        over = np.flatnonzero(np.abs(self._force) > self.limits.force)
        if over.size:
            i = int(over[0])
            self._interlock.hold(f"measured at step {step}: force limit on DOF {self._names[i]!r}: "
                                 f"{self._force[i]:.6g} > {self.limits.force[i]:.6g} {self._units[i][1]}")
        return result

    def commit(self, step: int) -> None:
        self.inner.commit(step)

    def checkpoint(self) -> bytes:
        """The inner module's checkpoint plus where the actuators are (the reference of the next increment)
        and a hold from a measured overload, which a restore keeps."""
        if self._now is None or self._force is None:
            raise ModuleError("the site is not open: open a session before a checkpoint")
        return json.dumps({"inner": base64.b64encode(self.inner.checkpoint()).decode(), "now": self._now.tolist(),
                           "force": self._force.tolist(), "hold": self._interlock.reason}).encode()

    def restore(self, state: bytes) -> None:
        """Back to a checkpoint whose position and force are one finite value per DOF, the position within the
        displacement limit (else refused, nothing moved); a hold is never lifted by it (one the checkpoint
        kept is set again)."""
        data = checkpoint_json(state, "not a checkpoint of a site with limits")
        try:
            inner, hold = base64.b64decode(data["inner"]), data.get("hold")
            now, force = (np.array(data[key], float) for key in ("now", "force"))
        except (ValueError, KeyError, TypeError) as exc:
            raise ModuleError(f"not a checkpoint of a site with limits: {exc}") from None
        n = len(self._names)
        for key, values in (("now", now), ("force", force)):
            if values.shape != (n,) or not np.all(np.isfinite(values)):
                raise ModuleError(f"the checkpoint's {key} {values.tolist()} is not one finite value per DOF ({n}); "
                                  "refused, nothing moved")
        beyond = np.flatnonzero(np.abs(now) > self.limits.displacement)
        if beyond.size:
            i = int(beyond[0])
            raise ModuleError(f"the checkpoint puts DOF {self._names[i]!r} at {now[i]:.6g}, beyond its displacement "
                              f"limit {self.limits.displacement[i]:.6g}; refused, nothing moved")
        self.inner.restore(inner)
        self._now, self._force = now, force
        if isinstance(hold, str) and hold.startswith("measured"):
            self._interlock.hold(hold)
        self._proposed = None

    def finish(self) -> None:
        finish_run(self.inner)

    def close(self) -> dict[str, float]:
        summary = dict(self.inner.close())
        summary["on_hold"] = float((self._hold or self._interlock.reason) is not None)
        return summary

    def records(self, since: int = 0, final: bool = True) -> list[Record]:
        return module_records(self.inner, since, final)


def with_limits(module: Module, table: Mapping[str, Any] | None, confirm: Confirm = terminal_confirm) -> Module:
    """``module`` behind the limits of a site's ``[limits]`` table (unchanged when there is none)."""
    if not table:
        return module
    if not isinstance(table, Mapping):
        raise ModuleError("limits must be a table, e.g. [limits] displacement = 0.05")
    return LimitedModule(module, SafetyLimits.from_config(table, len(module.describe().dofs)), confirm)
