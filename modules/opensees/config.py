"""The OpenSees module's configuration: model file, control DOFs, coordinator mass, static analysis.

A site writes it as a TOML (or JSON) table (``hybridsim site opensees
--config FILE``, or ``config``/``config_file`` of an experiment's
``[[modules]]``), for example::

    kind = "opensees"
    model = "frame.py"            # defines build(ops, **parameters); path relative to this file
    path_independent = true       # elastic model: no worker process, a discard re-imposes the committed state
    mass_from_model = true        # report the model's nodal masses at the control DOFs

    [parameters]                  # keyword arguments of build()
    story_height = 0.635

    [[control]]                   # one entry per control DOF, in the coordinator's order
    name = "floor1.x"
    node = 6
    dof = 1                       # OpenSees DOF number at the node (1-based)

    [analysis]                    # optional: the static step that imposes the displacements
    tolerance = 1e-10             # NormDispIncr tolerance (m, rad)
    max_iterations = 25
    substeps = 1                  # increments per step
    max_substeps = 16             # on non-convergence the increment is halved up to this many
    algorithm = "Newton"

    [resume]                      # optional: what a stopped run leaves at the site for `hybridsim resume`
    kept_copies_s = 600           # its worker's kept copies (memory) end after this long parked
    path_files_s = 604800         # committed-path files untouched this long are deleted when a module starts
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hybridsim.modules.base import resolve_config_path
from hybridsim.modules.config_schema import Flag, Free, Integer, Key, Number, Numbers, Schema, Table, Tables, Text
from hybridsim.modules.dynamic import RECORD_KEYS, SCHEME_KEYS
from hybridsim.modules.force_history import FORCE_HISTORY, History, force_at, force_history
from hybridsim.wire.contract import UNIT_OF_KIND, ModuleError

ALGORITHMS = ("Newton", "ModifiedNewton", "KrylovNewton", "NewtonLineSearch", "Linear")


@dataclass(frozen=True)
class ControlDof:
    """A DOF of the OpenSees model that the coordinator drives: name, node tag, 1-based DOF number."""

    name: str
    node: int
    dof: int
    kind: str | None = None
    """'translation' or 'rotation'; None: inferred from the model (ndm, ndf)"""
    mass: float | None = None
    """mass the coordinator carries at this DOF (kg or kg*m^2); None: none or from the model"""


@dataclass(frozen=True)
class ForceDof:
    """A DOF of the OpenSees model held at a force target by a load pattern (force control): free, not imposed,
    and not one of the coordinator's DOFs; its displacement is what the model reaches."""

    name: str
    node: int
    dof: int
    force: float
    """the target (N, N*m), applied in ``increments`` solves when the model is built and held constant after"""
    increments: int = 10
    limit: float | None = None
    """the largest force a lab protocol's client may command here (N, N*m; None: any)"""
    history: History | None = None
    """(times s, forces N or N*m): the target at a command's time, linear between the points (None: constant)"""

    def at(self, time: float) -> float:
        """The target at ``time`` (s)."""
        return self.force if self.history is None else force_at(self.history, time)


@dataclass(frozen=True)
class AnalysisSettings:
    """The static analysis that imposes one step's displacements."""

    tolerance: float = 1e-10
    max_iterations: int = 25
    substeps: int = 1
    max_substeps: int = 16
    algorithm: str = "Newton"


@dataclass(frozen=True)
class ResumeSettings:
    """How long a stopped run's state waits at the site for a resume (a completed run's is dropped at once)."""

    kept_copies_s: float = 600.0
    """a stopped run's kept copies of its worker (memory) are ended after this long parked (s): minutes, enough
    for an operator's immediate resume (a later one replays the committed path, from disk)"""
    path_files_s: float = 604800.0
    """committed-path files (disk) untouched this long are deleted when a path-dependent module starts (s)"""


