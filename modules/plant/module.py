"""The `plant` module: a virtual lab behind the module interface, one control sample per step.

DOFs are the actuator strokes (m).  The command of a step is the actuator
command held over the control sample that ends at ``Command.time``; the
result is the strokes measured at that time and the load-cell forces (N; zeros
when the lab has no specimen).  The first step (time 0) is the reading at rest,
before anything moves, and its command must be zero.  The session's dt must be
the lab's control sample: a plant is driven in lockstep.

Config table (SI, plant units where named)::

    dt = 0.0009765625                 # control sample (s)
    units_per_metre = 1000.0          # plant units (mm) per m
    dofs = ["actuator_1", "actuator_2"]
    [actuators]  model = "ideal"  |  model = "state-space", a = [[..]], b = [[..]], c = [[..]]
                 (one multi-input plant, continuous, plant units, sampled by a fixed-step RK4 at dt:
                 the identified maRTHS plant)
    actuators = [{model = "first-order", bandwidth = 700.0}, {model = "delay", samples = 3}, ...]
                 (one table per actuator, hybridsim.modules.plant.channels: ideal, delay, first-order,
                 transfer-function, state-space)
                 either form: delay (s) and gain, knobs added to the dynamics (hybridsim.modules.plant.knobs)
    [noise]      stroke sensors: sigma (plant units), seed, shared = true, quantum, limit (plant units)
    [load_cells] sigma (N), seed, shared, quantum (N), limit (N)
    [specimen]   the virtual specimen (hybridsim.modules.plant.virtual_specimen): kind = "linear" | "spring" |
                 "opensees" and that module's keys, coordinates = "dofs" (with setup = {...}) | "actuators" |
                 "attachments" (opensees: attachments = [{node, base, stiffness}, ...], one per actuator;
                 hybridsim.modules.plant.simulated_domain)
    [daq]        gains (plant units/V), offsets (plant units), corrections, limit (V), quantum (V), in_loop
                 (optional: without it the command is logged 1:1, no saturation)
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.modules.base import StepLedger
from hybridsim.modules.config_schema import (Either, Flag, Integer, Key, Names, Number, Numbers, Schema, Table,
                                             Tables, Variants)
from hybridsim.wire.contract import Command, Description, Dof, ModuleError, Record, Session, StepRefused
from hybridsim.modules.plant.actuators import Actuators, InstantActuators, LinearActuators
from hybridsim.modules.plant.channels import ChannelActuators
from hybridsim.modules.plant.daq import CommandDaq
from hybridsim.modules.plant.knobs import KnobbedActuators
from hybridsim.modules.plant.lab import VirtualLab
from hybridsim.modules.plant.sensors import Sensor, SensorNoise
from hybridsim.modules.plant import specimen_kinds
from hybridsim.modules.plant.virtual_specimen import build_specimen
from hybridsim.modules.rowlog import RowLog


_POSITIVE = Number(minimum=0, open_minimum=True)
_STATE_SPACE = {"a": Key(Numbers("1/s", (2,)), "n x n", required=True),
                "b": Key(Numbers("", (2,)), "n x inputs", required=True),
                "c": Key(Numbers("", (2,)), "outputs x n", required=True)}
KNOBS = {"delay": Key(Number("s", 0, 1.0), "a transport delay added before the dynamics (a rehearsal's delay margin; "
                      "hybridsim.modules.plant.knobs: linear between samples; a servo-hydraulic loop's is milliseconds, "
                      "and every sample of it is held in memory)", default=0.0),
         "gain": Key(Number("", 0, open_minimum=True), "a factor on the strokes reached (a plant gain error; 1: none)",
                     default=1.0)}
ACTUATORS = Schema("actuators", "One multi-input system from commands to strokes (plant units).", KNOBS, variants=Variants(
    "model", {
        "ideal": Schema("ideal actuators", "The stroke is the command, at once."),
        "state-space": Schema("state-space actuators", "Continuous x' = a x + b u, y = c x (plant units), sampled "
                              "by a fixed-step RK4 at dt (the identified maRTHS plant).", _STATE_SPACE),
    }, doc="the actuator model"))
CHANNEL = Schema("actuator", "One actuator's own dynamics (hybridsim.modules.plant.channels), sampled exactly at dt.",
                 KNOBS, variants=Variants("model", {
                     "ideal": Schema("ideal", "The command of sample k is reached at k + 1."),
                     "delay": Schema("delay", "The command of sample k is reached at k + d.", {
                         "samples": Key(Integer(1, unit="samples"), "d", required=True)}),
                     "first-order": Schema("first-order", "a / (s + a).", {
                         "bandwidth": Key(Number("rad/s", 0, open_minimum=True), "a", required=True)}),
                     "transfer-function": Schema("transfer-function", "Continuous num / den, discretised by ZOH.", {
                         "num": Key(Numbers("", (0, 1)), "numerator, highest power first", required=True),
                         "den": Key(Numbers("", (0, 1)), "denominator, highest power first", required=True)}),
                     "state-space": Schema("single-channel state space", "Continuous, single input and output, "
                                           "by ZOH.", {**_STATE_SPACE,
                                                       "d": Key(Numbers("", (0, 2)), "feedthrough", default=0.0)}),
                 }, doc="the actuator's model"))


def _sensor_schema(title: str, unit: str) -> Schema:
    return Schema(title, f"Sensors of every actuator: additive noise, quantization, range ({unit}).", {
        "sigma": Key(Number(unit, 0), "noise standard deviation", default=0.0),
        "seed": Key(Integer(0), "seed of the noise generator (recorded, so a run can be repeated)", default=0),
        "shared": Key(Flag(), "one generator for all channels (the benchmark's); false: one per channel", default=True),
        "quantum": Key(Number(unit, 0, open_minimum=True), "resolution (absent: not quantized)"),
        "limit": Key(Number(unit, 0, open_minimum=True), "range (absent: unlimited)"),
        "drift": Key(Number(f"{unit} per sample"), "a steady drift: the reading at sample k is off by k times it "
                     "(a load cell's or amplifier's drift; a specimen's relaxation seen by the site)", default=0.0),
    })


DAQ = Schema("daq", "The command DAQ: plant units to volts, saturation, quantization.", {
    "gains": Key(Numbers("plant units/V", (1,), _POSITIVE), "g_i, one per actuator", required=True),
    "offsets": Key(Numbers("plant units", (1,)), "c_i, one per actuator", required=True),
    "corrections": Key(Numbers("", (1,)), "correction gains cg_i, one per actuator", required=True),
    "limit": Key(Number("V", 0, open_minimum=True), "saturation", default=3.8),
    "quantum": Key(Number("V", 0, open_minimum=True), "DAC resolution (absent: not quantized)"),
    "in_loop": Key(Flag(), "saturation and quantization act on the plant (false: only logged)", default=False),
})
CONFIG = Schema("plant", "A virtual lab driven one control sample per step: actuator strokes in (m), measured "
                "strokes and load-cell forces out.", {
                    "dt": Key(Number("s", 0, open_minimum=True), "control sample (an experimental site's lab: the site's dt)",
                              required=True),
                    "units_per_metre": Key(Number("plant units/m", 0, open_minimum=True), "plant units per metre",
                                           default=1000.0),
                    "dofs": Key(Names(), "actuator names", default=["actuator_1", "actuator_2"]),
                    "actuators": Key(Either((Table(ACTUATORS), Tables(CHANNEL))),
                                     "the actuators' dynamics: one multi-input table or one table per actuator",
                                     required=True),
                    "noise": Key(Table(_sensor_schema("noise", "plant units")), "stroke sensors"),
                    "load_cells": Key(Table(_sensor_schema("load_cells", "N")), "load cells"),
                    "specimen": Key(Table(specimen_kinds.CONFIG), "the virtual specimen: kind (linear, spring, "
                                    "opensees) and that kind's keys, where it is driven (coordinates)"),
                    "daq": Key(Table(DAQ), "command DAQ (absent: commands logged 1:1, no saturation)"),
                })


def build_actuators(table: Any, channels: int, sample_period: float) -> Actuators:
    """The lab's actuators: one multi-input table (ideal, state-space) or one table per actuator, with their
    ``delay`` and ``gain`` knobs (hybridsim.modules.plant.knobs) where any is set."""
    actuators = _dynamics(table, channels, sample_period)
    tables = table if isinstance(table, list) else [table] * channels
    delays, gains = ([t.get(key, none) for t in tables] for key, none in (("delay", 0.0), ("gain", 1.0)))
    if all(d == 0.0 for d in delays) and all(g == 1.0 for g in gains):
        return actuators
    try:
        return KnobbedActuators(actuators, delays, gains, sample_period)
    except (TypeError, ValueError) as exc:
        raise ModuleError(f"plant module: actuators: {exc}") from None


def _dynamics(table: Any, channels: int, sample_period: float) -> Actuators:
    """The actuators' own dynamics, without knobs."""
    if isinstance(table, list):
        if len(table) != channels:
            raise ModuleError(f"plant module: actuators gives {len(table)} tables for {channels} actuators (dofs)")
        try:
            return ChannelActuators(table, sample_period)
        except ValueError as exc:
            raise ModuleError(f"plant module: actuators: {exc}") from None
    if not isinstance(table, Mapping):
        raise ModuleError("plant module: give an [actuators] table or a list of one table per actuator")
    model = table.get("model")
    if model == "ideal":
        return InstantActuators(channels)
    if model == "state-space":
        try:
            a, b, c = (np.asarray(table[k], float) for k in ("a", "b", "c"))
        except KeyError as exc:
            raise ModuleError(f"plant module: actuators.{exc.args[0]} is missing (give a, b, c)") from None
        n = a.shape[0]
        if a.shape != (n, n) or b.shape != (n, channels) or c.shape != (channels, n):
            raise ModuleError(f"plant module: actuators a, b, c must be n x n, n x {channels}, {channels} x n; "
                              f"got {a.shape}, {b.shape}, {c.shape}")
        return LinearActuators.rk4(a, b, c, sample_period)
    raise ModuleError(f"plant module: actuators.model must be 'ideal' or 'state-space', not {model!r}")


