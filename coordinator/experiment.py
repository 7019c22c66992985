"""Reading and validating an experiment file (TOML): structure, ground motion, integrator, modules, output.

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

import io
import json
import math
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import numpy as np

from hybridsim.shipped import resolve
from hybridsim.wire.credentials import ClientCredentials
from hybridsim.wire.security import CredentialError
from hybridsim.coordinator.errors import UsageError
from hybridsim.coordinator.integrators import CONFIG as INTEGRATOR
from hybridsim.coordinator.motion import GroundMotion, MotionError, read_motion
from hybridsim.coordinator.network import network_of, with_networks
from hybridsim.wire.network import Network
from hybridsim.wire.remote import Transport
from hybridsim.modules.base import MAX_CONFIG_FILE_BYTES
from hybridsim.modules.config_schema import ConfigError
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

    @property
    def steps(self) -> int:
        """Number of integration steps after t = 0."""
        return self.motion.acceleration.size - 1


def load_experiment(path: str | Path, network: Sequence[str] = ()) -> Experiment:
    """Read and validate an experiment file; raise ExperimentError naming the problem.  ``network``: the
    ``--network`` options, which set modules' network tables (:func:`hybridsim.coordinator.network.with_networks`)."""
    path = Path(path)
    source = _read_capped(path, "the experiment file")
    try:
        table = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
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
    """Validate an experiment given as a parsed TOML table."""
    if "experiment" not in table and "structure" not in table:
        raise ExperimentError("no [experiment] table: this is not an experiment file (a site's configuration is "
                              "served with `hybridsim site KIND --config FILE`; `hybridsim examples` lists experiments)")
    _only(table, "", {"experiment", "structure", "ground_motion", "integrator", "modules", "output", "pretest",
                      "evaluation"})
    exp = _table(table, "experiment")
    name = _get(exp, "experiment.name", str, default="experiment")
    dt = _positive(exp, "experiment.dt")
    duration = _positive(exp, "experiment.duration", default=None)

    structure = _table(table, "structure")
    _only(structure, "structure", {"dofs", "mass", "mass_diagonal", "mass_file", "damping", "influence",
                                   "influence_dofs", "condense_massless"})
    condense = _get(structure, "structure.condense_massless", bool, default=False)
    dofs = tuple(_get(structure, "structure.dofs", list))
    if not dofs or not all(isinstance(d, str) and d for d in dofs):
        raise ExperimentError("structure.dofs must be a non-empty list of DOF names, e.g. dofs = [\"x1\", \"x2\"]")
    twice = sorted({d for d in dofs if dofs.count(d) > 1})
    if twice:
        raise ExperimentError(f"structure.dofs: DOF named twice: {', '.join(twice)} (each DOF needs a unique name)")
    n = len(dofs)
    mass = _mass(structure, n, base_dir)
    damping = _damping(structure, n, base_dir)
    influence = _influence(structure, dofs)

    motion = _motion(_table(table, "ground_motion"), dt, duration, base_dir)
    integrator, options = _integrator(table.get("integrator", {"kind": "alpha-os"}))
    modules = _modules(table.get("modules"), base_dir)
    output_table = table.get("output", {})
    _only(output_table, "output", {"file", "checkpoint_every", "records"})
    records = _get(output_table, "output.records", bool, default=True)
    output = Path(_get(output_table, "output.file", str, default=f"results/{name}.h5"))
    checkpoint_every = _get(output_table, "output.checkpoint_every", int, default=0)
    if checkpoint_every < 0:
        raise ExperimentError("output.checkpoint_every must be a number of steps >= 0 (0: no checkpoints)")
    pretest = table.get("pretest", {})
    if not isinstance(pretest, dict):
        raise ExperimentError("[pretest] must be a table, e.g. [pretest] amplitude = 1e-5")
    _only(pretest, "pretest", {"amplitude"})
    amplitude = _positive(pretest, "pretest.amplitude", default=1e-5)
    _checkpointable(modules, checkpoint_every)
    _steppable(modules, dt)
    evaluation = _evaluation(table.get("evaluation"), {m.name for m in modules})
    return Experiment(name, dt, dofs, mass, damping, influence, motion, integrator, options, modules, output,
                      amplitude, condense, checkpoint_every, evaluation, base_dir, source, table, records=records)


