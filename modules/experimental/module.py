"""The `experimental` module: an experimental site behind the module interface.

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
    initial_stiffness = [[..], [..]]            # optional: the pre-test's r = K d when the control cannot probe
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
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, get_args

import numpy as np

from hybridsim.modules.base import StepLedger
from hybridsim.modules.config_schema import Integer, Key, Names, Number, Numbers, Schema, Table, Tables, Text
from hybridsim.modules.experimental import clock, command_generation, guards, kinematics, physical_frame
from hybridsim.modules.experimental.compensators import kinds as compensator_kinds
from hybridsim.modules.experimental.setups import kinds as setup_kinds
from hybridsim.modules.plant import module as plant_module
from hybridsim.modules.network import NETWORK, network_of
from hybridsim.modules.registry import module_schema
from hybridsim.wire.contract import (Command, Description, Dof, Module, ModuleError, Record, Session, StepRefused,
                                     module_records)
from hybridsim.modules.experimental.clock import SAMPLE_COLUMNS, STEP_COLUMNS, ClockSettings, SiteClock
from hybridsim.modules.experimental.command_generation import CommandGenerator
from hybridsim.modules.experimental.compensators.base import Compensator
from hybridsim.modules.experimental.compensators.kinds import build_compensator
from hybridsim.modules.experimental.guards import GuardedCompensator, Limits
from hybridsim.modules.experimental.physical_frame import FeedbackForce, PortalFrame
from hybridsim.modules.experimental.setups.base import Setup
from hybridsim.modules.experimental.site import (ControlBackend, ExperimentalSite, ForceSource, FrameFeedback,
                                                 CANNOT_PROBE, LoadCells, SiteResponse)
from hybridsim.modules.plant.module import build_lab, prime_lab
from hybridsim.wire.channels import Transport
from hybridsim.wire.remote import RemoteModule
from hybridsim.wire.starters import LOCAL, Place, start


ACTUATOR = Schema("actuator", "One actuator of the site: its compensator, its limits and its runaway guard.", {
    "compensator": Key(Table(compensator_kinds.CONFIG), "its delay compensation", default={"kind": "none"}),
    "guard": Key(Table(guards.CONFIG), "its runaway guard"),
    "stroke": Key(Number("m", 0, open_minimum=True), "stroke limit"),
    "force": Key(Number("N", 0, open_minimum=True), "load limit"),
})
BACKEND = Schema("backend", "Where the control samples go: a plant in this process, a plant daemon, a plant "
                 "config the site starts as a local daemon, or a lab's controller over OpenFresco's generic TCP.", {
                     "plant": Key(Table(plant_module.CONFIG), "a plant config: the lab in this process"),
                     "address": Key(Text(), "HOST:PORT of a running plant daemon"),
                     "daemon": Key(Table(module_schema("plant")), "a plant config the site starts as a local daemon"),
                     "generic_tcp": Key(Text(), "HOST:PORT of a lab's controller (ECGenericTCP; docs/interop.md)"),
                     "channels": Key(Integer(1), "actuators of the generic TCP controller", default=2),
                     "name": Key(Text(), "the plant's name in messages", default="plant"),
                     "deadline_s": Key(Number("s", 0, open_minimum=True), "deadline of each call to a plant daemon",
                                       default=10.0),
                     "transport": Key(Text(get_args(Transport)), "how samples reach a plant daemon, as a module's "
                                      "in an experiment (docs/wire_speed.md)", default="auto"),
                     "network": Key(Table(NETWORK), "an emulated network path between the site and its plant daemon "
                                    "(address or daemon), as a module's in an experiment (docs/realtime.md)"),
                 }, exactly_one=(("plant", "address", "daemon", "generic_tcp"),),
                 renamed={"link": "backend.transport (link = 'tcp' is transport = 'link', 'grpc' is 'stream', "
                                  "'auto' stays 'auto')"})
CONFIG = Schema("experimental", "An experimental site: a setup, one table per actuator (compensator, limits, guard), "
                "forces from the load cells or (maRTHS) the frame model, m control samples per step.", {
                    "dt": Key(Number("s", 0, open_minimum=True), "control sample", required=True),
                    "setup": Key(Table(setup_kinds.CONFIG), "the rig: kind and that setup's keys (docs/setups.md)"),
                    "coupler": Key(Table(kinematics.CONFIG), "the maRTHS coupler (instead of setup)"),
                    "dofs": Key(Names(), "the interface DOFs in the coordinator's namespace (renames the setup's)"),
                    "kinds": Key(Names(("translation", "rotation")), "kind of each DOF (with a frame model)"),
                    "signs": Key(Numbers("", (1,)), "coordinator sign -> rig sign, per DOF"),
                    "actuators": Key(Tables(ACTUATOR), "one table per actuator"),
                    "compensators": Key(Tables(compensator_kinds.CONFIG), "one per actuator (the maRTHS form of "
                                        "actuators)"),
                    "guards": Key(Tables(guards.CONFIG), "runaway guards, one per actuator (maRTHS form)"),
                    "initial_stiffness": Key(Numbers("N/m, N/rad, N*m/rad", (2,)), "the pre-test's r = K d when the "
                                             "control cannot probe"),
                    "frame": Key(Table(physical_frame.CONFIG), "the maRTHS feedback-force frame model"),
                    "backend": Key(Table(BACKEND), "the control backend", required=True),
                    "record": Key(Text(), "the site's record (HDF5, appended every 65,536 samples and at close), in the "
                                  "configuration's folder"),
                    "command_generation": Key(command_generation.CONFIG, "targets of the control samples",
                                              default="interpolate"),
                    **clock.KEYS,
                }, exactly_one=(("setup", "coupler"),), at_most_one=(("actuators", "compensators"),
                                                                    ("actuators", "guards")))


class ModuleBackend:
    """A plant module (in process or a daemon) as the site's control backend, one plant step per control sample.

    Each sample but a step's last is committed at the plant before the next one is sent (its actuators
    have moved); the last one stays a trial at the plant until the site commits the step (the commit
    travels with the next sample's message: no call of its own).  A trial step of one sample is
    therefore taken back at no cost: the plant's next proposal replaces its trial there, from the
    committed state the plant keeps itself (a plant module's ledger), and nothing crosses the wire but
    the samples.  A trial step of several samples has committed all but its last, so taking it back
    needs the plant's committed state at the step's start: then the backend's state carries the
    plant's checkpoint at the start of step 1 and, once a trial has been taken back (an iterating
    integrator), at the start of every step (one more call to the plant per step, only then), and
    :meth:`set_state` restores it.  A state without it (such a trial taken back for the first time
    after step 1) is refused, so a session with an iterating integrator (``Session.iterating``) keeps
    it at every step from the start (:meth:`expect_steps`).
    """

    def __init__(self, module: Module, sample_period: float, channels: int = 2) -> None:
        self.module = module
        self.sample_period = sample_period
        self.channels = channels
        self.sample = 0
        self._step = -1
        self._pending: int | None = None
        """the plant step of the last sample, a trial at the plant until the site commits its step"""
        self._loads = np.zeros(channels)
        self._samples = 1
        """control samples per step"""
        self._with_plant = False
        """whether the next state() carries the plant's checkpoint"""
        self._rewound = False

    def expect_steps(self, samples: int, iterating: bool) -> None:
        """Steps of ``samples`` control samples; ``iterating``: trials will be taken back, at any step.  Only a
        step of several samples needs the plant's checkpoint to be taken back (see the class)."""
        self._samples = samples
        self._with_plant = samples > 1
        self._rewound = samples > 1 and iterating

    def _call(self, time: float, command: np.ndarray) -> np.ndarray:
        self._step += 1
        self.module.propose(self._step, Command(time, np.asarray(command, float)))
        result = self.module.execute(self._step)
        self._loads = result.force
        return result.displacement

    def loads(self) -> np.ndarray:
        """The plant's load cells at the last sample (N)."""
        return self._loads.copy()

    def reading(self) -> np.ndarray:
        measured = self._call(0.0, np.zeros(self.channels))
        self.module.commit(self._step)
        return measured

    def drive(self, command: np.ndarray) -> np.ndarray:
        self.commit()  # the step's previous sample
        measured = self._call((self.sample + 1) * self.sample_period, command)
        self._pending = self._step
        self.sample += 1
        return measured

    def commit(self) -> None:
        """Commit the last sample at the plant (the others were committed when the next was sent)."""
        if self._pending is not None:
            self.module.commit(self._pending)
            self._pending = None

    def state(self, with_plant: bool = False) -> dict[str, Any]:
        """The sample reached, and the plant's checkpoint (JSON text) when it may be needed or ``with_plant``."""
        state: dict[str, Any] = {"sample": self.sample, "loads": self._loads.tolist()}
        if with_plant or self._with_plant:
            state["plant"] = self.module.checkpoint().decode()
            self._with_plant = self._rewound
        return state

    def set_state(self, state: dict[str, Any]) -> None:
        sample = int(state["sample"])
        if sample == self.sample:
            return
        if "plant" in state:
            self.module.restore(state["plant"].encode())
            self._step = max(self._step, int(json.loads(state["plant"])["last_step"]))  # a fresh backend numbers on
            self._rewound = self._with_plant = self._samples > 1
        elif self._pending is None or sample != self.sample - 1:
            raise ModuleError(f"the plant has moved to sample {self.sample} and cannot go back to sample "
                              f"{sample}: this trial step began before its state was kept (a trial of several "
                              "samples is taken back for the first time after step 1)")
        # else: the plant's committed state is that sample's; its next proposal replaces the trial there
        self._pending = None
        self.sample = sample
        self._loads = np.array(state["loads"], float)


class _AtRest:
    """A lab whose actuators never move: the backend of the throwaway site that :func:`prime_site` runs."""

    def __init__(self, channels: int = 2, cells: int | None = None) -> None:
        self._strokes = np.zeros(channels)
        self._loads = np.zeros(channels if cells is None else cells)

    def reading(self) -> np.ndarray:
        return self._strokes.copy()

    def drive(self, command: np.ndarray) -> np.ndarray:
        return self._strokes.copy()

    def loads(self) -> np.ndarray:
        return self._loads.copy()

    def commit(self) -> None:
        """Nothing moved."""

    def state(self) -> None:
        return None

    def set_state(self, state: None) -> None:
        """Nothing to restore."""


def prime_site(config: Mapping[str, Any]) -> None:
    """Run two samples of a throwaway site of ``config`` at rest, so that the compiled per-sample kernels
    (hybridsim.modules.kernels) are loaded into this process before a test's first step, not during it (a lab's
    real-time controller is loaded before its clock starts)."""
    setup = site_setup(config)
    site = build_site(config, _AtRest(setup.actuators, setup.cells))
    site.start()
    for _ in range(2):
        site.advance(np.zeros(len(site.signs)))
        site.commit()


def site_setup(config: Mapping[str, Any]) -> Setup:
    """The setup of a site config: ``setup = {kind = ...}``, or the maRTHS ``coupler`` table (the
    marths-coupler setup with the benchmark's inverse estimate)."""
    if "setup" in config and "coupler" in config:
        raise ModuleError("experimental module: give setup or coupler (the maRTHS coupler), not both")
    if "coupler" in config:
        coupler = config["coupler"]
        if not isinstance(coupler, Mapping):
            raise ModuleError("experimental module: coupler must be a table {offset, heights, angles_deg}")
        return setup_kinds.build_setup({"kind": "marths-coupler", "inverse": "benchmark", **coupler}, "coupler")
    if "setup" not in config:
        raise ModuleError('experimental module: give a setup, e.g. setup = {kind = "one-actuator"} '
                          "(hybridsim.modules.experimental.setups)")
    return setup_kinds.build_setup(config["setup"])


def _actuator_tables(config: Mapping[str, Any], count: int) -> list[Mapping[str, Any]]:
    """One table per actuator: ``actuators``, or the maRTHS form ``compensators`` (+ ``guards``)."""
    if "actuators" in config:
        if "compensators" in config or "guards" in config:
            raise ValueError("give actuators = [...] (each with its compensator and guard) or compensators/guards, "
                             "not both")
        tables = config["actuators"]
        if not isinstance(tables, list) or not all(isinstance(t, Mapping) for t in tables):
            raise ValueError("actuators must be a list of tables, one per actuator")
        for i, table in enumerate(tables, start=1):
            unknown = sorted(set(table) - {"compensator", "guard", "stroke", "force"})
            if unknown:
                raise ValueError(f"actuators[{i}]: unknown key {unknown[0]!r} (compensator, guard, stroke, force)")
    else:
        compensators = config.get("compensators", [{"kind": "none"}] * count)
        guards = config.get("guards")
        if guards is not None and len(guards) != len(compensators):
            raise ValueError(f"guards: give one table per compensator ({len(compensators)}), not {len(guards)}")
        tables = [{"compensator": c, **({} if guards is None else {"guard": guards[i]})}
                  for i, c in enumerate(compensators)]
    if len(tables) != count:
        raise ValueError(f"the setup has {count} actuator{'s' if count != 1 else ''}: give one table per actuator "
                         f"(actuators = [...]), not {len(tables)}")
    return tables


def build_site(config: Mapping[str, Any], backend: ControlBackend,
               compensators: Sequence[Compensator] | None = None, record: bool = True) -> ExperimentalSite:
    """The site a config describes, around ``backend``; ``compensators`` replace the config's own (and its
    guards) if given; ``record``: it logs every sample (:class:`SiteRecord`)."""
    try:
        dt = float(config["dt"])
        setup = site_setup(config)
        tables = _actuator_tables(config, setup.actuators)
        if compensators is None:
            compensators = [_guarded(t.get("guard"), build_compensator(t.get("compensator", {"kind": "none"})), dt, i)
                            for i, t in enumerate(tables, start=1)]
        limits = [[float(t.get(key, np.inf)) for t in tables] for key in ("stroke", "force")]
        forces = _force_source(config, setup, backend, dt)
        signs = config.get("signs", (1.0,) * len(interface_dofs(config, setup)))
        return ExperimentalSite(setup, compensators, forces, backend, signs, *limits, record=record)
    except KeyError as exc:
        raise ModuleError(f"experimental module: {exc.args[0]!r} is missing from the config") from None
    except (TypeError, ValueError) as exc:
        raise ModuleError(f"experimental module: {exc}") from None


def _force_source(config: Mapping[str, Any], setup: Setup, backend: ControlBackend, dt: float) -> ForceSource:
    """The frame model of a ``frame`` table (maRTHS), else the load cells through the setup."""
    if "frame" in config:
        if len(setup.dofs) != 2:
            raise ValueError("the frame model's feedback force needs a setup of (x, theta)")
        return FrameFeedback(FeedbackForce(PortalFrame(**config["frame"]), dt))
    stiffness = config.get("initial_stiffness")
    if stiffness is not None:
        stiffness = np.asarray(stiffness, float)
        n = len(setup.dofs)
        if stiffness.shape != (n, n) or not np.all(np.isfinite(stiffness)):
            raise ValueError(f"initial_stiffness must be a finite {n} x {n} matrix (one row per DOF)")
    return LoadCells(setup, getattr(backend, "probe", None), stiffness)


def interface_dofs(config: Mapping[str, Any], setup: Setup) -> tuple[Dof, ...]:
    """The site's DOFs in the coordinator's namespace: the frame model's three (x, theta1, theta2) with a
    ``frame``, else the setup's, renamed by ``dofs`` if given."""
    if "frame" in config:
        names = list(config.get("dofs", ("x", "theta", "theta_free")))
        kinds = list(config.get("kinds", ("translation", "rotation", "rotation")))
        if len(names) != 3 or len(kinds) != 3:
            raise ModuleError("experimental module: dofs and kinds name the three interface DOFs (x, theta1, theta2)")
        return tuple(Dof(n, k) for n, k in zip(names, kinds))
    if "kinds" in config:
        raise ModuleError("experimental module: kinds is the frame model's; the setup says each DOF's kind")
    names = config.get("dofs", [d.name for d in setup.dofs])
    if not isinstance(names, (list, tuple)) or len(names) != len(setup.dofs):
        raise ModuleError(f"experimental module: dofs must rename the setup's {len(setup.dofs)} DOFs "
                          f"({', '.join(d.name for d in setup.dofs)})")
    return tuple(Dof(str(n), d.kind) for n, d in zip(names, setup.dofs))


def _guarded(table: Mapping[str, Any] | None, compensator: Compensator, dt: float, actuator: int) -> Compensator:
    """The compensator inside the runaway guard of its table, if any."""
    if table is None:
        return compensator
    return GuardedCompensator(compensator, Limits(**{k: float(v) for k, v in table.items()}), f"actuator {actuator}", dt)


BACKEND_KEYS = ("plant", "daemon", "address", "generic_tcp", "name", "deadline_s", "transport", "channels", "network")


def plant_place(table: Mapping[str, Any], base_dir: Path | None = None,
                setup: Mapping[str, Any] | None = None) -> Place:
    """Where the site's plant runs, by its ``backend`` table: ``{plant = {...}}`` in this process (files relative
    to ``base_dir``), ``{daemon = {...}}`` a local daemon this site starts (and stops at close),
    ``{address = "HOST:PORT"}`` a plant daemon; with either daemon ``transport``, ``deadline_s`` (s) and ``network``
    (an emulated path between the site and the daemon), as a module's in an experiment.  A specimen in DOF
    coordinates without a setup table takes ``setup``, the site's."""
    if "link" in table:
        raise ModuleError(f"experimental module: backend.link is now backend.transport (link = 'tcp' is transport = "
                          f"'link', 'grpc' is 'stream', 'auto' stays 'auto'); got link = {table['link']!r}")
    unknown = sorted(set(table) - set(BACKEND_KEYS))
    if unknown:
        raise ModuleError(f"experimental module: backend has no key {unknown[0]!r}; its keys are {', '.join(BACKEND_KEYS)}")
    places = [key for key in ("plant", "daemon", "address", "generic_tcp") if key in table]
    if len(places) != 1:
        raise ModuleError("experimental module: backend needs one of 'plant' (a plant config in this process), "
                          "'address' (a plant daemon), 'daemon' (a plant config to start as a daemon) or "
                          "'generic_tcp' (a lab's controller over OpenFresco's generic TCP protocol)")
    transport = table.get("transport", "auto")
    if transport not in get_args(Transport):
        raise ModuleError(f"experimental module: backend.transport must be one of {', '.join(get_args(Transport))}, "
                          f"not {transport!r}")
    for key in ("transport", "network"):
        if ("plant" in table or "generic_tcp" in table) and key in table:
            raise ModuleError(f"experimental module: backend.{key}: a plant in this process or a lab's generic TCP "
                              f"controller has no {key}; give daemon or address, or drop it")
    network = None if "network" not in table else network_of(table["network"], "backend.network")
    address = {"plant": None, "daemon": LOCAL, "address": str(table.get("address")), "generic_tcp": None}[places[0]]
    config = _with_setup(table["plant"] if "plant" in table else table.get("daemon", {}), setup)
    return Place(str(table.get("name", "plant")), "plant", config, base_dir, address,
                 float(table.get("deadline_s", 10.0)), transport, network=network)


def _same_sample(table: Mapping[str, Any], sample_period: float) -> None:
    """Refuse a plant table (``backend.plant`` or ``backend.daemon``) whose control sample ``dt`` is not the
    site's (s): the site drives its lab one sample per control sample, so another dt would integrate the
    actuators' dynamics over the wrong interval."""
    for place in ("plant", "daemon"):
        plant = table.get(place)
        if isinstance(plant, Mapping) and isinstance(plant.get("dt"), (int, float)) \
                and abs(float(plant["dt"]) - sample_period) > 1e-12 * sample_period:
            raise ModuleError(f"experimental module: backend.{place}.dt ({plant['dt']} s) must be the site's dt "
                              f"({sample_period} s): the site drives its lab one control sample at a time")


def _step_samples(config: Mapping[str, Any], settings: ClockSettings | None, dt: float) -> tuple[int, int]:
    """(m, M) for steps of ``dt`` (s): m control samples (config ``dt``) per step, M of them on the site's own
    clock (m time_scale; M = m in lockstep); refuses a step that is not a whole number of samples, and more
    than one sample per step on its own clock without a predicting command generation."""
    control_dt = float(config["dt"])
    ratio = dt / control_dt
    if ratio < 1 - 1e-9 or abs(ratio - round(ratio)) > 1e-9:
        raise ModuleError(f"experimental module: the session dt ({dt} s) must be a whole number of "
                          f"control samples ({control_dt} s)")
    samples = round(ratio)
    if settings is None:
        _refuse_amplified_kinks(config, settings, samples)
        return samples, samples
    scaled = samples * settings.time_scale
    if abs(scaled - round(scaled)) > 1e-9 * scaled:
        nearest = [f"{k / samples:g}" for k in (math.floor(scaled), math.ceil(scaled)) if k >= samples]
        raise ModuleError(f"experimental module: time_scale {settings.time_scale:g} times the {samples} control "
                          f"samples of a step ({dt:g} s / dt {control_dt:g} s) must be a whole number of samples, "
                          f"not {scaled:g} (e.g. time_scale = {' or '.join(nearest)})")
    if round(scaled) > 1 and _command_generator(config, settings, round(scaled)).scheme != "predictor-corrector":
        raise ModuleError("experimental module: a site on its own clock with more than one control sample per "
                          "step needs command_generation = {scheme = \"predictor-corrector\", order = 2}: the "
                          "actuators move on predictions until the next target arrives")
    _refuse_amplified_kinks(config, settings, round(scaled))
    return samples, round(scaled)


def _refuse_amplified_kinks(config: Mapping[str, Any], settings: ClockSettings | None, samples: int) -> None:
    """Refuse an RLS adaptive compensator behind the predictor-corrector of order 2 or 3 when samples are
    predicted: ``samples`` M > 1 per step and an arrival past the step's start, or on the site's own clock.
    The predictor's error bends the command at every switch to the corrector, once per step; the compensator's
    adapted inverse FIR has a gain of some hundreds at a few hundred Hz, where those bends are, and drives
    the servo into saturation within seconds on the maRTHS design card (docs/realtime.md, "Limits")."""
    generator = _command_generator(config, settings, samples)
    predicts = samples > 1 and (settings is not None or getattr(generator, "predicted", 0) > 0)
    try:
        tables = _actuator_tables(config, site_setup(config).actuators)
    except (ModuleError, ValueError):
        return  # building the site names what is wrong with its tables
    kinds = [t.get("compensator", {}).get("kind") for t in tables]
    if predicts and generator.order >= 2 and "rls" in kinds:
        raise ModuleError(f"experimental module: command_generation order {generator.order} with an RLS adaptive "
                          f"compensator (actuator {kinds.index('rls') + 1}) saturates the servo: the predictor's "
                          "error bends the command at every switch to the corrector and the compensator's inverse "
                          "amplifies it; use command_generation order = 1 (docs/realtime.md, Limits)")


def _command_generator(config: Mapping[str, Any], settings: ClockSettings | None, samples: int) -> CommandGenerator:
    """The command generation of ``samples`` per step; on its own clock (``settings``) the predictor-corrector's
    arrival is optional (absent: the real arrival of each target decides)."""
    generation = config.get("command_generation", "interpolate")
    if settings is not None and isinstance(generation, Mapping):
        generation = {"arrival": 0.0, **generation}
    try:
        return CommandGenerator.from_config(generation, samples)
    except ValueError as exc:
        raise ModuleError(f"experimental module: {exc}") from None


def build_backend(table: Mapping[str, Any], sample_period: float, stack: contextlib.ExitStack,
                  base_dir: Path | None = None, setup: Mapping[str, Any] | None = None, records: bool = True
                  ) -> tuple[ControlBackend, Module | None]:
    """(backend, plant module to close) for the site's ``backend`` table (:func:`plant_place`), started by the
    wire's starter table; what it starts (a daemon, a connection) ``stack`` stops.

    A plant in this process is the lab itself (no module interface between the site and it, every sample);
    a plant daemon is driven through its module, one step per control sample; ``generic_tcp``: a lab's
    controller over OpenFresco's generic TCP protocol.  ``records``: a plant daemon keeps its DAQ log."""
    place = plant_place(table, base_dir, setup)
    if "generic_tcp" in table:
        return _generic_tcp(table, sample_period)

    def lab() -> ControlBackend:
        prime_lab(place.config, base_dir)
        return build_lab(place.config, base_dir)

    plant, _ = start(place, stack, lab)
    if place.address is None:
        return plant, None
    assert isinstance(plant, RemoteModule)
    names = plant.describe().dof_names
    plant.open(Session(sample_period, names, records=records))
    return ModuleBackend(plant, sample_period, len(names)), plant


def _generic_tcp(table: Mapping[str, Any], sample_period: float) -> tuple[ControlBackend, Module]:
    """``{generic_tcp = "HOST:PORT", channels = 2, deadline_s = 10.0}``: a lab's own controller over OpenFresco's
    generic TCP protocol (ECGenericTCP; hybridsim site plant --generic-tcp serves it), one ``3`` then ``6`` per
    control sample (docs/interop.md)."""
    from hybridsim.modules.registry import build_module

    channels = table.get("channels", 2)
    if not isinstance(channels, int) or isinstance(channels, bool) or channels < 1:
        raise ModuleError("experimental module: backend.channels must be the number of actuators (an integer)")
    names = [f"actuator_{i + 1}" for i in range(channels)]
    controller = build_module("openfresco", {"address": table["generic_tcp"], "dofs": names, "server": "generic-tcp",
                                             "deadline_s": float(table.get("deadline_s", 10.0))})
    controller.open(Session(sample_period, tuple(names)))
    return ModuleBackend(controller, sample_period, channels), controller


def _with_setup(plant: Mapping[str, Any], setup: Mapping[str, Any] | None) -> dict[str, Any]:
    """A plant config whose specimen in DOF coordinates, if it has no setup table, takes the site's."""
    plant = dict(plant)
    specimen = plant.get("specimen")
    if (isinstance(specimen, Mapping) and specimen.get("coordinates", "dofs") == "dofs" and "setup" not in specimen
            and setup is not None):
        plant["specimen"] = {**specimen, "setup": setup}
    return plant


def _output_path(base_dir: Path | None, value: object) -> Path:
    """A file the site writes, inside the configuration's folder (or below it)."""
    root = Path(base_dir or Path.cwd()).resolve()
    if not isinstance(value, str) or not value:
        raise ModuleError("experimental module: record must be a file name (relative to the configuration's folder)")
    path = (root / value).resolve()
    if not path.is_relative_to(root) or not path.parent.is_dir():
        raise ModuleError(f"experimental module: record = {value!r} must name a file in an existing folder "
                          f"inside {root}")
    return path


RECORD_FIELDS = {"target_strokes": "target stroke of each actuator at sample k (mm; the last: held from the one before)",
                 "commands": "command sent at sample k, after the compensator (mm; the last: held)",
                 "measured_strokes": "stroke measured at sample k, before that sample's command acts (mm)",
                 "measured_loads": "load-cell force measured at sample k (N; zeros without load cells)"}
"""what each per-sample record of the site holds"""

RECORD_FILE_BLOCK = 65536
"""samples the site holds before it appends them to its record file (``record = "site.h5"``)"""


def _append(f: Any, name: str, start: int, values: np.ndarray) -> None:
    """Rows ``values`` at ``start`` of the growing dataset ``name`` of the open HDF5 file ``f`` (created at the
    first call: unfilled rows NaN)."""
    if name not in f:
        f.create_dataset(name, shape=(0, values.shape[1]), maxshape=(None, values.shape[1]),
                         chunks=(4096, values.shape[1]), dtype=np.float64, fillvalue=np.nan)
    f[name].resize(start + values.shape[0], axis=0)
    f[name][start:start + values.shape[0]] = values


class ExperimentalModule(StepLedger):
    """An :class:`ExperimentalSite` as a module, rebuilt at every ``open``."""

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
        try:
            _actuator_tables(self.config, rig.actuators)
        except ValueError as exc:
            raise ModuleError(f"experimental module: {exc}") from None
        if "dt" not in self.config:
            raise ModuleError("experimental module: give dt, the control sample (s)")
        self.control_dt = float(self.config["dt"])
        self.record_path = None if "record" not in self.config else _output_path(base_dir, self.config["record"])
        if "backend" not in self.config:
            raise ModuleError("experimental module: give a backend (plant = {...} or address = ...)")
        setup = self.config.get("setup")
        plant_place(self.config["backend"], base_dir, setup if isinstance(setup, Mapping) else None)
        _same_sample(self.config["backend"], self.control_dt)
        self.clock_settings = ClockSettings.from_config(self.config)
        """None: lockstep; else the site runs on its own clock (:mod:`hybridsim.modules.experimental.clock`)"""
        self.clock: SiteClock | None = None
        self.site: ExperimentalSite | None = None
        self._plant: Module | None = None
        self._plant_stack = contextlib.ExitStack()
        self._samples_per_step = 1
        self.generator = self._generator(1)
        self._snapshot: dict[str, Any] | None = None
        self._targets = np.zeros((self.generator.history, len(self.dofs)))
        """the committed targets, newest first: d_n, d_{n-1}, .. (zero before the start, at rest)"""
        self._committed_sample = -1
        self._start: SiteResponse | None = None
        self._counters: dict[str, float] = {}
        """the site clock's counters at the end of the last step it ran"""
        self._reported: dict[str, float] = {}
        """the counters as the last results carried them"""
        self._collected = 0
        """samples of the record the coordinator has stored (it asks for the rows from there on)"""
        self._filed = 0
        """samples of the record written to the site's record file"""
        self._asked = True
        """the coordinator stores the record (the session's ``records``)"""

    @classmethod
    def from_config(cls, config: Mapping[str, Any], base_dir: Path | None = None) -> ExperimentalModule:
        return cls(config, base_dir)

    def describe(self) -> Description:
        return Description(kind=self.kind, dofs=self.dofs, own_clock=self.clock_settings is not None,
                           control_dt=self.control_dt,
                           info={"force": "feedback force of the frame model from the measured motion"
                                 if "frame" in self.config else "DOF forces of the load cells through the setup, "
                                 "J(q)^T f at the measured pose q",
                                 "step": "the target of t_n; the result is measured at t_n (t = 0: at rest)"})

    @classmethod
    def session_refusal(cls, config: Mapping[str, Any], dt: float) -> str | None:
        """Why a site of ``config`` cannot run steps of ``dt`` (s): not a whole number of its control samples,
        a ``time_scale`` that makes a step no whole number of samples on its own clock, an RLS compensator
        behind a predicting command generation of order 2 or 3, or load-cell forces from a control that cannot
        probe its specimen (a plant daemon, a lab's controller) without ``initial_stiffness`` (None: it can)."""
        if not isinstance(config.get("dt"), (int, float)):
            return None  # building the site names the missing dt
        try:
            _step_samples(config, ClockSettings.from_config(config), dt)
        except ModuleError as exc:
            return str(exc).removeprefix("experimental module: ")
        backend = config.get("backend")
        if isinstance(backend, Mapping) and "plant" not in backend and "frame" not in config \
                and "initial_stiffness" not in config:
            return CANNOT_PROBE  # the pre-test (the run's first step) would stop the run, after its daemons started
        return None

    def _on_open(self, session: Session) -> None:
        ratio, samples = _step_samples(self.config, self.clock_settings, session.dt)
        self._close_plant()
        prime_site(self.config)
        setup = self.config.get("setup")
        backend, self._plant = build_backend(self.config["backend"], self.control_dt, self._plant_stack, self.base_dir,
                                             setup if isinstance(setup, Mapping) else None, session.records)
        if isinstance(backend, ModuleBackend):
            backend.expect_steps(ratio, session.iterating)
        self._asked = session.records
        self.site = build_site(self.config, backend, record=session.records or self.record_path is not None)
        self._collected = 0
        self._filed = 0
        self._samples_per_step = ratio
        self.generator = self._generator(self._samples_per_step)
        if self.clock_settings is not None:
            clocked = self._generator(samples)
            self.clock = SiteClock(self.site.advance, self.site.commit, self.control_dt, samples, max(clocked.order, 1),
                                   getattr(clocked, "predicted", 0), self.clock_settings)
        self._snapshot = None
        self._targets = np.zeros((self.generator.history, len(self.dofs)))
        self._committed_sample = -1
        self._start = None
        self._counters, self._reported = {}, {}

    def _generator(self, samples: int) -> CommandGenerator:
        return _command_generator(self.config, self.clock_settings, samples)

    def _step_of(self, step: int, command: Command) -> int:
        n = round(command.time / self.session.dt)
        if abs(command.time - n * self.session.dt) > 1e-9 * self.session.dt:
            raise StepRefused(step, f"time {command.time} s is not a multiple of the step {self.session.dt} s")
        return n

    def propose(self, step: int, command: Command) -> None:
        """As every module's; on its own clock the site receives the target now (its arrival time)."""
        super().propose(step, command)
        n = self._step_of(step, command)
        if self.clock is not None and n > 0:
            self.clock.deliver(n, command.displacement)
            if not self.clock.running:
                self.clock.start(n - 1, self._targets, self._targets[0])
            self.clock.promote_caller()

    def _check(self, step: int, command: Command) -> None:
        n = self._step_of(step, command)
        if self.clock is not None and self.clock.running:
            if n != self.clock.done + 1:
                raise StepRefused(step, f"the site's own clock has run to t = {self.clock.done * self.session.dt} s; "
                                        f"the next target must be for t = {(self.clock.done + 1) * self.session.dt} s, "
                                        f"not {command.time} s (a site on its own clock cannot take a step back: an "
                                        "iterating integrator needs clock = \"lockstep\")")
            return
        done = self._committed_sample // self._samples_per_step if self._committed_sample >= 0 else -1
        if n != done + 1 and not (done == -1 and n == 1):
            raise StepRefused(step, f"the site is at t = {max(done, 0) * self.session.dt} s; the next target "
                                    f"must be for t = {(done + 1) * self.session.dt} s, not {command.time} s")

    def _trial(self, step: int, command: Command) -> tuple[np.ndarray, np.ndarray]:
        site = self.site
        assert site is not None
        if self._start is None and site.sample == -1:  # a restored site has started long ago
            self._start = site.start()
        if self._step_of(step, command) == 0:
            if np.any(command.displacement != 0.0):
                probe = site.probe(command.displacement)
                return probe.displacement, probe.force
            return self._start.displacement, self._start.force
        if self.clock is not None:
            end, self._counters = self.clock.result(self._step_of(step, command),
                                                    30.0 + 10 * self.clock.samples * self.control_dt)
            return end.displacement, end.force
        if self._snapshot is None:
            self._snapshot = site.state()
        else:
            site.set_state(self._snapshot)
        response = self._start
        for target in self.generator.commands(command.displacement, self._targets):
            response = site.advance(target)
        return response.displacement, response.force

    def _changed_counters(self) -> dict[str, float] | None:
        """On its own clock: the clock's counters (slowed steps, held and late samples) that changed with the
        step just run, so the coordinator's monitor follows them during the run (docs/realtime.md)."""
        changed = {k: v for k, v in self._counters.items() if self._reported.get(k) != v}
        self._reported.update(changed)
        return changed or None

    def _accept(self, step: int) -> None:
        site = self.site
        assert site is not None and self._proposed is not None
        command = self._proposed[1]
        if self._step_of(step, command) == 0 and np.any(command.displacement != 0.0):
            raise StepRefused(step, "a pre-test probe at t = 0 is never committed: commit zero (the rest state)")
        if self.clock is not None and self.clock.running:  # the clock has committed the step's samples
            self._committed_sample = int(self.clock.step_log.last()[0])
        else:
            site.commit()
            self._committed_sample = site.sample
        self._snapshot = None
        if self.record_path is not None and self._committed_sample - self._filed >= RECORD_FILE_BLOCK:
            with self._site_lock():
                self._file_record(self._committed_sample)  # the last sample's target comes with the next step
        elif (self.clock is not None and not self._asked and self.record_path is None
              and self._committed_sample - self.clock.sample_log.first >= RECORD_FILE_BLOCK):
            with self._site_lock():  # nobody keeps the clock's records: only its stats
                self._forget()
        self._targets = np.vstack((self._proposed[1].displacement, self._targets[:-1]))

    def _discard(self) -> None:
        if self._snapshot is not None and self.site is not None:
            self.site.set_state(self._snapshot)

    def close(self) -> dict[str, float]:
        stats = super().close()
        if self.clock is not None:
            self.clock.stop()
            stats.update(self.clock.stats())
        if self.site is not None:
            backend = self.site.backend
            volts = getattr(backend, "max_volts", None)
            if volts is not None:
                stats.update({f"max_command_volts_{i + 1}": float(v) for i, v in enumerate(volts)})
            if self.record_path is not None:
                self.site.record.hold(self._committed_sample)
                self._file_record(self._committed_sample + 1)
        plant = self._close_plant()
        stats.update({k: v for k, v in plant.items() if k.startswith("max_command_volts")})
        stats.update({f"plant_{k}": v for k, v in plant.items() if k.startswith("network_")})
        return stats

    def records(self, since: int = 0, final: bool = True) -> list[Record]:
        """Per committed control sample k, streamed (see :class:`hybridsim.wire.contract.Record`): the time,
        target strokes, commands and measured strokes of every actuator (mm, as the site logs them) and its
        load cell (N), from sample ``since`` on (the samples before are stored: the site forgets them).
        At the end (``final``) also each compensator's adapted parameters and a plant daemon's DAQ log
        (``plant/...``).  A site restored from a checkpoint has no samples before it: those rows start
        later (``first_row``) and the ones between stay unfilled."""
        if self.site is None:
            return []
        with self._site_lock():
            return self._records(since, final)

    def _site_lock(self) -> contextlib.AbstractContextManager[Any]:
        """The site's own clock's lock (its thread logs samples into the record), if it runs on one."""
        return self.clock.lock if self.clock is not None else contextlib.nullcontext()

    def _records(self, since: int, final: bool) -> list[Record]:
        assert self.site is not None
        # sample k's target and command are logged when step k + 1 runs: during the run the last committed
        # sample waits for the next collection; at the end it holds the previous ones (SiteRecord.hold)
        rows = self._committed_sample + (1 if final else 0)
        record = self.site.record
        if final:
            record.hold(self._committed_sample)
        self._collected = max(self._collected, since)
        self._forget()
        out = []
        if record.keep and self._asked:
            rows = max(rows, record.first)  # restored at sample `first`: nothing before it to give, not an error
            first = min(max(since, record.first), rows)
            count = self.site.setup.actuators
            actuators = tuple(f"actuator_{i + 1}" for i in range(count))
            cells = tuple(f"load_cell_{i + 1}" for i in range(self.site.setup.cells))
            out.append(Record("sample_time", self.control_dt * np.arange(first, rows, dtype=float)[:, None], ("s",),
                              ("t",), "time of control sample k (k dt)", first))
            for name in record.fields:
                columns = cells if name == "measured_loads" and len(cells) != count else actuators
                unit = "N" if name == "measured_loads" else "mm"
                out.append(Record(name, record.array(name, rows, first), (unit,) * len(columns), columns,
                                  RECORD_FIELDS[name], first))
        if self._plant is not None:  # a plant daemon's DAQ log, streamed as the site's record
            out += [replace(r, name=f"plant/{r.name}") for r in module_records(self._plant, since, final)]
        if self._asked:
            out += self._clock_records(since, rows)
        if not final:
            return out
        for i, compensator in enumerate(self.site.compensators, 1):
            parameters = compensator.parameters()
            if parameters.size:
                out.append(Record(f"compensator_{i}/parameters", parameters.reshape(1, -1), ("1",) * parameters.size,
                                  tuple(f"p{j}" for j in range(parameters.size)),
                                  f"the adapted parameters of {compensator.name or 'compensator'} {i} at the end"))
        return out

    def _clock_records(self, start: int, stop: int) -> list[Record]:
        """On its own clock, streamed as the site's record (from sample ``start`` to ``stop`` - 1): per control
        sample k >= 1 (row k - 1) its lateness, test time and mode (0 predicted, 1 corrected, 2 slowed, 3 held);
        per step (row j: the clock's step j + 1) that ended on one of these samples its end sample, the target's
        arrival, held samples, slowed, wall time."""
        if self.clock is None:
            return []
        samples, log = self.clock.sample_log, self.clock.step_log
        first = max(start - 1, samples.first, 0)
        ended = log.head()[:, 0]
        steps = slice(*np.searchsorted(ended, [start, stop]))
        return [Record("clock/samples", samples.head(max(stop - 1, first), first), ("us", "s", "1", "us"),
                       SAMPLE_COLUMNS, "per control sample k = 1, 2, ..: how late its tick started, the test time of "
                       "its command, what the command was (0 predicted, 1 corrected, 2 slowed, 3 held), how long the "
                       "sample took (command, plant, measurement)", first),
                Record("clock/steps", log.head()[steps], ("1", "1", "1", "1", "s"), STEP_COLUMNS,
                       "per step: the sample measured at its end, when its target arrived (share of the step), its "
                       "held samples, whether it was slowed (1), its wall time", log.first + steps.start)]

    def _forget(self) -> None:
        """Drop the samples both the coordinator (if it asks for records) and the record file have (the
        committed ones if neither keeps them)."""
        assert self.site is not None
        stored = [self._collected] if self._asked else []
        stored += [self._filed] if self.record_path is not None else []
        below = min(stored, default=self._committed_sample)
        self.site.record.forget(below)
        if self.clock is not None:
            self.clock.forget(below)

    def _file_record(self, stop: int) -> None:
        """Append the samples up to ``stop`` - 1 to the site's record file (the first call creates it), and the
        site clock's records of those samples."""
        import h5py

        assert self.site is not None and self.record_path is not None
        record = self.site.record
        start = max(self._filed, record.first)
        with h5py.File(self.record_path, "a" if self._filed else "w") as f:
            f.attrs["control_dt"] = self.control_dt
            for name in record.fields:
                _append(f, name, start, record.array(name, stop, start))
            for clocked in self._clock_records(start, stop):
                _append(f, clocked.name, int(clocked.first_row or 0), clocked.values)
        self._filed = stop
        self._forget()

    def _close_plant(self) -> dict[str, float]:
        lab = getattr(self.site.backend, "close", None) if self.site is not None and self._plant is None else None
        if lab is not None:
            lab()  # an in-process lab: its specimen lets go of what it holds (an OpenSees domain)
        plant, self._plant = self._plant, None
        with self._plant_stack:  # stops what the plant's start started (a connection, a daemon)
            return {} if plant is None else plant.close()

    @classmethod
    def checkpoint_refusal(cls, config: Mapping[str, Any]) -> str | None:
        backend = config.get("backend")
        if config.get("clock") == "own":
            return ("it runs on its own clock (clock = \"own\"): its actuators never stop, so a step cannot be "
                    "taken back to a checkpoint; set output.checkpoint_every = 0")
        if isinstance(backend, Mapping) and "generic_tcp" in backend:
            return ("its backend is a lab's controller over OpenFresco's generic TCP protocol (backend.generic_tcp), "
                    "which keeps no checkpoints; set output.checkpoint_every = 0")
        return None

    def _save_state(self) -> object:
        if self.site is None:
            raise ModuleError("experimental module: no site to checkpoint (the module is not open)")
        if self.clock is not None:
            raise ModuleError(f"experimental module: no checkpoint: {self.checkpoint_refusal(self.config)}")
        site = self.site.state()
        if self._plant is not None:  # a plant daemon: its committed state goes into the checkpoint
            site["backend"] = self.site.backend.state(with_plant=True)  # type: ignore[call-arg]
        return {"site": site, "targets": self._targets.tolist(), "sample": self._committed_sample}

    def _load_state(self, state: object) -> None:
        assert self.site is not None and isinstance(state, dict)
        self.site.set_state(state["site"])
        self._targets = np.array(state["targets"], float)
        self._committed_sample = int(state["sample"])
        self.site.record.restart(self._committed_sample + 1)
