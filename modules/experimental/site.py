"""The experimental site: setup + one compensator per actuator + control (behind its gate) + force source.

One control sample per :meth:`ExperimentalSite.advance`: the interface target becomes the setup's DOFs (the
force source says how), the setup's forward map gives one target stroke per actuator, each actuator's
compensator turns its target into a command, the control holds the commands over the sample and returns the
strokes measured at its end (and its load cells), the setup's inverse gives the measured pose and the force
source the interface displacements and forces.  :meth:`ExperimentalSite.start` is the reading at rest.

Interface values are multiplied by ``signs`` (+-1 per interface DOF) to get the rig's own sign convention;
forces use the same signs.  The compensators see millimetres, the rest is SI.  The site reaches its control
only through its gate (:mod:`hybridsim.modules.experimental.gate`), which applies every actuator limit before
a command is sent (:class:`ActuatorLimitExceeded`).  :func:`build_site` assembles a site from its
validated config (:mod:`hybridsim.modules.experimental.config`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hybridsim.modules.experimental.compensators.base import Compensator
from hybridsim.modules.experimental.compensators.kinds import build_compensator
from hybridsim.modules.experimental.config import actuator_tables, interface_dofs, per_actuator, site_setup
from hybridsim.modules.experimental.controls import Control
from hybridsim.modules.experimental.controls.at_rest import AtRest
from hybridsim.modules.experimental.force_control import ForceControlled
from hybridsim.modules.experimental.forces import ForceSource, LoadCells
from hybridsim.modules.experimental.gate import ActuatorLimitExceeded, Gate, Interlock
from hybridsim.modules.experimental.guards import GuardedCompensator, Limits
from hybridsim.modules.experimental.physical_frame import FrameFeedback
from hybridsim.modules.experimental.records import SiteRecord
from hybridsim.modules.experimental.setups.base import Setup
from hybridsim.wire.contract import ModuleError

MM_PER_M = 1000.0


@dataclass(frozen=True)
class SiteResponse:
    """What the site measured at the end of a sample, in the coordinator's interface DOFs."""

    displacement: np.ndarray
    """interface displacements (m, rad): the measured pose (and, for the frame model, its free rotation)"""
    force: np.ndarray
    """interface forces (N, N*m)"""


class ExperimentalSite:
    """Setup + compensators + gated control + force source, advanced one control sample at a time."""

    def __init__(self, setup: Setup, compensators: Sequence[Compensator], forces: ForceSource, backend: Gate,
                 signs: Sequence[float], record: bool = True) -> None:
        if len(compensators) != setup.actuators:
            raise ValueError(f"the setup has {setup.actuators} actuators: give one compensator per actuator, "
                             f"not {len(compensators)}")
        self.setup = setup
        self.compensators = tuple(compensators)
        self.forces = forces
        self.backend = backend
        """the gate, the site's only way to its control"""
        self.signs = np.asarray(signs, float)
        if self.signs.ndim != 1 or not np.all(np.abs(self.signs) == 1.0):
            raise ValueError("signs: one factor of +1 or -1 per interface DOF")
        n = setup.actuators
        self._adaptive = [c for c in self.compensators if c.parameters().size]
        """the compensators whose parameters the record keeps"""
        self.parameter_names = tuple(f"actuator_{i}/p{j}" for i, c in enumerate(self.compensators, 1)
                                     for j in range(c.parameters().size))
        """the record's compensator_parameters columns: actuator i's parameter j"""
        self.record = SiteRecord(n, isinstance(forces, LoadCells), cells=setup.cells, keep=record,
                                 parameters=len(self.parameter_names))
        self.sample = -1
        """the last measured sample (-1: not started)"""
        self._measured_mm = np.zeros(n)
        self._commands_mm = np.zeros(n)

    def start(self) -> SiteResponse:
        """The reading at rest (sample 0), before any command: the control's read request, nothing moves; then, at
        a site with force-controlled DOFs, the samples that ramp their targets in (the other DOFs at rest)."""
        if self.sample != -1:
            raise RuntimeError("the site has already started")
        strokes, loads = self.backend.read()
        self.sample = 0
        self._measured_mm = strokes * MM_PER_M
        self.record.rest(self._measured_mm, loads)
        if self.backend.tripped is not None:
            raise self.backend.trip()
        displacement, force = self.forces.respond(strokes, loads)
        response = SiteResponse(self.signs * displacement, self.signs * force)
        while self.forces.settling():
            response = self.advance(np.zeros(self.signs.size))
        return response

    def advance(self, target: np.ndarray) -> SiteResponse:
        """Move toward the interface ``target`` for one sample, through the gate; return what was measured."""
        targets = self.setup.strokes(self.forces.setup_target(target * self.signs))
        targets_mm = targets * MM_PER_M
        commands_mm = self._commands_mm
        commands_mm[:] = [compensator.command(t, m) for compensator, t, m
                          in zip(self.compensators, targets_mm.tolist(), self._measured_mm.tolist())]
        strokes, loads = self.backend.command(commands_mm / MM_PER_M, targets, target)
        self._measured_mm = strokes * MM_PER_M
        self.sample += 1
        parameters = (np.concatenate([c.parameters() for c in self._adaptive])
                      if self._adaptive and self.record.keep else None)
        self.record.sample(self.sample, targets_mm, commands_mm, self._measured_mm, loads, parameters)
        if self.backend.tripped is not None:
            raise self.backend.trip()
        displacement, force = self.forces.respond(strokes, loads)
        return SiteResponse(self.signs * displacement, self.signs * force)

    @property
    def measured_mm(self) -> np.ndarray:
        """The strokes measured at the last sample (mm), a copy."""
        return self._measured_mm.copy()

    def ran(self, samples: int, targets_mm: np.ndarray, commands_mm: np.ndarray, measured_mm: np.ndarray,
            parameters: np.ndarray) -> None:
        """``samples`` control samples were taken by a compiled run over the parts' own arrays (the maRTHS loop's
        ticks, hybridsim.coordinator.problems.marths.tick): their target strokes, commands, measured strokes (mm)
        and compensator parameters (one row per sample) join the record, the last measurement is the site's."""
        if samples:
            self.record.block(self.sample + 1, targets_mm[:samples], commands_mm[:samples], measured_mm[:samples],
                              parameters[:samples])
            self.sample += samples
            self._measured_mm = measured_mm[samples - 1].copy()
            self._commands_mm[:] = commands_mm[samples - 1]

    def probe(self, command: np.ndarray) -> SiteResponse:
        """A quasi-static probe before the test (pre-test of initial stiffness): nothing moves, nothing is
        recorded."""
        displacement, force = self.forces.probe(command * self.signs)
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
        self.backend.set_state(state["backend"], self._measured_mm / MM_PER_M, self.sample)