@dataclass(frozen=True)
class OpenSeesSpec:
    """Everything the module needs to build and drive its model."""

    model: Path
    controls: tuple[ControlDof, ...]
    parameters: Mapping[str, Any] = field(default_factory=dict)
    forces: tuple[ForceDof, ...] = ()
    """DOFs in force control (``[[force_control]]``)"""
    path_independent: bool = False
    mass_from_model: bool = False
    analysis: AnalysisSettings = AnalysisSettings()
    resume: ResumeSettings = field(default=ResumeSettings(), compare=False)
    """(not part of what identifies the model: a resumed session may bring other settings)"""


CONTROL = Schema("control", "One control DOF of the model, in the coordinator's order.", {
    "name": Key(Text(), "the DOF's name in the coordinator's namespace", required=True),
    "node": Key(Integer(0), "OpenSees node tag", required=True),
    "dof": Key(Integer(1), "OpenSees DOF number at the node (1-based)", required=True),
    "kind": Key(Text(tuple(UNIT_OF_KIND)), "translation or rotation (default: inferred from the model)"),
    "mass": Key(Number("kg or kg*m^2", 0), "mass the coordinator carries at this DOF"),
})
FORCE_CONTROL = Schema("force_control", "One DOF of the model in force control (docs/force_control.md): a load "
                       "pattern holds it at its target, the DOF free (not imposed); the coordinator does not see it.", {
    "name": Key(Text(), "the DOF's name (its record's column)", required=True),
    "node": Key(Integer(0), "OpenSees node tag", required=True),
    "dof": Key(Integer(1), "OpenSees DOF number at the node (1-based)", required=True),
    "force": Key(Number("N or N*m"), "a constant force target (e.g. the gravity load, negative downwards)"),
    "history": Key(Table(FORCE_HISTORY), "a force target that changes with the command's time (path_independent "
                   "models)"),
    "increments": Key(Integer(1), "solves that ramp the target in when the model is built (the control DOFs "
                      "held)", default=10),
    "limit": Key(Number("N or N*m", 0, open_minimum=True), "the largest force a lab protocol's client may "
                 "command here (OpenFresco's ExpForceControl); beyond it the step is refused"),
}, exactly_one=(("force", "history"),))
ANALYSIS = Schema("analysis", "The static analysis that imposes one step's displacements.", {
    "tolerance": Key(Number("m, rad", 0, open_minimum=True), "NormDispIncr tolerance",
                     default=AnalysisSettings.tolerance),
    "max_iterations": Key(Integer(1), "iterations per increment", default=AnalysisSettings.max_iterations),
    "substeps": Key(Integer(1), "increments per step", default=AnalysisSettings.substeps),
    "max_substeps": Key(Integer(1), "on non-convergence the increment is halved up to this many",
                        default=AnalysisSettings.max_substeps),
    "algorithm": Key(Text(ALGORITHMS), "solution algorithm", default=AnalysisSettings.algorithm),
})
RESUME = Schema("resume", "What a stopped run (its coordinator died or stopped) leaves at a path-dependent site "
                "for `hybridsim resume`; a run that completes drops both at once (docs/opensees.md).", {
    "kept_copies_s": Key(Number("s", 0, open_minimum=True), "its worker's frozen copies at the last two "
                         "checkpoints (memory, a few MB): ended after this long parked; a resume after that replays "
                         "the committed path", default=ResumeSettings.kept_copies_s),
    "path_files_s": Key(Number("s", 0, open_minimum=True), "committed-path files untouched this long are deleted "
                        "when a path-dependent module of any site starts (disk, 8 (n + 1) B per step); a resume "
                        "after that is refused", default=ResumeSettings.path_files_s),
})
DYNAMIC = Schema("opensees module's dynamic table", "The model carries its mass; OpenSees assembles M and K of the "
                 "linear model, C = a M + b K, and the module (or OpenSees' transient analysis) integrates them "
                 "between the coordinator's steps (docs/dynamic_modules.md; needs path_independent = true).", {
                     "direction": Key(Integer(1, 6), "the OpenSees DOF the record excites (uniform excitation)",
                                      default=1),
                     "rayleigh": Key(Numbers("1/s, s"), "[a, b]: C = a M + b K", default=[0.0, 0.0]),
                     "integrator": Key(Text(choices=("module", "opensees")), "who integrates the internal DOFs: "
                                       "the module (the assembled matrices) or OpenSees (a transient analysis with "
                                       "the interface imposed)", default="module"),
                     "tolerance": Key(Number("m", 0.0, open_minimum=True), "NormDispIncr tolerance of OpenSees' "
                                      "Newton iterations in a transient step (integrator = \"opensees\")",
                                      default=1e-12),
                     "accept_stalled": Key(Flag(), "a transient step still above the tolerance after 50 iterations "
                                           "is taken (a multi-yield soil's iterations can stall near 1e-8 m)",
                                           default=False),
                     **SCHEME_KEYS,
                 }, exactly_one=RECORD_KEYS)
