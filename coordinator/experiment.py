"""Reading and validating an experiment file (TOML): structure, ground motion, integrator, modules, output.

Every key is declared once, with its unit, range and default, in
:mod:`hybridsim.coordinator.experiment_schema` (docs/config_reference.md is
generated from it); what spans keys is checked here as each value is built.
Every problem is reported as :class:`ExperimentError` with the key that is
wrong and what to write instead, before anything runs.  Input paths are
relative to the experiment file; ``output.file`` is relative to the folder
the run is started from.  A minimal experiment::

    [experiment]
    name = "sdof"
    dt = 0.01                       # s

    [structure]
    dofs = ["x"]
    mass_diagonal = [1000.0]        # kg (or mass = [[...]], mass_file = "M.csv")
    condense_massless = false       # true: integrate the DOFs with mass, recover the rest (Guyan)
    damping = { rayleigh_omega = [6.28, 62.8], zeta = 0.05 }
    influence = [1.0]

    [ground_motion]
    file = "elcentro.csv"           # two-column CSV (m/s^2) or PEER .AT2
    scale = 0.5                     # or pga = 3.0 (m/s^2)
    # or several components, each with its influence (instead of [ground_motion] and structure.influence):
    # [[excitation]]
    # file = "RSN953_NORTHR_MUL009.AT2"; influence_dofs = ["x"]; scale = 1.0; start_s = 0.0

    [integrator]
    kind = "alpha-os"               # alpha-os | newmark | central-difference
    alpha = -0.05

    [[modules]]
    name = "column"
    kind = "linear"                 # address = "local" | "host:port" runs it as a daemon
    config = { dofs = ["x"], stiffness = [[4.0e5]] }   # optional for address = "host:port": the site's
                                    # own config runs; given, it must be the site's (else exit 2)
    # network = { round_trip_s = 0.02, jitter_s = 0.002, loss = 0.001 }   # an emulated path to a module at
                                    # an address (hybridsim.coordinator.network, docs/realtime.md)

    [output]
    file = "results/sdof.h5"
    checkpoint_every = 1000         # steps; `hybridsim resume results/sdof.h5` continues from the last one
    records = true                  # the modules' own records (a site's per-sample log) into the results
                                    # file, streamed in blocks; false: the sites keep none
"""

from __future__ import annotations

import dataclasses
import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from hybridsim.shipped import resolve
from hybridsim.wire.credentials import ClientCredentials
from hybridsim.wire.security import CredentialError
from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.excitation import Component, on_grid
from hybridsim.coordinator.integrity.rules import Rule, site_rules
from hybridsim.coordinator.experiment_schema import (EXCITATION, EXPERIMENT, GROUND_MOTION, INTEGRATOR, MODULE, OUTPUT,
                                                     PRETEST, RUN, SCALE, STRUCTURE, default)
from hybridsim.coordinator.motion import GroundMotion, MotionError, read_motion
from hybridsim.coordinator.network import with_networks
from hybridsim.coordinator.similitude import Scale
from hybridsim.coordinator.stages.base import Plan, StageConfigError
from hybridsim.coordinator.stages.program import Program
from hybridsim.coordinator.config_text import MAX_DOFS, MAX_MODULES, parse_config_text, read_config_text
from hybridsim.wire.network import Network
from hybridsim.wire.remote import Transport
from hybridsim.modules import matrices
from hybridsim.modules.base import MAX_CONFIG_FILE_BYTES
from hybridsim.modules.config_schema import ConfigError, Schema
from hybridsim.modules.network import network_of
from hybridsim.modules.registry import CLIENT_KINDS, KINDS, module_class, module_schema


class ExperimentError(UsageError):
    """An experiment file that cannot run; the message names the key and the fix, ``file`` the file it is in."""

    file: Path | None = None


@dataclass(frozen=True)
class DampingSpec:
    """Rayleigh C = a M + b K_I with (a, b) given or from two frequencies; or a full matrix."""

    rayleigh: tuple[float, float] | None = None
    rayleigh_omega: tuple[float, float] | None = None
    zeta: float = 0.0
    matrix: np.ndarray | None = None