# -- sections ----------------------------------------------------------------
def _mass(structure: dict[str, Any], n: int, base_dir: Path) -> np.ndarray:
    given = [k for k in ("mass", "mass_diagonal", "mass_file") if k in structure]
    if len(given) != 1:
        raise ExperimentError("structure: give exactly one of mass (n x n), mass_diagonal (n values) or mass_file "
                              f"(CSV), found {given or 'none'}")
    key = given[0]
    if key == "mass_diagonal":
        mass = np.diag(_vector(structure[key], f"structure.{key}", n))
    else:
        value = _csv_matrix(structure[key], f"structure.{key}", base_dir) if key == "mass_file" else structure[key]
        mass = _matrix(value, f"structure.{key}", n)
    scale = max(float(np.max(np.abs(mass))), np.finfo(float).tiny)
    if np.max(np.abs(mass - mass.T)) > 1e-12 * scale:
        raise ExperimentError(f"structure.{key}: the mass matrix must be symmetric")
    if np.min(np.linalg.eigvalsh(mass)) < -1e-12 * scale:
        raise ExperimentError(f"structure.{key}: the mass matrix has a negative eigenvalue; masses must be >= 0")
    return mass


def _damping(structure: dict[str, Any], n: int, base_dir: Path) -> DampingSpec:
    spec = structure.get("damping", {})
    if not isinstance(spec, dict):
        raise ExperimentError("structure.damping must be a table, e.g. damping = { rayleigh_omega = [w1, w2], zeta = 0.05 }")
    _only(spec, "structure.damping", {"rayleigh", "rayleigh_omega", "zeta", "matrix", "matrix_file"})
    given = [k for k in ("rayleigh", "rayleigh_omega", "matrix", "matrix_file") if k in spec]
    if len(given) > 1:
        raise ExperimentError(f"structure.damping: give one of rayleigh, rayleigh_omega, matrix or matrix_file, "
                              f"not {' and '.join(given)}")
    if "zeta" in spec and "rayleigh_omega" not in spec:
        raise ExperimentError("structure.damping.zeta goes with rayleigh_omega = [w1, w2] (rad/s)")
    if "matrix" in spec or "matrix_file" in spec:
        value = _csv_matrix(spec["matrix_file"], "structure.damping.matrix_file", base_dir) \
            if "matrix_file" in spec else spec["matrix"]
        return DampingSpec(matrix=_matrix(value, "structure.damping.matrix", n))
    if "rayleigh" in spec:
        a, b = _vector(spec["rayleigh"], "structure.damping.rayleigh", 2)
        return DampingSpec(rayleigh=(a, b))
    if "rayleigh_omega" in spec:
        w = _vector(spec["rayleigh_omega"], "structure.damping.rayleigh_omega", 2)
        zeta = _get(spec, "structure.damping.zeta", float)
        if not (w[0] > 0 and w[1] > 0 and w[0] != w[1]) or not 0 <= zeta < 1:
            raise ExperimentError("structure.damping: rayleigh_omega needs two distinct positive frequencies (rad/s) "
                                  "and zeta in [0, 1)")
        return DampingSpec(rayleigh_omega=(w[0], w[1]), zeta=zeta)
    return DampingSpec()


def _influence(structure: dict[str, Any], dofs: tuple[str, ...]) -> np.ndarray:
    if "influence" in structure:
        return _vector(structure["influence"], "structure.influence", len(dofs))
    names = _get(structure, "structure.influence_dofs", list, default=None)
    if names is None:
        raise ExperimentError("structure: give influence (one value per DOF) or influence_dofs (names of the DOFs "
                              "the ground acceleration excites)")
    unknown = [d for d in names if d not in dofs]
    if unknown:
        raise ExperimentError(f"structure.influence_dofs: unknown DOF(s) {unknown}; they must be in structure.dofs")
    return np.array([1.0 if d in names else 0.0 for d in dofs])


def _motion(spec: dict[str, Any], dt: float, duration: float | None, base_dir: Path) -> GroundMotion:
    _only(spec, "ground_motion", {"file", "units", "scale", "pga"})
    file = _get(spec, "ground_motion.file", str)
    path = _path(file, "ground_motion.file", base_dir).resolve()
    if not path.is_file():
        raise ExperimentError(f"ground_motion.file: {path} does not exist (paths are relative to the experiment file; "
                              "hybridsim:NAME names a shipped file)")
    if "scale" in spec and "pga" in spec:
        raise ExperimentError("ground_motion: give scale or pga, not both")
    try:
        motion = read_motion(path, units=_get(spec, "ground_motion.units", str, default="m/s^2"))
        if "pga" in spec:
            motion = motion.scaled_to_pga(_positive(spec, "ground_motion.pga"))
        elif "scale" in spec:
            motion = motion.scaled(_get(spec, "ground_motion.scale", float))
        return motion.resampled(dt, duration)
    except MotionError as exc:
        raise ExperimentError(f"ground_motion: {exc}") from None