def _sensor(table: Mapping[str, Any], channels: int) -> Sensor:
    quantum, limit = table.get("quantum"), table.get("limit")
    return Sensor(SensorNoise(float(table.get("sigma", 0.0)), int(table.get("seed", 0)), channels,
                              bool(table.get("shared", True))),
                  None if quantum is None else float(quantum), None if limit is None else float(limit),
                  float(table.get("drift", 0.0)))


def build_lab(config: Mapping[str, Any], base_dir: Path | None = None) -> VirtualLab:
    """The virtual lab a plant config describes (files of its specimen relative to ``base_dir``)."""
    try:
        dt = float(config["dt"])
    except (KeyError, TypeError, ValueError):
        raise ModuleError("plant module: give dt, the control sample (s)") from None
    channels = len(config.get("dofs", ("actuator_1", "actuator_2")))
    daq = config.get("daq", {"gains": [1.0] * channels, "offsets": [0.0] * channels,
                             "corrections": [1.0] * channels, "limit": math.inf})
    if not isinstance(daq, Mapping):
        raise ModuleError("plant module: daq must be a table")
    try:
        strokes = _sensor(config.get("noise", {}), channels)
        command_daq = CommandDaq(tuple(daq["gains"]), tuple(daq["offsets"]), tuple(daq["corrections"]),
                                 float(daq.get("limit", 3.8)), daq.get("quantum"), bool(daq.get("in_loop", False)))
    except KeyError as exc:
        raise ModuleError(f"plant module: daq.{exc.args[0]} is missing") from None
    except ValueError as exc:
        raise ModuleError(f"plant module: {exc}") from None
    actuators = build_actuators(config.get("actuators"), channels, dt)
    specimen = None if "specimen" not in config else build_specimen(config["specimen"], channels, dt, base_dir)
    cells = channels if specimen is None else specimen.cells
    load_cells = _sensor(config["load_cells"], cells) if "load_cells" in config else None
    return VirtualLab(actuators, strokes, command_daq, float(config.get("units_per_metre", 1000.0)), specimen,
                      load_cells)