@dataclass(frozen=True)
class ModuleSpec:
    name: str
    kind: str
    config: dict[str, Any]
    base_dir: Path
    """folder that relative paths in ``config`` are relative to"""
    address: str | None = None
    """None: in process; "local": a daemon the coordinator starts; otherwise host:port"""
    deadline_s: float = 10.0
    credentials: ClientCredentials | None = None
    """TLS and token for the site at ``address`` (keys ``tls``, ``token_file``; see docs/security.md)"""
    transport: Transport = "auto"
    """how steps reach a daemon: "auto" (its step link when on this machine, else the Steps stream), "link",
    "stream" or "unary" (see docs/wire_speed.md)"""
    config_given: bool = True
    """False: a module at an address without config; the site's own configuration is what runs (and is
    recorded); True: ``config`` must equal what the site reports"""
    network: Network | None = None
    """the emulated network path to the module (None: none added)"""
    config_file: str = ""
    """the file its config was read from, as the experiment names it ("": given in the experiment)"""
    scale: Scale = Scale()
    """the specimen's similitude factors (``scale``; 1, 1, 1: none)"""


@dataclass(frozen=True)
class Experiment:
    name: str
    dt: float
    dofs: tuple[str, ...]
    mass: np.ndarray
    damping: DampingSpec
    influence: np.ndarray
    motion: GroundMotion
    """the ground motion on the integration grid t_k = k dt (m/s^2)"""
    integrator: str
    integrator_options: dict[str, Any]
    modules: tuple[ModuleSpec, ...]
    output: Path
    pretest_amplitude: float = 1e-5
    condense_massless: bool = False
    """integrate over the DOFs with mass only; the others follow by static (Guyan) recovery with K_I"""
    checkpoint_every: int = 0
    """steps between checkpoints in the results file (0: none)"""
    evaluation: dict[str, Any] | None = None
    """a reference problem's criteria to compute after the run (``[evaluation] problem = "marths"``)"""
    base_dir: Path = field(default_factory=Path.cwd)
    source: str = ""
    """the experiment file's text, for the record"""
    table: dict[str, Any] = field(default_factory=dict)
    """the parsed experiment, from which a stopped run is rebuilt"""
    records: bool = True
    """the modules' own records go into the results file (False: the modules are asked to keep none)"""
    first: Component | None = None
    """the first excitation component's name, start and unit ([[excitation]]; None: one [ground_motion])"""
    more_components: tuple[Component, ...] = ()
    """the excitation's other components ([[excitation]] after the first), on the run's grid"""
    program: Program | None = None
    """the test program's stages ([[stages]]; None: one dynamic stage, today's run)"""
    integrity: dict[str, Rule] = field(default_factory=dict)
    """each watched module's thresholds and action ([integrity]; empty: no indicators computed)"""

    @property
    def steps(self) -> int:
        """Number of rows after row 0 (integration steps after t = 0 without stages)."""
        return self.motion.acceleration.size - 1 if self.program is None else self.program.steps

    @property
    def components(self) -> tuple[Component, ...]:
        """Every excitation component on the run's grid: the first is ``motion`` along ``influence``."""
        n = self.motion.acceleration.size
        first = dataclasses.replace(self.first or Component(self.motion.name, self.influence, self.motion.acceleration),
                                    influence=self.influence, acceleration=self.motion.acceleration)
        return (first, *(dataclasses.replace(c, acceleration=c.acceleration[:n]) for c in self.more_components))

    def ground(self) -> tuple[np.ndarray, np.ndarray]:
        """(r, a): the influence (n,) and record (steps + 1,) of one component; with several, their columns side
        by side, (n, c) and (steps + 1, c): the load is -M r a(t_k) either way."""
        if not self.more_components:
            return self.influence, self.motion.acceleration
        parts = self.components
        return np.column_stack([c.influence for c in parts]), np.column_stack([c.acceleration for c in parts])