def build_site(config: Mapping[str, Any], backend: Control, compensators: Sequence[Compensator] | None = None,
               record: bool = True, interlock: Interlock | None = None) -> ExperimentalSite:
    """The site a validated config describes, its control ``backend`` behind the gate of the actuators' limits
    (``interlock``: the site's hold, which outlives the site); ``compensators`` replace the config's own (and
    its guards) if given; ``record``: it logs every sample (:class:`SiteRecord`)."""
    try:
        dt = float(config["dt"])
        setup = site_setup(config)
        tables = actuator_tables(config, setup.actuators)
        if compensators is None:
            compensators = [_guarded(t.get("guard"), build_compensator(t.get("compensator", {"kind": "none"})), dt,
                                     i) for i, t in enumerate(tables, start=1)]
        limits = {key: [float(t.get(key, np.inf)) for t in tables] for key in ("stroke", "force")}
        gate_table = config.get("gate", {})
        limits.update({key: per_actuator(gate_table, key, np.inf, setup.actuators)
                       for key in ("increment", "velocity")})
        if np.any(np.isfinite(limits["force"])) and not setup.actuator_cells:
            raise ValueError("actuators[].force: this rig's load cells are not the actuators' (it reads "
                             f"{setup.cells} others), so there is no actuator load to limit")
        gate = Gate(backend, setup.actuators, dt, interlock=interlock,
                    start_tolerance=float(gate_table.get("start_tolerance", 1e-3)),
                    restore_tolerance=float(gate_table.get("restore_tolerance", 1e-3)),
                    start=per_actuator(gate_table, "start", 0.0, setup.actuators),
                    **limits)
        dofs = len(interface_dofs(config, setup))
        if "frame" in config:
            forces: ForceSource = FrameFeedback.of(config, setup, dt)
        else:
            forces = LoadCells(setup, gate.probe if gate.probes else None, _stiffness(config, dofs))
        if "force_control" in config:
            forces = ForceControlled.of(config["force_control"], forces)
        signs = config.get("signs", (1.0,) * dofs)
        return ExperimentalSite(setup, compensators, forces, gate, signs, record=record)
    except KeyError as exc:
        raise ModuleError(f"experimental module: {exc.args[0]!r} is missing from the config") from None
    except (TypeError, ValueError) as exc:
        raise ModuleError(f"experimental module: {exc}") from None


def _stiffness(config: Mapping[str, Any], dofs: int) -> np.ndarray | None:
    """``initial_stiffness``: a finite DOFs x DOFs matrix (the pre-test's r = K d), or None."""
    if "initial_stiffness" not in config:
        return None
    stiffness = np.asarray(config["initial_stiffness"], float)
    if stiffness.shape != (dofs, dofs) or not np.all(np.isfinite(stiffness)):
        raise ModuleError(f"experimental module: initial_stiffness must be a finite {dofs} x {dofs} matrix (one row "
                          "per DOF)")
    return stiffness


def _guarded(table: Mapping[str, Any] | None, compensator: Compensator, dt: float, actuator: int) -> Compensator:
    """The compensator inside the runaway guard of its table, if any."""
    if table is None:
        return compensator
    return GuardedCompensator(compensator, Limits(**{k: float(v) for k, v in table.items()}), f"actuator {actuator}", dt)


def prime_site(config: Mapping[str, Any]) -> None:
    """Run two samples of a throwaway site of ``config`` at rest, so that the compiled per-sample kernels
    (hybridsim.modules.kernels) are loaded into this process before a test's first step, not during it (a lab's
    real-time controller is loaded before its clock starts)."""
    setup = site_setup(config)
    plain = {k: v for k, v in config.items()  # a lab at zero strokes: no declared start, no force control
             if k not in ("gate", "force_control", "dofs", "signs", "initial_stiffness")}
    site = build_site(plain, AtRest(setup.actuators, setup.cells))
    site.start()
    for _ in range(2):
        site.advance(np.zeros(len(site.signs)))
        site.commit()