def _integrator(spec: Any) -> tuple[str, dict[str, Any]]:
    """The scheme and its options, as the schemes declare them (``hybridsim.coordinator.integrators.CONFIG``)."""
    if not isinstance(spec, dict):
        raise ExperimentError("[integrator] must be a table, e.g. [integrator] kind = \"alpha-os\"")
    try:
        INTEGRATOR.check(spec, "integrator")
    except ConfigError as exc:
        raise ExperimentError(str(exc)) from None
    return spec.get("kind", "alpha-os"), {k: v for k, v in spec.items() if k != "kind"}


def _modules(specs: Any, base_dir: Path) -> tuple[ModuleSpec, ...]:
    if not isinstance(specs, list) or not specs:
        raise ExperimentError("modules: give at least one [[modules]] table with name, kind and config")
    out, names = [], set()
    for i, spec in enumerate(specs):
        where = f"modules[{i}]"
        if not isinstance(spec, dict):
            raise ExperimentError(f"{where} must be a table")
        _only(spec, where, {"name", "kind", "config", "config_file", "address", "deadline_s", "tls", "token_file",
                            "transport", "network"})
        name = _get(spec, f"{where}.name", str)
        if name in names:
            raise ExperimentError(f"{where}.name: module name {name!r} is used twice")
        names.add(name)
        kind = _get(spec, f"{where}.kind", str)
        if kind not in KINDS:
            raise ExperimentError(f"{where}.kind: unknown module kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}")
        address = _get(spec, f"{where}.address", str, default=None)
        if address not in (None, "local") and not re.fullmatch(r"[^\s/]+:\d{1,5}", address):
            raise ExperimentError(f"{where}.address: give HOST:PORT (e.g. lab.example.org:50051) or \"local\", "
                                  f"not {address!r}")
        at_site = address not in (None, "local")
        if "config" in spec and "config_file" in spec or not (at_site or "config" in spec or "config_file" in spec):
            raise ExperimentError(f"{where}: give exactly one of config (a table) or config_file (a TOML file)"
                                  + ("" if at_site else "; only a module at a site's address may leave both out"))
        if "config" not in spec and "config_file" not in spec:
            config, config_dir, origin = {}, base_dir, ""
        elif "config" in spec:
            config, config_dir, origin = spec["config"], base_dir, f"{where}.config"
        else:
            config = _config_file(spec["config_file"], f"{where}.config_file", base_dir)
            config_dir = _path(spec["config_file"], f"{where}.config_file", base_dir).resolve().parent
            origin = spec["config_file"]
        if not isinstance(config, dict):
            raise ExperimentError(f"{where}.config must be a table")
        _finite(config, f"{where}.config")
        deadline = _positive(spec, f"{where}.deadline_s", default=10.0)
        try:
            credentials = ClientCredentials.from_table(spec.get("tls"), spec.get("token_file"), base_dir, where, address)
        except CredentialError as exc:
            raise ExperimentError(str(exc)) from None
        transport = _get(spec, f"{where}.transport", str, default="auto")
        if transport not in get_args(Transport):
            raise ExperimentError(f"{where}.transport: {transport!r} is not a transport; use one of "
                                  f"{', '.join(get_args(Transport))}")
        if transport != "auto" and address is None:
            raise ExperimentError(f"{where}.transport: a module in process has no transport; "
                                  "give an address or drop it")
        network = _network(spec, where, address)
        if kind in CLIENT_KINDS:
            config, address = _client_config(spec, where, config, address, deadline)
        if origin:
            try:
                module_schema(kind).check(config)
            except ConfigError as exc:
                raise ExperimentError(exc.located(f"in module {name!r} (config {origin})")) from None
        out.append(ModuleSpec(name, kind, config, config_dir, address, deadline, credentials, transport,
                              "config" in spec or "config_file" in spec, network, spec.get("config_file", "")))
    return tuple(out)


def _network(spec: dict[str, Any], where: str, address: str | None) -> Network | None:
    """The module's emulated network path (its ``network`` table), for a module at an address only."""
    if "network" not in spec:
        return None
    if address is None:
        raise ExperimentError(f"{where}.network: a module in process has no network to emulate; give it an address "
                              "(\"local\" or HOST:PORT) or drop the table")
    try:
        return network_of(spec["network"], f"{where}.network")
    except ConfigError as exc:
        raise ExperimentError(str(exc)) from None


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
        refusal = getattr(module_class(spec.kind), "session_refusal", lambda config, dt: None)(spec.config, dt)
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