def load_experiment(path: str | Path, network: Sequence[str] = ()) -> Experiment:
    """Read and validate an experiment file; raise ExperimentError naming the problem.  ``network``: the
    ``--network`` options, which set modules' network tables (:func:`hybridsim.coordinator.network.with_networks`)."""
    path = Path(path)
    source = _config_text(path, "the experiment file")
    try:
        table = parse_config_text(source, "TOML")
    except ValueError as exc:
        if path.suffix.lower() == ".json":  # a site's configuration, most likely
            raise ExperimentError(f"{path} is JSON: an experiment is a TOML file (a site's configuration, TOML or "
                                  "JSON, is served with `hybridsim site KIND --config FILE`)") from None
        raise ExperimentError(f"{path} is not valid TOML: {exc}") from None
    try:
        table = with_networks(table, network)
    except ConfigError as exc:
        raise ExperimentError(str(exc)) from None
    try:
        return parse_experiment(table, base_dir=path.resolve().parent, source=source)
    except ExperimentError as exc:
        exc.file = path
        raise


def parse_experiment(table: dict[str, Any], *, base_dir: Path, source: str = "") -> Experiment:
    """Validate an experiment given as a parsed TOML table: every key against :data:`EXPERIMENT`, then what
    spans keys as each value is built."""
    if "experiment" not in table and "structure" not in table:
        raise ExperimentError("no [experiment] table: this is not an experiment file (a site's configuration is "
                              "served with `hybridsim site KIND --config FILE`; `hybridsim examples` lists experiments)")
    _checked(EXPERIMENT, table)
    run, structure = table["experiment"], table["structure"]
    name, dt = default(RUN, run, "name"), float(run["dt"])
    dofs = _dofs(structure["dofs"])
    mass = _mass(structure, len(dofs), base_dir)
    damping = _damping(default(STRUCTURE, structure, "damping") or {}, len(dofs), base_dir)
    motion, influence, first, more = _ground(table, dofs, dt, run.get("duration"), base_dir)
    spec = table.get("integrator", {})
    integrator = spec.get("kind", INTEGRATOR.variants.default)
    options = {k: v for k, v in spec.items() if k != "kind"}
    modules = _modules(table["modules"], base_dir)
    program = _program(table, dofs, dt, (influence, motion, more))
    output = table.get("output", {})
    checkpoint_every = default(OUTPUT, output, "checkpoint_every")
    _checkpointable(modules, checkpoint_every)
    _steppable(modules, dt)
    return Experiment(name, dt, dofs, mass, damping, influence, motion, integrator, options, modules,
                      Path(output.get("file", f"results/{name}.h5")),
                      default(PRETEST, table.get("pretest", {}), "amplitude"),
                      default(STRUCTURE, structure, "condense_massless"), checkpoint_every,
                      _evaluation(table.get("evaluation"), {m.name for m in modules}), base_dir, source, table,
                      records=default(OUTPUT, output, "records"), first=first, more_components=more, program=program,
                      integrity=site_rules(table.get("integrity", {}), [(m.name, m.kind) for m in modules]))


def _checked(schema: Schema, table: Any, path: str = "", where: str = "") -> None:
    """``schema.check`` with its ConfigError as an ExperimentError (``where``: after the key, e.g. the module)."""
    try:
        schema.check(table, path)
    except ConfigError as exc:
        raise ExperimentError(exc.located(where) if where else str(exc)) from None


# -- values that span keys -----------------------------------------------------
def _dofs(dofs: list[str]) -> tuple[str, ...]:
    if len(dofs) > MAX_DOFS:
        raise ExperimentError(f"structure.dofs: {len(dofs)} DOFs, more than the {MAX_DOFS} a run accepts (its rows "
                              "in memory grow 0.75 MiB a DOF); keep a module's inner DOFs inside the module (only the "
                              "DOFs it shares with the structure need be structure DOFs)")
    twice = sorted(d for d, n in Counter(dofs).items() if n > 1)
    if twice:
        raise ExperimentError(f"structure.dofs: DOF named twice: {', '.join(twice)} (each DOF needs a unique name)")
    return tuple(dofs)