def prime_lab(config: Mapping[str, Any], base_dir: Path | None = None) -> None:
    """Drive a throwaway lab of ``config`` one sample at rest, so that its compiled per-sample kernels
    (hybridsim.modules.kernels) are loaded into this process before a test's first step, not during it."""
    if "specimen" in config:
        return  # an openseespy specimen holds the process's domain: one lab at a time
    lab = build_lab(config, base_dir)
    lab.drive(np.zeros(len(lab.daq.gains)))


class PlantModule(StepLedger):
    """A :class:`VirtualLab` as a module: strokes in, measured strokes out, lockstep at the control sample."""

    kind = "plant"
    exclusive_sessions = True
    """a lab: a second coordinator's Open is refused while a session is open, unless it takes over"""
    CONFIG = CONFIG

    def __init__(self, config: Mapping[str, Any], base_dir: Path | None = None) -> None:
        super().__init__()
        self.config = copy.deepcopy(dict(config))
        self.base_dir = base_dir
        self.dofs = tuple(Dof(name) for name in self.config.get("dofs", ("actuator_1", "actuator_2")))
        self.lab = build_lab(self.config, base_dir)
        cells = len(self.dofs) if self.lab.specimen is None else self.lab.specimen.cells
        if cells != len(self.dofs):
            self.lab.close()
            raise ModuleError(f"plant module: its specimen reads {cells} load cells (the rig's "
                              f"braces or rods), a plant module returns one force per actuator ({len(self.dofs)}): "
                              "run this lab in the site's process (backend.plant)")
        self.control_dt = float(self.config["dt"])
        self._committed: dict[str, Any] | None = None
        self._moved = False
        """the lab may have left its committed state (a trial ran, or failed, since the last commit or discard)"""
        self._commands = RowLog(len(self.dofs))
        """the DAQ log not collected yet (none unless records are asked): row k, the command (m) held over
        sample k, as committed"""
        self._keep = True

    @classmethod
    def from_config(cls, config: Mapping[str, Any], base_dir: Path | None = None) -> "PlantModule":
        return cls(config, base_dir)

    def describe(self) -> Description:
        return Description(kind=self.kind, dofs=self.dofs, own_clock=False, control_dt=self.control_dt,
                           info={"force": "the load cells (N); zeros when the lab has no specimen",
                                 "step": "one control sample; the first step (t = 0) reads the sensors at rest"},
                           role="control_backend")

    def _on_open(self, session: Session) -> None:
        if not math.isclose(session.dt, self.control_dt, rel_tol=1e-12):
            raise ModuleError(f"plant module: the session dt ({session.dt} s) must be the control sample "
                              f"({self.control_dt} s); a plant is driven one sample per step")
        prime_lab(self.config, self.base_dir)
        self.lab.close()
        self.lab = build_lab(self.config, self.base_dir)
        self._committed = None
        self._moved = False
        self._commands = RowLog(len(self.dofs))
        self._keep = session.records

    def _sample_of(self, step: int, command: Command) -> int:
        n = round(command.time / self.control_dt)
        if abs(command.time - n * self.control_dt) > 1e-9 * self.control_dt:
            raise StepRefused(step, f"time {command.time} s is not on the control grid of {self.control_dt} s")
        return n

    def _check(self, step: int, command: Command) -> None:
        n = self._sample_of(step, command)
        expected = 0 if self._committed is None else self._committed["tick"] + 1
        if n != expected:
            raise StepRefused(step, f"the plant is at sample {expected - 1}; the next command must be for "
                                    f"t = {expected * self.control_dt} s, not {command.time} s")
        if n == 0 and np.any(command.displacement != 0.0):
            raise StepRefused(step, "at t = 0 the actuators are at rest: the first command must be zero")

    def _trial(self, step: int, command: Command) -> tuple[np.ndarray, np.ndarray]:
        if self._committed is None:
            measured = self.lab.reading()
        else:
            if self._moved:  # a trial failed half-way: the ledger discards only an executed one
                self.lab.set_state(self._committed)
            self._moved = True
            measured = self.lab.drive(command.displacement)
        return measured, self.lab.loads()

    def _accept(self, step: int) -> None:
        self._committed = self.lab.state()
        self._moved = False
        tick = self._committed["tick"]
        if tick > 0 and self._keep:
            self._commands.truncate(tick - 1)
            self._commands.at(tick - 1)[:] = self._proposed[1].displacement  # type: ignore[index]

    def _discard(self) -> None:
        if self._committed is not None:
            self.lab.set_state(self._committed)
        self._moved = False

    def _save_state(self) -> object:
        return self._committed

    def _load_state(self, state: object) -> None:
        self._committed = state  # type: ignore[assignment]
        self._moved = False
        if state is not None:
            self.lab.set_state(state)  # type: ignore[arg-type]
        tick = 0 if state is None else state["tick"]  # type: ignore[index]
        if not self._commands.first <= tick <= self._commands.rows:  # restored outside what it holds (a fresh
            self._commands.restart(tick)                                # daemon resumed): the log goes on from there
        self._commands.truncate(tick)

    def records(self, since: int = 0, final: bool = True) -> list[Record]:
        """The DAQ log of the committed samples, streamed (see :class:`hybridsim.wire.contract.Record`): row k,
        the command held over sample k (plant units, mm for the maRTHS plant) and its servo volts before
        saturation (what the realizability check reads), from row ``since`` on; the rows before are stored,
        and forgotten here."""
        if not self._keep:
            return []
        log = self._commands
        log.forget(min(since, log.rows))
        units = self.lab.units_per_metre
        commands = log.head() * units
        names = tuple(d.name for d in self.dofs)
        unit = "mm" if units == 1000.0 else f"m/{units:g}"
        return [Record("commands", commands, (unit,) * len(names), names, "command held over sample k", log.first),
                Record("volts", self.lab.daq.volts(commands), ("V",) * len(names), names,
                       "servo command volts of sample k, before saturation", log.first)]

    def close(self) -> dict[str, float]:
        return {**super().close(), **self.lab.close()}
