"""The `experimental` module: an experimental site behind the module interface.

The module composes OpenFresco's three families: the site (:mod:`.site`: a setup, one compensator per
actuator and a control from :mod:`.controls`), its stepping (:mod:`.stepping`: lockstep or its own clock,
chosen when a session opens) and its records (:mod:`.records`); :mod:`.config` declares and reads its table.

The coordinator sends one target per integration step (``Command.time`` =
t_n) over the site's interface DOFs; with a session dt of m control samples the site generates a target for
each of the m samples (``command_generation``: linear interpolation from the
last target, or OpenFresco's polynomial predictor-corrector, see
:mod:`hybridsim.modules.experimental.command_generation`), runs its compensators and
its backend every sample, and returns what it measured at the end of the
step: the measured pose and the DOF forces of its load cells (or, for the maRTHS
benchmark, the interface x, theta1, theta2 and the feedback force of its frame model).  The first committed command (t = 0) is the reading at
rest and must be zero; a first command at t = dt takes that reading itself.
Trial commands at t = 0 that are never committed (a coordinator's pre-test of
initial stiffness) are answered quasi-statically, with nothing moving: by the
virtual lab's specimen at the strokes of the commanded pose, by ``initial_stiffness``,
or by the frame model (the force K5 q of the commanded deformation).

Config table (a generic site: any setup, one actuator table each, forces from the load cells)::

    dt = 0.001                                  # control sample (s)
    setup = {kind = "two-actuators-2d", lengths = [1.2, 1.0], height = 0.5}   # modules/experimental/setups
    dofs = ["u", "phi"]                         # optional: the setup's DOFs renamed into the coordinator's namespace
    signs = [1, 1]                              # optional: coordinator sign -> rig sign, per DOF
    actuators = [{compensator = {kind = "none"}, stroke = 0.1, force = 2e5,    # one table per actuator: its
                  guard = {tracking = 5.0}}, ...]                              # compensator, limits (m, N), guard
    gate = {increment = 0.002, velocity = 0.1, start_tolerance = 0.001}       # optional: the gate's limits of every
                                                # command (m per sample, m/s) and of the start (m; gate.py)
    initial_stiffness = [[..], [..]]            # optional: the pre-test's r = K d when the control cannot probe
    force_control = [{dof = "z", force = -1.5e6, stiffness = 6.4e8}]  # optional: setup DOFs the site holds at a
                                                # force (not the coordinator's; force_control.py), ramped in at start
    backend = {plant = {...}}                   # a plant config (virtual lab): the lab in this process; a
                                                # specimen with coordinates = "dofs" and no setup takes the site's
            | {address = "HOST:PORT", deadline_s = 10.0}           # a plant daemon (its load cells are its forces)
            | {daemon = {...}}                  # a plant config the site starts as a local daemon
                                                # with a daemon: transport = "auto" (default), "link",
                                                # "stream" or "unary" (as a module's in an experiment), and
                                                # network = {round_trip_s, jitter_s, loss, retransmit_s, seed}:
                                                # the site's link to it across an emulated path
            | {generic_tcp = "HOST:PORT", channels = 2}  # a lab's controller over OpenFresco's generic TCP
                                                # protocol (ECGenericTCP; docs/interop.md)
                                                # (each a control: hybridsim.modules.experimental.controls)
    record = "site.h5"                          # optional: the site's record, also written into this file
                                                # (appended every 65,536 samples and at close; the
                                                # coordinator streams it into the results file unless
                                                # its output.records = false: records(), /modules/<name>/records/)
    command_generation = "interpolate"          # default; or {scheme = "predictor-corrector", order = 2,
                                                #   arrival = 0.3}: the new target reaches the site 0.3 Dt
                                                #   into the step (m control samples per step Dt; with
                                                #   clock = "own": no earlier than that)
    clock = "lockstep"                          # default; "own": the control loop on the wall clock in its own
                                                #   thread (hybridsim.modules.experimental.clock, docs/realtime.md)
    event_driven = {slow = 0.6, hold = 0.9, rate = 0.5}   # clock = "own": slow / hold past these shares of the step
    time_scale = 10.0                           # clock = "own": continuous pseudo-dynamic, 10x slower than real time
    scheduling = {priority = 80, cpu = 1, spin_us = 200}  # clock = "own": SCHED_FIFO, pinned, busy-wait tail

The maRTHS benchmark's site (forces from the frame model fed by the measured motion)::

    dofs = ["x", "theta", "theta_free"]         # names in the coordinator's namespace
    kinds = ["translation", "rotation", "rotation"]
    signs = [1, -1, -1]                         # coordinator sign -> frame sign, per DOF
    coupler = {offset = .., heights = [.., ..], angles_deg = [.., ..]}   # the marths-coupler setup with the
                                                # benchmark's inverse estimate (or setup = {kind = "marths-coupler"})
    compensators = [{kind = "rls", ...}, {kind = "rls", ...}]      # one per actuator (or actuators = [...])
    guards = [{volts = 3.8, volts_per_unit = .., volts_offset = ..}, {...}]  # optional: runaway guards
                                                # (hybridsim.modules.experimental.guards.Limits), one per actuator
    frame = {beam_length = .., column_length = .., ...}            # PortalFrame fields
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.modules.base import StepLedger
from hybridsim.modules.experimental.clock import ClockSettings, SiteClock
from hybridsim.modules.experimental.config import (CONFIG, actuator_tables, command_generator, interface_dofs,
                                                   output_path, per_actuator, site_setup, step_samples)
from hybridsim.modules.experimental.controls import OpenContext, check_control, named, open_control
from hybridsim.modules.experimental.forces import CANNOT_PROBE
from hybridsim.modules.experimental.gate import Interlock
from hybridsim.modules.experimental.relaxation import Relaxation
from hybridsim.modules.experimental.records import SiteRecords
from hybridsim.modules.experimental.site import build_site, prime_site
from hybridsim.modules.experimental.stepping import Lockstep, OwnClock
from hybridsim.wire.contract import (FORCE_CONTROLLED, Command, Description, ModuleError, Record, Session,
                                     StepRefused)

__all__ = ["ExperimentalModule", "build_site", "CONFIG", "RECORD_FILE_BLOCK"]

RECORD_FILE_BLOCK = 65536
"""samples the site holds before it appends them to its record file (``record = "site.h5"``)"""


class ExperimentalModule(StepLedger):
    """An :class:`~hybridsim.modules.experimental.site.ExperimentalSite` as a module, rebuilt at every ``open``:
    the site (setup + control + compensators), its stepping (lockstep or its own clock) and its records."""

    kind = "experimental"
    exclusive_sessions = True
    """a lab: a second coordinator's Open is refused while a session is open, unless it takes over"""
    CONFIG = CONFIG

    def __init__(self, config: Mapping[str, Any], base_dir: Path | None = None) -> None:
        super().__init__()
        self.config = dict(config)
        CONFIG.check(self.config)
        self.base_dir = base_dir
        rig = site_setup(self.config)
        self.dofs = interface_dofs(self.config, rig)
        actuator_tables(self.config, rig.actuators)
        for key in ("increment", "velocity", "start"):
            per_actuator(self.config.get("gate", {}), key, 0.0, rig.actuators)
        self.actuators = rig.actuators
        self.control_dt = float(self.config["dt"])
        self.record_path = None if "record" not in self.config else output_path(base_dir, self.config["record"])
        check_control(self.config["backend"], self.control_dt, rig.actuators)
        self.clock_settings = ClockSettings.from_config(self.config)
        """None: lockstep; else the site runs on its own clock (:mod:`hybridsim.modules.experimental.clock`)"""
        command_generator(self.config, self.clock_settings, 1)  # what spans its keys (an arrival, or a clock)
        if self.clock_settings is not None and "force_control" in self.config:
            raise ModuleError("experimental module: force_control ramps its targets in before the test in lockstep; "
                              "drop clock = \"own\" or force_control")
        if self.clock_settings is not None and "relaxation" in self.config:
            raise ModuleError("experimental module: the relaxation check holds a step's target in lockstep; a site "
                              "on its own clock holds by the wall clock: drop relaxation or clock = \"own\"")
        self.held_dofs = [table["dof"] for table in self.config.get("force_control", [])]
        """the setup DOFs the site holds at a force: a lab protocol's client may command their targets"""
        self.force_dofs = len(self.held_dofs)
        self.stepping: Lockstep | None = None
        self.records_: SiteRecords | None = None
        self._n = -1
        self._control_stack = contextlib.ExitStack()
        self.interlock = Interlock()
        """the site's hold: it outlives sessions, restores and reconnections until an operator clears it"""
        self.pose_limits: np.ndarray | None = None
        """|target| per interface DOF (the site's ``[limits]`` displacement, set by them): the gate checks every
        sample's target, the own clock's predictions too"""

    @classmethod
    def from_config(cls, config: Mapping[str, Any], base_dir: Path | None = None) -> ExperimentalModule:
        return cls(config, base_dir)

    @property
    def site(self) -> Any:
        """The site of the open session (None before the first)."""
        return None if self.stepping is None else self.stepping.site

    @property
    def clock(self) -> SiteClock | None:
        """The site's own clock in the open session (None: lockstep)."""
        return None if self.stepping is None else self.stepping.clock

    @property
    def _committed_sample(self) -> int:
        """The last control sample committed (-1: none)."""
        return -1 if self.stepping is None else self.stepping.committed_sample

    @property
    def _plant_stats(self) -> dict[str, Any]:
        """The figures of the plant module a plant daemon control drives (empty: no such control)."""
        return {} if self.site is None or self.site.backend is None else self.site.backend.plant_stats

    def describe(self) -> Description:
        return Description(kind=self.kind, dofs=self.dofs, own_clock=self.clock_settings is not None,
                           control_dt=self.control_dt,
                           info={"force": "feedback force of the frame model from the measured motion"
                                 if "frame" in self.config else "DOF forces of the load cells through the setup, "
                                 "J(q)^T f at the measured pose q",
                                 "step": "the target of t_n; the result is measured at t_n (t = 0: at rest)"}
                           | ({FORCE_CONTROLLED: ",".join(self.held_dofs)} if self.held_dofs else {}))

    @classmethod
    def session_refusal(cls, config: Mapping[str, Any], dt: float) -> str | None:
        """Why a site of ``config`` cannot run steps of ``dt`` (s): not a whole number of its control samples,
        a ``time_scale`` that makes a step no whole number of samples on its own clock, an RLS compensator
        behind a predicting command generation of order 2 or 3, or load-cell forces from a control that cannot
        probe its specimen (a plant daemon, a lab's controller) without ``initial_stiffness`` (None: it can)."""
        if not isinstance(config.get("dt"), (int, float)):
            return None  # building the site names the missing dt
        try:
            step_samples(config, ClockSettings.from_config(config), dt)
        except ModuleError as exc:
            return str(exc).removeprefix("experimental module: ")
        control = named(config.get("backend"))
        if control is not None and not control.PROBES and "frame" not in config and "initial_stiffness" not in config:
            return CANNOT_PROBE  # the pre-test (the run's first step) would stop the run, after its daemons started
        return None

    @classmethod
    def checkpoint_refusal(cls, config: Mapping[str, Any]) -> str | None:
        if config.get("clock") == "own":
            return ("it runs on its own clock (clock = \"own\"): its actuators never stop, so a step cannot be "
                    "taken back to a checkpoint; set output.checkpoint_every = 0")
        control = named(config.get("backend"))
        return None if control is None else control.CHECKPOINT_REFUSAL  # type: ignore[no-any-return]

    def _on_open(self, session: Session) -> None:
        samples, clocked = step_samples(self.config, self.clock_settings, session.dt)
        if self.stepping is not None:
            self.stepping.stop()  # a session opened over an open one: its clock stops before its control closes
        self._close_control()
        prime_site(self.config)
        setup = self.config.get("setup")
        control = open_control(self.config["backend"], OpenContext(
            self.control_dt, self._control_stack, self.base_dir, setup if isinstance(setup, Mapping) else None,
            session.records, samples, session.iterating, self.actuators))
        site = build_site(self.config, control, record=session.records or self.record_path is not None,
                          interlock=self.interlock)
        site.backend.pose_limits = self.pose_limits
        generator = command_generator(self.config, self.clock_settings, samples)
        if self.clock_settings is None:
            relaxation = self.config.get("relaxation")
            self.stepping = Lockstep(site, generator, session.dt, len(self.dofs),
                                     None if relaxation is None else Relaxation(relaxation, self.interlock))
        else:
            own = command_generator(self.config, self.clock_settings, clocked)
            clock = SiteClock(site.advance, site.commit, self.control_dt, clocked, max(own.order, 1),
                              getattr(own, "predicted", 0), self.clock_settings)
            self.stepping = OwnClock(site, generator, session.dt, len(self.dofs), clock)
        self.records_ = SiteRecords(site, self.control_dt, self.record_path, session.records, self.stepping.clock)

    def propose(self, step: int, command: Command) -> None:
        """As every module's; on its own clock the site receives the target now (its arrival time)."""
        super().propose(step, command)
        if self._n > 0:
            self.stepping.received(self._n, command.displacement)  # type: ignore[union-attr]

    def _check(self, step: int, command: Command) -> None:
        self._n = self.stepping.check(step, command.time)  # type: ignore[union-attr]
        """where the command proposed last ends its step (0: at rest; see the stepping)"""

    def _trial(self, step: int, command: Command) -> tuple[np.ndarray, np.ndarray]:
        stepping = self.stepping
        assert stepping is not None
        if self._n == 0:  # the reading at rest, or a pre-test probe (nothing moves)
            rest = stepping.at_rest()
            probing = np.any(command.displacement != 0.0) or rest is None
            response = stepping.site.probe(command.displacement) if probing else rest
        else:
            if self.force_dofs:
                stepping.site.forces.command(command.force, command.time)
            response = stepping.trial(self._n, command.displacement)
        return response.displacement, response.force

    def _changed_counters(self) -> dict[str, float] | None:
        assert self.stepping is not None
        return self.stepping.counters() or None

    def _accept(self, step: int) -> None:
        stepping, records = self.stepping, self.records_
        assert stepping is not None and records is not None and self._proposed is not None
        command = self._proposed[1]
        if self._n == 0 and np.any(command.displacement != 0.0):
            raise StepRefused(step, "a pre-test probe at t = 0 is never committed: commit zero (the rest state)")
        stepping.accept(command.displacement)
        committed = stepping.committed_sample
        if records.path is not None and committed - records.filed >= RECORD_FILE_BLOCK:
            with stepping.lock():
                records.file(committed)  # the last sample's target comes with the next step
        elif (stepping.clock is not None and not records.asked and records.path is None
              and committed - stepping.clock.sample_log.first >= RECORD_FILE_BLOCK):
            with stepping.lock():  # nobody keeps the clock's records: only its stats
                records.forget(committed)

    def _discard(self) -> None:
        if self.stepping is not None:
            self.stepping.discard()

    def close(self) -> dict[str, float]:
        stats = super().close()
        stepping, records = self.stepping, self.records_
        if stepping is not None and records is not None:
            stats.update(stepping.stop())
            if records.path is not None:
                stepping.site.record.hold(stepping.committed_sample)
                records.file(stepping.committed_sample + 1)
        stats.update(self._close_control())
        return stats

    def records(self, since: int = 0, final: bool = True) -> list[Record]:
        """Per committed control sample k, streamed (see :class:`hybridsim.wire.contract.Record`): the time,
        target strokes, commands and measured strokes of every actuator (mm, as the site logs them) and its
        load cell (N), from sample ``since`` on (the samples before are stored: the site forgets them).
        At the end (``final``) also each compensator's adapted parameters and a plant daemon's DAQ log
        (``plant/...``).  A site restored from a checkpoint has no samples before it: those rows start
        later (``first_row``) and the ones between stay unfilled."""
        stepping, records = self.stepping, self.records_
        if stepping is None or records is None:
            return []
        with stepping.lock():
            return records.stream(since, final, stepping.committed_sample)

    def _close_control(self) -> dict[str, float]:
        """Close the control of the last session (a lab lets go of its specimen, a daemon's session ends) and
        stop what its open started; its figures."""
        site = self.site
        figures = {} if site is None or site.backend is None else site.backend.close()
        if site is not None:
            site.backend = None
        with self._control_stack:
            return figures

    def _save_state(self) -> object:
        if self.stepping is None:
            raise ModuleError("experimental module: no site to checkpoint (the module is not open)")
        state = self.stepping.state()
        checkpoint_state = getattr(self.site.backend, "checkpoint_state", None)
        if checkpoint_state is not None:  # a plant daemon: its committed state goes into the checkpoint
            state["site"]["backend"] = checkpoint_state()
        return state

    def _load_state(self, state: object) -> None:
        assert self.stepping is not None and isinstance(state, dict)
        try:
            measured = state["site"]["measured_mm"]
        except (KeyError, TypeError):
            raise ModuleError("experimental module: the checkpoint has no measured strokes; refused, nothing moved")
        self.site.backend.check_restore(measured)
        self.stepping.set_state(state)
        self.site.backend.rewound(measured)