def _mass(structure: dict[str, Any], n: int, base_dir: Path) -> np.ndarray | sp.csr_matrix:
    key = next(k for k in ("mass", "mass_diagonal", "mass_file") if k in structure)
    if key == "mass_diagonal":  # its eigenvalues are its entries: no dense eigensolver (minutes at 10^4 DOFs)
        masses = _vector(structure[key], f"structure.{key}", n)
        if masses.min(initial=0.0) < 0.0:
            raise ExperimentError(f"structure.{key}: the mass matrix has a negative eigenvalue; masses must be >= 0")
        return np.diag(masses)
    value = _csv_matrix(structure[key], f"structure.{key}", base_dir) if key == "mass_file" else structure[key]
    mass = _matrix(value, f"structure.{key}", n)
    if matrices.asymmetry(mass) > 1e-12:
        raise ExperimentError(f"structure.{key}: the mass matrix must be symmetric")
    if sp.issparse(mass):  # a large structure's mass: checked by its diagonal, not its eigenvalues
        if mass.diagonal().min() < 0.0:
            raise ExperimentError(f"structure.{key}: the mass matrix has a negative diagonal entry; masses must be >= 0")
        if structure.get("condense_massless"):
            raise ExperimentError(f"structure.condense_massless: a sparse structure ({key} .mtx or .npz) integrates "
                                  "every DOF; set it false and give every DOF mass, or give the mass as CSV")
        return mass
    scale = max(float(np.max(np.abs(mass))), np.finfo(float).tiny)
    if np.min(np.linalg.eigvalsh(mass)) < -1e-12 * scale:
        raise ExperimentError(f"structure.{key}: the mass matrix has a negative eigenvalue; masses must be >= 0")
    return mass


def _damping(spec: dict[str, Any], n: int, base_dir: Path) -> DampingSpec:
    if "matrix" in spec or "matrix_file" in spec:
        value = _csv_matrix(spec["matrix_file"], "structure.damping.matrix_file", base_dir) \
            if "matrix_file" in spec else spec["matrix"]
        return DampingSpec(matrix=_matrix(value, "structure.damping.matrix", n))
    if "rayleigh" in spec:
        a, b = _vector(spec["rayleigh"], "structure.damping.rayleigh", 2)
        return DampingSpec(rayleigh=(a, b))
    if "rayleigh_omega" in spec:
        w = _vector(spec["rayleigh_omega"], "structure.damping.rayleigh_omega", 2)
        if w[0] == w[1]:
            raise ExperimentError("structure.damping.rayleigh_omega needs two distinct frequencies (rad/s)")
        return DampingSpec(rayleigh_omega=(w[0], w[1]), zeta=float(spec["zeta"]))
    return DampingSpec()


def _influence(table: dict[str, Any], dofs: tuple[str, ...], where: str) -> np.ndarray:
    """The influence vector of ``table`` (``where``: structure or excitation[i]): given, or 1 at its DOFs."""
    if "influence" in table:
        return _vector(table["influence"], f"{where}.influence", len(dofs))
    names = table["influence_dofs"]
    unknown = [d for d in names if d not in dofs]
    if unknown:
        raise ExperimentError(f"{where}.influence_dofs: unknown DOF(s) {unknown}; they must be in structure.dofs")
    return np.array([1.0 if d in names else 0.0 for d in dofs])


def _ground(table: dict[str, Any], dofs: tuple[str, ...], dt: float, duration: float | None,
            base_dir: Path) -> tuple[GroundMotion, np.ndarray, Component | None, tuple[Component, ...]]:
    """The first component's record on the grid, its influence, itself ([[excitation]]) and the other components:
    from [ground_motion] with structure.influence, or from [[excitation]]."""
    structure = table["structure"]
    given = [k for k in ("influence", "influence_dofs") if k in structure]
    if "ground_motion" not in table and "excitation" not in table:
        if "stages" not in table:
            raise ExperimentError("no excitation: give [ground_motion] or [[excitation]] (or [[stages]] without a "
                                  "dynamic stage)")
        return GroundMotion(dt, np.zeros(2), "none"), np.zeros(len(dofs)), None, ()
    if "excitation" in table:
        if given:
            raise ExperimentError(f"structure.{given[0]}: with [[excitation]] each component gives its own influence "
                                  "(or influence_dofs); drop it from [structure]")
        return _excitation(table["excitation"], dofs, dt, duration, base_dir)
    if not given:
        raise ExperimentError("structure: give exactly one of influence or influence_dofs (where the ground motion "
                              "shakes the structure)")
    try:
        motion = _record(table["ground_motion"], "ground_motion", base_dir).resampled(dt, duration)
    except MotionError as exc:
        raise ExperimentError(f"ground_motion: {exc}") from None
    return motion, _influence(structure, dofs, "structure"), None, ()