CONFIG = Schema("opensees", "An openseespy model file driven at its control DOFs by a static imposed-displacement "
                "step (docs/opensees.md).", {
                    "model": Key(Text(), "Python file that defines build(ops, **parameters), relative to the "
                                 "configuration's folder (trusted code: docs/security.md)", required=True),
                    "parameters": Key(Free(), "keyword arguments of build()"),
                    "control": Key(Tables(CONTROL), "the control DOFs", required=True),
                    "force_control": Key(Tables(FORCE_CONTROL), "DOFs held at a force target by the model itself"),
                    "path_independent": Key(Flag(), "elastic model (state = f(displacements)): a discarded trial "
                                            "needs no copy of the committed state", default=False),
                    "mass_from_model": Key(Flag(), "report the model's nodal masses at the control DOFs",
                                           default=False),
                    "analysis": Key(Table(ANALYSIS), "the static step"),
                    "resume": Key(Table(RESUME), "how long a stopped run's state waits for a resume"),
                    "dynamic": Key(Table(DYNAMIC), "the model integrates its own mass (a dynamic substructure)"),
                })


def _require(table: Mapping[str, Any], key: str, where: str, hint: str) -> Any:
    if key not in table:
        raise ModuleError(f"opensees module: {where} is missing {key!r} ({hint})")
    return table[key]