def _evaluation(spec: Any, module_names: set[str]) -> dict[str, Any] | None:
    if spec is None:
        return None
    from hybridsim.coordinator.problems import evaluating

    if not isinstance(spec, dict):
        raise ExperimentError("[evaluation] must be a table, e.g. problem = \"marths\"")
    _only(spec, "evaluation", {"problem", "site", "record", "scale"})
    problem = _get(spec, "evaluation.problem", str)
    if problem not in evaluating():
        raise ExperimentError(f"evaluation.problem: unknown problem {problem!r}; known: {', '.join(evaluating())}")
    site = _get(spec, "evaluation.site", str)
    if site not in module_names:
        raise ExperimentError(f"evaluation.site: no module is named {site!r}; name the experimental site's module")
    _get(spec, "evaluation.record", str, default=None)
    _positive(spec, "evaluation.scale", default=None)
    return dict(spec)


# -- small validators --------------------------------------------------------
_TYPE_NAMES = {str: "a string", float: "a number", int: "an integer", list: "a list", dict: "a table",
               bool: "true or false"}


def _leaf(key: str) -> str:
    return key.rsplit(".", 1)[-1]


def _get(table: dict[str, Any], key: str, kind: type, *, default: Any = ...) -> Any:
    leaf = _leaf(key)
    if leaf not in table:
        if default is ...:
            raise ExperimentError(f"missing key {key} ({_TYPE_NAMES[kind]})")
        return default
    value = table[leaf]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ExperimentError(f"{key} must be {_TYPE_NAMES[kind]}, got {type(value).__name__} {value!r}")
    if kind is float:
        _finite(value, key)
    return value


def _positive(table: dict[str, Any], key: str, *, default: Any = ...) -> float:
    value = _get(table, key, float, default=default)
    if value is not None and not value > 0:
        raise ExperimentError(f"{key} must be positive, got {value}")
    return value


def _finite(value: Any, key: str) -> None:
    """Refuse NaN or infinity anywhere inside a value (TOML allows nan and inf)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ExperimentError(f"{key} must be a finite number, got {value}")
    if isinstance(value, dict):
        for k, v in value.items():
            _finite(v, f"{key}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _finite(v, f"{key}[{i}]")


def _table(table: dict[str, Any], key: str) -> dict[str, Any]:
    value = table.get(key)
    if value is None:
        raise ExperimentError(f"missing section [{key}]")
    if not isinstance(value, dict):
        raise ExperimentError(f"[{key}] must be a table")
    return value


def _only(table: dict[str, Any], where: str, allowed: set[str]) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        prefix = f"{where}." if where else ""
        raise ExperimentError(f"unknown key {prefix}{unknown[0]}; allowed here: {', '.join(sorted(allowed))}")


def _vector(value: Any, key: str, n: int) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ExperimentError(f"{key} must be a list of {n} numbers") from None
    if arr.shape != (n,):
        raise ExperimentError(f"{key} must have {n} values (one per DOF), got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ExperimentError(f"{key} has non-finite values")
    return arr


def _matrix(value: Any, key: str, n: int) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ExperimentError(f"{key} must be an {n}x{n} matrix (a list of {n} rows of {n} numbers)") from None
    if arr.shape != (n, n):
        raise ExperimentError(f"{key} must be {n}x{n} for {n} DOFs, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ExperimentError(f"{key} has non-finite entries")
    return arr


def _read_capped(path: Path, key: str) -> str:
    """The text of a file the experiment names, no larger than MAX_CONFIG_FILE_BYTES."""
    try:
        if path.stat().st_size > MAX_CONFIG_FILE_BYTES:
            raise ExperimentError(f"{key}: {path} is larger than {MAX_CONFIG_FILE_BYTES // 2**20} MiB")
        return path.read_text(errors="replace")
    except OSError as exc:
        raise ExperimentError(f"{key}: cannot read {path}: {exc.strerror}") from None


def _csv_matrix(file: Any, key: str, base_dir: Path) -> np.ndarray:
    if not isinstance(file, str):
        raise ExperimentError(f"{key} must be a file name")
    path = _path(file, key, base_dir)
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
    text = _read_capped(path, key)
    try:
        table = json.loads(text) if kind == "JSON" else tomllib.loads(text)
    except ValueError as exc:  # the parsers name a line and column, never the text
        raise ExperimentError(f"{key}: cannot read {path} as {kind} ({exc})") from None
    if not isinstance(table, dict):
        raise ExperimentError(f"{key}: {path} must hold a table")
    return table