def _program(table: dict[str, Any], dofs: tuple[str, ...], dt: float,
             ground: tuple[np.ndarray, GroundMotion, tuple[Component, ...]]) -> Program | None:
    """The [[stages]] of the test program over the excitation (None: no stages)."""
    if "stages" not in table:
        return None
    if default(STRUCTURE, table["structure"], "condense_massless"):
        raise ExperimentError("structure.condense_massless: a test program's static stages solve every DOF; set it "
                              "false")
    influence, motion, more = ground
    given = "ground_motion" in table or "excitation" in table
    records = (motion.acceleration if not more else
               np.column_stack([motion.acceleration, *(c.acceleration for c in more)])) if given else None
    try:
        return Program.build(table["stages"], Plan(dofs, dt, records))
    except StageConfigError as exc:
        raise ExperimentError(str(exc)) from None


def _excitation(specs: list[dict[str, Any]], dofs: tuple[str, ...], dt: float, duration: float | None,
                base_dir: Path) -> tuple[GroundMotion, np.ndarray, Component | None, tuple[Component, ...]]:
    """[[excitation]]: every component read, scaled, resampled and placed at its start on one grid."""
    records, influences, starts, units = [], [], [], []
    for i, spec in enumerate(specs):
        where = f"excitation[{i}]"
        record = _record(spec, where, base_dir)
        name = spec.get("name", record.name)
        if name in [r.name for r in records]:
            raise ExperimentError(f"{where}.name: component name {name!r} is used twice; name each component "
                                  "(name = \"EW\")")
        try:
            records.append(dataclasses.replace(record.resampled(dt), name=name))
        except MotionError as exc:
            raise ExperimentError(f"{where}: {exc}") from None
        influences.append(_influence(spec, dofs, where))
        starts.append(float(default(EXCITATION, spec, "start_s")))
        units.append("rad/s^2" if spec.get("units") == "rad/s^2" else "m/s^2")
    try:
        grids = on_grid(records, starts, dt, duration)
    except MotionError as exc:
        raise ExperimentError(f"excitation: {exc}") from None
    parts = [Component(*fields) for fields in zip([r.name for r in records], influences, grids, starts, units)]
    return GroundMotion(dt, grids[0], records[0].name), influences[0], parts[0], tuple(parts[1:])


def _record(spec: dict[str, Any], where: str, base_dir: Path) -> GroundMotion:
    """A record as ``spec`` ([ground_motion] or an [[excitation]] entry) names it: read, in m/s^2, scaled."""
    path = _path(spec["file"], f"{where}.file", base_dir).resolve()
    if not path.is_file():
        raise ExperimentError(f"{where}.file: {path} does not exist (paths are relative to the experiment file; "
                              "hybridsim:NAME names a shipped file)")
    try:
        motion = read_motion(path, units=default(GROUND_MOTION, spec, "units"))
        if "pga" in spec:
            motion = motion.scaled_to_pga(float(spec["pga"]))
        elif "scale" in spec:
            motion = motion.scaled(float(spec["scale"]))
        return motion
    except MotionError as exc:
        raise ExperimentError(f"{where}: {exc}") from None


def _modules(specs: list[dict[str, Any]], base_dir: Path) -> tuple[ModuleSpec, ...]:
    if len(specs) > MAX_MODULES:
        raise ExperimentError(f"modules: {len(specs)} modules, more than the {MAX_MODULES} a run's results file is "
                              "measured to hold; group DOFs into fewer modules (a module may own many DOFs)")
    names = [spec["name"] for spec in specs]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ExperimentError(f"modules[{i}].name: module name {name!r} is used twice")
    return tuple(_module(spec, f"modules[{i}]", base_dir) for i, spec in enumerate(specs))