def _integer(value: Any, key: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ModuleError(f"opensees module: {key} must be an integer >= {minimum}, not {value!r}")
    return value


def _positive(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
        raise ModuleError(f"opensees module: {key} must be a positive number, not {value!r}")
    return float(value)


def _control(entry: Mapping[str, Any], index: int) -> ControlDof:
    where = f"control[{index}]"
    hint = "each control entry needs name, node and dof"
    name = str(_require(entry, "name", where, hint))
    node = _integer(_require(entry, "node", where, hint), f"{where}.node", 0)
    dof = _integer(_require(entry, "dof", where, hint), f"{where}.dof", 1)
    kind = entry.get("kind")
    if kind is not None and kind not in UNIT_OF_KIND:
        raise ModuleError(f"opensees module: {where}.kind must be 'translation' or 'rotation', not {kind!r}")
    mass = entry.get("mass")
    if mass is not None:
        if isinstance(mass, bool) or not isinstance(mass, (int, float)) or not (math.isfinite(mass) and mass >= 0):
            raise ModuleError(f"opensees module: {where}.mass must be a non-negative number (kg or kg*m^2)")
        mass = float(mass)
    return ControlDof(name, node, dof, kind, mass)


def _force_dof(entry: Mapping[str, Any], index: int) -> ForceDof:
    """One validated ``force_control`` entry: a constant target, or a history (increasing times from 0)."""
    history = entry.get("history")
    if history is not None:
        history = force_history(history, f"opensees module: force_control[{index}].history")
    force = float(entry["force"]) if history is None else history[1][0]
    limit = entry.get("limit")
    return ForceDof(str(entry["name"]), int(entry["node"]), int(entry["dof"]), force, int(entry.get("increments", 10)),
                    None if limit is None else float(limit), history)


def _analysis(table: Mapping[str, Any]) -> AnalysisSettings:
    default = AnalysisSettings()
    settings = AnalysisSettings(
        tolerance=_positive(table.get("tolerance", default.tolerance), "analysis.tolerance"),
        max_iterations=_integer(table.get("max_iterations", default.max_iterations), "analysis.max_iterations", 1),
        substeps=_integer(table.get("substeps", default.substeps), "analysis.substeps", 1),
        max_substeps=_integer(table.get("max_substeps", default.max_substeps), "analysis.max_substeps", 1),
        algorithm=str(table.get("algorithm", default.algorithm)),
    )
    if settings.algorithm not in ALGORITHMS:
        raise ModuleError(f"opensees module: analysis.algorithm must be one of {list(ALGORITHMS)}, "
                          f"not {settings.algorithm!r}")
    if settings.max_substeps < settings.substeps:
        raise ModuleError("opensees module: analysis.max_substeps must be >= analysis.substeps")
    return settings


def parse_spec(table: Mapping[str, Any], base_dir: Path) -> OpenSeesSpec:
    """Validate a configuration table; relative paths are taken from ``base_dir``."""
    CONFIG.with_keys("opensees", "", {"kind": Key(Text(("opensees",)), "")}).check(table)
    model = resolve_config_path(base_dir, _require(table, "model", "the config",
                                                   "the Python file that defines build(ops, **parameters)"),
                                "opensees module: model")
    entries = _require(table, "control", "the config", "a list of [[control]] tables: name, node, dof")
    if not isinstance(entries, Sequence) or isinstance(entries, (str, bytes)) or not entries:
        raise ModuleError("opensees module: 'control' must be a non-empty list of tables (name, node, dof)")
    controls = tuple(_control(entry, i) for i, entry in enumerate(entries))
    names = [c.name for c in controls]
    if len(set(names)) != len(names):
        raise ModuleError(f"opensees module: control DOF names must be unique, got {names}")
    places = [(c.node, c.dof) for c in controls]
    if len(set(places)) != len(places):
        raise ModuleError("opensees module: two control entries name the same node and dof")
    forces = tuple(_force_dof(e, i) for i, e in enumerate(table.get("force_control", ())))
    if any(f.history is not None for f in forces) and not table.get("path_independent", False):
        raise ModuleError("opensees module: a force_control history needs path_independent = true (a path-dependent "
                          "model's committed path keeps displacements only): give a constant force instead")
    clash = sorted({(f.node, f.dof) for f in forces} & set(places))
    if clash:
        raise ModuleError(f"opensees module: (node, dof) {clash[0]} is both a control DOF and in force_control; a DOF "
                          "is either displacement- or force-controlled: drop it from one of the two")
    if len({(f.node, f.dof) for f in forces}) != len(forces):
        raise ModuleError("opensees module: two force_control entries name the same node and dof")
    parameters = table.get("parameters", {})
    if not isinstance(parameters, Mapping):
        raise ModuleError("opensees module: 'parameters' must be a table of build() keyword arguments")
    mass_from_model = bool(table.get("mass_from_model", False))
    if mass_from_model and any(c.mass is not None for c in controls):
        raise ModuleError("opensees module: give either mass_from_model = true or per-control 'mass', not both")
    return OpenSeesSpec(
        model=model,
        controls=controls,
        parameters=dict(parameters),
        forces=forces,
        path_independent=bool(table.get("path_independent", False)),
        mass_from_model=mass_from_model,
        analysis=_analysis(table.get("analysis", {})),
        resume=ResumeSettings(**{key: float(value) for key, value in table.get("resume", {}).items()}),
    )
