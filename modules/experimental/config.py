"""An experimental site's configuration: its declaration (:data:`CONFIG`, which alone validates every key,
``docs/config_reference.md``) and what follows from a validated table (setup, actuator tables, interface DOFs,
samples per step, command generation).  The keys are those of
:mod:`hybridsim.modules.experimental.module`'s docstring."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Key, Names, Number, Numbers, Schema, Table, Tables, Text
from hybridsim.modules.experimental import (clock, command_generation, force_control, guards, kinematics,
                                            physical_frame, relaxation)
from hybridsim.modules.experimental.clock import ClockSettings
from hybridsim.modules.experimental.command_generation import CommandGenerator
from hybridsim.modules.experimental.compensators import kinds as compensator_kinds
from hybridsim.modules.experimental.controls import BACKEND
from hybridsim.modules.experimental.setups import kinds as setup_kinds
from hybridsim.modules.experimental.setups.base import Setup
from hybridsim.modules.experimental.setups.marths_coupler import coupler_setup
from hybridsim.wire.contract import Dof, ModuleError

ACTUATOR = Schema("actuator", "One actuator of the site: its compensator, its limits and its runaway guard.", {
    "compensator": Key(Table(compensator_kinds.CONFIG), "its delay compensation", default={"kind": "none"}),
    "guard": Key(Table(guards.CONFIG), "its runaway guard"),
    "stroke": Key(Number("m", 0, open_minimum=True), "stroke limit (targets and commands)"),
    "force": Key(Number("N", 0, open_minimum=True), "load limit (measured: the site holds until an operator clears "
                 "it)"),
})
GATE = Schema("gate", "The site's gate: limits of every command to the actuators besides each one's stroke and force "
              "(docs/security.md); each one number for every actuator or a list with one per actuator.", {
                  "increment": Key(Numbers("m", (0, 1), Number(minimum=0, open_minimum=True)), "largest command "
                                   "change per control sample, from the measured stroke"),
                  "velocity": Key(Numbers("m/s", (0, 1), Number(minimum=0, open_minimum=True)), "largest command "
                                  "speed from the measured stroke, over the site's control sample"),
                  "start": Key(Numbers("m", (0, 1)), "the actuators' strokes where the test starts (a specimen "
                                "installed at an offset), the site's zero: its commands and readings are from there",
                               default=0.0),
                  "start_tolerance": Key(Number("m", 0), "the actuators' largest distance from the test's start "
                                         "(gate.start) at the reading at rest; farther, the site refuses to start",
                                         default=1e-3),
                  "restore_tolerance": Key(Number("m", 0), "the largest distance of the actuators from the strokes a "
                                           "checkpoint measured, when the site is restored to it (a lab's "
                                           "controller: where its read request finds them; a virtual lab or plant "
                                           "daemon: where the checkpoint's state puts them); farther, the restore is "
                                           "refused", default=1e-3),
                  "move_speed": Key(Number("m/s", 0, open_minimum=True), "the speed of hybridsim site ... --move-to "
                                    "(a ramp of the actuators to given strokes, under the gate)"),
              })
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
                    "force_control": Key(Tables(force_control.CONFIG), "setup DOFs the site holds at a force (not "
                                         "the coordinator's; lockstep, load-cell forces)"),
                    "backend": Key(BACKEND, "the control backend", required=True),
                    "gate": Key(Table(GATE), "the gate's limits of every command (increment, velocity) and the start"),
                    "record": Key(Text(), "the site's record (HDF5, appended every 65,536 samples and at close), in the "
                                  "configuration's folder"),
                    "command_generation": Key(command_generation.CONFIG, "targets of the control samples",
                                              default="interpolate"),
                    "relaxation": Key(Table(relaxation.CONFIG), "the relaxation check after every step: hold the "
                                      "target, compare the forces, warn or hold (lockstep)"),
                    **clock.KEYS,
                }, exactly_one=(("setup", "coupler"),), at_most_one=(("actuators", "compensators"),
                                                                    ("actuators", "guards"), ("frame", "force_control")))


def site_setup(config: Mapping[str, Any]) -> Setup:
    """The setup of a validated site config: ``setup = {kind = ...}``, or the maRTHS ``coupler`` table."""
    if "coupler" in config:
        return setup_kinds.build_setup(coupler_setup(config["coupler"]), "coupler")
    return setup_kinds.build_setup(config["setup"])


def actuator_tables(config: Mapping[str, Any], count: int) -> list[Mapping[str, Any]]:
    """One table per actuator: ``actuators``, or the maRTHS form ``compensators`` (+ ``guards``)."""
    if "actuators" in config:
        tables = list(config["actuators"])
    else:
        compensators = config.get("compensators", [{"kind": "none"}] * count)
        guard_tables = config.get("guards")
        if guard_tables is not None and len(guard_tables) != len(compensators):
            raise ModuleError(f"experimental module: guards: give one table per compensator ({len(compensators)}), "
                              f"not {len(guard_tables)}")
        tables = [{"compensator": c, **({} if guard_tables is None else {"guard": guard_tables[i]})}
                  for i, c in enumerate(compensators)]
    if len(tables) != count:
        raise ModuleError(f"experimental module: the setup has {count} actuator{'s' if count != 1 else ''}: give one "
                          f"table per actuator (actuators = [...]), not {len(tables)}")
    return tables


def per_actuator(gate: Mapping[str, Any], key: str, default: float, actuators: int) -> np.ndarray:
    """``gate.<key>``: one value for every actuator or one per actuator, as ``actuators`` values."""
    values = np.atleast_1d(np.asarray(gate.get(key, default), float))
    if values.shape not in ((1,), (actuators,)):
        raise ModuleError(f"experimental module: gate.{key}: the setup has {actuators} actuator"
                          f"{'s' if actuators != 1 else ''}: give one value for all of them or one per actuator, "
                          f"not {values.size}")
    return np.broadcast_to(values, (actuators,))


def interface_dofs(config: Mapping[str, Any], setup: Setup) -> tuple[Dof, ...]:
    """The site's DOFs in the coordinator's namespace: the frame model's three with a ``frame``, else the setup's,
    renamed by ``dofs`` if given."""
    if "frame" in config:
        return physical_frame.frame_dofs(config)
    if "kinds" in config:
        raise ModuleError("experimental module: kinds is the frame model's; the setup says each DOF's kind")
    held = {t["dof"] for t in config.get("force_control", ())}
    free = [d for d in setup.dofs if d.name not in held]
    names = config.get("dofs", [d.name for d in free])
    if len(names) != len(free):
        raise ModuleError(f"experimental module: dofs must rename the setup's {len(free)} DOFs "
                          f"({', '.join(d.name for d in free)}{', those not in force_control' if held else ''})")
    return tuple(Dof(str(n), d.kind) for n, d in zip(names, free))


def step_samples(config: Mapping[str, Any], settings: ClockSettings | None, dt: float) -> tuple[int, int]:
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
        refuse_amplified_kinks(config, settings, samples)
        return samples, samples
    scaled = samples * settings.time_scale
    if abs(scaled - round(scaled)) > 1e-9 * scaled:
        nearest = [f"{k / samples:g}" for k in (math.floor(scaled), math.ceil(scaled)) if k >= samples]
        raise ModuleError(f"experimental module: time_scale {settings.time_scale:g} times the {samples} control "
                          f"samples of a step ({dt:g} s / dt {control_dt:g} s) must be a whole number of samples, "
                          f"not {scaled:g} (e.g. time_scale = {' or '.join(nearest)})")
    if round(scaled) > 1 and command_generator(config, settings, round(scaled)).scheme != "predictor-corrector":
        raise ModuleError("experimental module: a site on its own clock with more than one control sample per "
                          "step needs command_generation = {scheme = \"predictor-corrector\", order = 2}: the "
                          "actuators move on predictions until the next target arrives")
    refuse_amplified_kinks(config, settings, round(scaled))
    return samples, round(scaled)


def refuse_amplified_kinks(config: Mapping[str, Any], settings: ClockSettings | None, samples: int) -> None:
    """Refuse an RLS adaptive compensator behind the predictor-corrector of order 2 or 3 when samples are
    predicted: ``samples`` M > 1 per step and an arrival past the step's start, or on the site's own clock.
    The predictor's error bends the command at every switch to the corrector, once per step; the compensator's
    adapted inverse FIR has a gain of some hundreds at a few hundred Hz, where those bends are, and drives
    the servo into saturation within seconds on the maRTHS design card (docs/realtime.md, "Limits")."""
    generator = command_generator(config, settings, samples)
    predicts = samples > 1 and (settings is not None or getattr(generator, "predicted", 0) > 0)
    try:
        tables = actuator_tables(config, site_setup(config).actuators)
    except (ModuleError, ValueError):
        return  # building the site names what is wrong with its tables
    kinds = [t.get("compensator", {}).get("kind") for t in tables]
    if predicts and generator.order >= 2 and "rls" in kinds:
        raise ModuleError(f"experimental module: command_generation order {generator.order} with an RLS adaptive "
                          f"compensator (actuator {kinds.index('rls') + 1}) saturates the servo: the predictor's "
                          "error bends the command at every switch to the corrector and the compensator's inverse "
                          "amplifies it; use command_generation order = 1 (docs/realtime.md, Limits)")


def command_generator(config: Mapping[str, Any], settings: ClockSettings | None, samples: int) -> CommandGenerator:
    """The command generation of ``samples`` per step; on its own clock (``settings``) the predictor-corrector's
    arrival is optional (absent: the real arrival of each target decides)."""
    generation = config.get("command_generation", "interpolate")
    if settings is not None and isinstance(generation, Mapping):
        generation = {"arrival": 0.0, **generation}
    try:
        return CommandGenerator.from_config(generation, samples)
    except ValueError as exc:
        raise ModuleError(f"experimental module: {exc}") from None


def output_path(base_dir: Path | None, value: str) -> Path:
    """A file the site writes (``record``), inside the configuration's folder (or below it)."""
    root = Path(base_dir or Path.cwd()).resolve()
    path = (root / value).resolve()
    if not value or not path.is_relative_to(root) or not path.parent.is_dir():
        raise ModuleError(f"experimental module: record = {value!r} must name a file in an existing folder "
                          f"inside {root}")
    return path