def _module(spec: dict[str, Any], where: str, base_dir: Path) -> ModuleSpec:
    """One [[modules]] entry: what its keys say together (the kind known, where it runs, its config)."""
    name, kind, address = spec["name"], spec["kind"], spec.get("address")
    if kind not in KINDS:
        raise ExperimentError(f"{where}.kind: unknown module kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}")
    at_site = address not in (None, "local")
    given = "config" in spec or "config_file" in spec
    if not (at_site or given):
        raise ExperimentError(f"{where}: give exactly one of config (a table) or config_file (a TOML file); only a "
                              "module at a site's address may leave both out")
    for key, what in (("transport", "transport"), ("network", "network to emulate")):
        if key in spec and address is None:
            raise ExperimentError(f"{where}.{key}: a module in process has no {what}; give it an address "
                                  "(\"local\" or HOST:PORT) or drop it")
    config, config_dir, origin = _module_config(spec, where, base_dir)
    deadline = default(MODULE, spec, "deadline_s")
    try:
        credentials = ClientCredentials.from_table(spec.get("tls"), spec.get("token_file"), base_dir, where, address)
    except CredentialError as exc:
        raise ExperimentError(str(exc)) from None
    try:
        network = network_of(spec["network"], f"{where}.network") if "network" in spec else None
    except ConfigError as exc:
        raise ExperimentError(str(exc)) from None
    if kind in CLIENT_KINDS:
        config, address = _client_config(spec, where, config, address, deadline)
    if origin:
        _checked(module_schema(kind), config, where=f"in module {name!r} (config {origin})")
    return ModuleSpec(name, kind, config, config_dir, address, deadline, credentials,
                      default(MODULE, spec, "transport"), given, network, spec.get("config_file", ""),
                      Scale(**{k: default(SCALE, spec.get("scale", {}), k) for k in ("length", "force", "time")}))


def _module_config(spec: dict[str, Any], where: str, base_dir: Path) -> tuple[dict[str, Any], Path, str]:
    """The module's config table, the folder its paths start from, and where it was given ("": nowhere)."""
    if "config" in spec:
        return spec["config"], base_dir, f"{where}.config"
    if "config_file" not in spec:
        return {}, base_dir, ""
    file = spec["config_file"]
    config = _config_file(file, f"{where}.config_file", base_dir)
    return config, _path(file, f"{where}.config_file", base_dir).resolve().parent, file


def _checkpointable(modules: tuple[ModuleSpec, ...], checkpoint_every: int) -> None:
    """Refuse checkpoints (output.checkpoint_every) that a module's configuration cannot take."""
    if not checkpoint_every:
        return
    for spec in modules:
        refusal = getattr(module_class(spec.kind), "checkpoint_refusal", lambda config: None)(spec.config)
        if refusal is not None:
            raise ExperimentError(f"output.checkpoint_every: module {spec.name!r} cannot take checkpoints: {refusal}")


def _steppable(modules: tuple[ModuleSpec, ...], dt: float) -> None:
    """Refuse a module whose configuration cannot run steps of ``experiment.dt`` (e.g. an experimental site's
    ``time_scale`` that makes a step no whole number of control samples)."""
    for spec in modules:
        if not spec.config_given:
            continue  # a site at an address without config: its own configuration answers when it opens
        refusal = getattr(module_class(spec.kind), "session_refusal", lambda config, dt: None)(
            spec.config, dt * spec.scale.time)  # the site's steps last its scaled time
        if refusal is not None:
            origin = f"config {spec.config_file}" if spec.config_file else "its config"
            raise ExperimentError(f"module {spec.name!r} ({origin}): {refusal}")


def _client_config(spec: dict[str, Any], where: str, config: dict[str, Any], address: str | None,
                   deadline: float) -> tuple[dict[str, Any], None]:
    """The config of a protocol client kind (it runs in process): its server's address and deadline added."""
    if address is None or address == "local":
        raise ExperimentError(f"{where}.address: a {spec['kind']} module connects to a server: give its "
                              "address = \"HOST:PORT\" (docs/interop.md)")
    for key in ("transport", "tls", "token_file"):
        if key in spec:
            raise ExperimentError(f"{where}.{key}: a {spec['kind']} module speaks its lab's protocol, which has no "
                                  f"{key.replace('_', ' ')}: drop it (tunnel the connection instead)")
    return {**config, "address": address, "deadline_s": deadline}, None


def _evaluation(spec: dict[str, Any] | None, module_names: set[str]) -> dict[str, Any] | None:
    if spec is None:
        return None
    from hybridsim.coordinator.problems import evaluating

    if spec["problem"] not in evaluating():
        raise ExperimentError(f"evaluation.problem: unknown problem {spec['problem']!r}; known: "
                              f"{', '.join(evaluating())}")
    if spec["site"] not in module_names:
        raise ExperimentError(f"evaluation.site: no module is named {spec['site']!r}; name the experimental site's "
                              "module")
    return dict(spec)


# -- small validators --------------------------------------------------------
def _vector(value: list[float], key: str, n: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape != (n,):
        raise ExperimentError(f"{key} must have {n} values (one per DOF), got {arr.size}")
    return arr


def _matrix(value: Any, key: str, n: int) -> np.ndarray | sp.csr_matrix:
    try:
        return matrices.square(value, n, key)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, matrices.MatrixError):
            raise ExperimentError(str(exc).replace("(one row per DOF)", f"for {n} DOFs")) from None
        raise ExperimentError(f"{key} must be an {n}x{n} matrix (a list of {n} rows of {n} numbers)") from None


def _read_capped(path: Path, key: str, text: bool = True) -> str:
    """The text of a file the experiment names, no larger than MAX_CONFIG_FILE_BYTES (``text`` False: only
    checked, "" returned)."""
    try:
        if path.stat().st_size > MAX_CONFIG_FILE_BYTES:
            raise ExperimentError(f"{key}: {path} is larger than {MAX_CONFIG_FILE_BYTES // 2**20} MiB")
        return path.read_text(errors="replace") if text else ""
    except OSError as exc:
        raise ExperimentError(f"{key}: cannot read {path}: {exc.strerror}") from None


def _config_text(path: Path, key: str) -> str:
    """The text of a configuration file the experiment names (or the experiment file), no larger than the cap."""
    try:
        return read_config_text(path)
    except ValueError as exc:
        raise ExperimentError(f"{key}: {exc}") from None
    except OSError as exc:
        raise ExperimentError(f"{key}: cannot read {path}: {exc.strerror}") from None


def _csv_matrix(file: Any, key: str, base_dir: Path) -> np.ndarray | sp.csr_matrix:
    """A matrix file: CSV rows, or sparse from Matrix Market .mtx or scipy.sparse .npz (no larger than the cap)."""
    if not isinstance(file, str):
        raise ExperimentError(f"{key} must be a file name")
    path = _path(file, key, base_dir)
    if matrices.is_sparse_file(path):
        _read_capped(path, key, text=False)
        try:
            return matrices.read(path)
        except matrices.MatrixError as exc:
            raise ExperimentError(f"{key}: {exc}") from None
    try:
        return np.loadtxt(io.StringIO(_read_capped(path, key)), delimiter=",", ndmin=2)
    except ValueError:  # its message quotes the file's contents: name the file only
        raise ExperimentError(f"{key}: {path} is not a CSV matrix (rows of comma-separated numbers)") from None


def _path(file: str, key: str, base_dir: Path) -> Path:
    """A file named in the experiment: relative to its folder, or a shipped one (``hybridsim:NAME``)."""
    try:
        return resolve(file, base_dir)
    except FileNotFoundError as exc:
        raise ExperimentError(f"{key}: {exc}") from None


def _config_file(file: Any, key: str, base_dir: Path) -> dict[str, Any]:
    """A module's configuration table from a TOML or (by its suffix) JSON file."""
    if not isinstance(file, str):
        raise ExperimentError(f"{key} must be a file name")
    path = _path(file, key, base_dir)
    kind = "JSON" if path.suffix == ".json" else "TOML"
    text = _config_text(path, key)
    try:
        table = parse_config_text(text, kind)
    except ValueError as exc:  # the parsers name a line and column, never the text
        raise ExperimentError(f"{key}: cannot read {path} as {kind} ({exc})") from None
    if not isinstance(table, dict):
        raise ExperimentError(f"{key}: {path} must hold a table")
    return table
