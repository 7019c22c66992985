"""The `linear` module: a substructure given by its stiffness K (dense, or sparse from .mtx/.npz), or (dynamic) M, C, K."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.modules.base import StepLedger, resolve_config_path
from hybridsim.modules.config_schema import Integer, Key, Names, Numbers, Schema, Table, Text
from hybridsim.modules.dynamic import RECORD_KEYS, SCHEME_KEYS, DynamicModule, DynamicSubstructure, scheme_and_ground
from hybridsim.modules.matrices import FORMATS, MatrixError, is_sparse, read, square
from hybridsim.wire.contract import Command, Description, Dof, ModuleError

DYNAMIC = Schema("linear module's dynamic table", "The module carries the mass and damping of its DOFs and of "
                 "`internal` DOFs of its own and integrates them between the coordinator's steps "
                 "(docs/dynamic_modules.md); the matrices are over the interface DOFs (`dofs`) then the internal ones.", {
    "internal": Key(Integer(minimum=0), "count of internal DOFs, after the interface DOFs in every matrix", default=0),
    "influence": Key(Numbers(), "ground-motion influence per DOF (interface then internal; dimensionless)",
                     required=True),
    **SCHEME_KEYS,
}, exactly_one=RECORD_KEYS)

CONFIG = Schema("linear", "Restoring force K d over the module's DOFs; optional mass and damping for the coordinator "
                "(or, with `dynamic`, its own).", {
    "dofs": Key(Names(), "DOF names, in the coordinator's namespace", required=True),
    "kinds": Key(Names(("translation", "rotation")), "kind of each DOF", default="translation"),
    "stiffness": Key(Numbers("N/m, N/rad, N*m/rad", (2,)), "stiffness matrix K (one row per DOF)"),
    "stiffness_file": Key(Text(), f"K as {FORMATS} (the last two keep it sparse), relative to the "
                          "configuration's folder"),
    "mass": Key(Numbers("kg, kg*m^2", (2,)), "mass matrix the coordinator assembles"),
    "mass_file": Key(Text(), f"the mass matrix as {FORMATS}"),
    "damping": Key(Numbers("N*s/m", (2,)), "damping matrix the coordinator assembles"),
    "damping_file": Key(Text(), f"the damping matrix as {FORMATS}"),
    "dynamic": Key(Table(DYNAMIC), "the module integrates its own mass (a dynamic substructure)"),
}, exactly_one=(("stiffness", "stiffness_file"),), at_most_one=(("mass", "mass_file"), ("damping", "damping_file")))


def _square(name: str, matrix: Any, n: int) -> Any:
    try:
        return square(matrix, n, f"linear module: {name}")
    except MatrixError as exc:
        raise ModuleError(str(exc)) from None


def _matrix_entry(config: Mapping[str, Any], key: str, base_dir: Path) -> Any:
    """``key`` given inline or as ``key_file`` (relative to ``base_dir``; .mtx and .npz stay sparse); None when
    absent."""
    if f"{key}_file" not in config:
        return config.get(key)
    path = resolve_config_path(base_dir, config[f"{key}_file"], f"linear module: {key}_file")
    try:
        return read(path)
    except MatrixError as exc:
        raise ModuleError(f"linear module: {key}_file: {exc}") from None


def _dynamic(config: Mapping[str, Any], matrices: Mapping[str, Any], base_dir: Path) -> DynamicSubstructure:
    """The dynamic substructure of a ``dynamic`` table over the given matrices (docs/dynamic_modules.md)."""
    if any(is_sparse(m) for m in matrices.values()):
        raise ModuleError("linear module: a dynamic module takes dense matrices (CSV or inline), not .mtx or .npz")
    if matrices["mass"] is None:
        raise ModuleError("linear module: a dynamic module needs 'mass' (or 'mass_file') over all its DOFs")
    internal = int(config["dynamic"].get("internal", 0))
    n, rows = len(config["dofs"]) + internal, np.shape(matrices["stiffness"])[0]
    if rows != n:
        raise ModuleError(f"linear module: with {len(config['dofs'])} DOFs and dynamic.internal = {internal} the "
                          f"matrices are {n}x{n} (the interface DOFs, then the internal ones), stiffness has {rows} "
                          f"rows: set dynamic.internal = {rows - len(config['dofs'])}")
    k, m = _square("stiffness", matrices["stiffness"], n), _square("mass", matrices["mass"], n)
    c = np.zeros((n, n)) if matrices["damping"] is None else _square("damping", matrices["damping"], n)
    scheme, ground = scheme_and_ground(config["dynamic"], base_dir)
    return DynamicSubstructure(m, c, k, len(config["dofs"]), np.asarray(config["dynamic"]["influence"], float),
                               ground, scheme)


class LinearModule(StepLedger):
    """Restoring force r = K d over the module's DOFs (N, N*m; d in m, rad).

    Optional ``mass`` (kg, kg*m^2) and ``damping`` (N*s/m) are reported in
    :meth:`describe` for the coordinator to assemble; they are not part of
    the restoring force, so the module stays a pure stiffness substructure.
    With a ``dynamic`` table, :meth:`from_config` builds a :class:`DynamicModule` instead: the matrices are
    its own, over internal DOFs too (docs/dynamic_modules.md).
    """

    kind = "linear"
    CONFIG = CONFIG

    def __init__(self, dofs: Sequence[Dof], stiffness: Any, mass: Any = None, damping: Any = None) -> None:
        super().__init__()
        self.dofs = tuple(dofs)
        n = len(self.dofs)
        if n == 0:
            raise ModuleError("linear module: needs at least one DOF")
        self.stiffness = _square("stiffness", stiffness, n)
        if is_sparse(mass) or is_sparse(damping):
            raise ModuleError("linear module: a sparse mass or damping belongs to the structure: give it as "
                              "structure.mass_file or structure.damping.matrix_file (.mtx or .npz)")
        self.mass = None if mass is None else _square("mass", mass, n)
        self.damping = None if damping is None else _square("damping", damping, n)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], base_dir: Path | None = None) -> "LinearModule | DynamicModule":
        """Build from a config table: ``dofs``, ``stiffness`` (or ``stiffness_file``, CSV), and optional
        ``mass``/``mass_file``, ``damping``/``damping_file``, ``kinds`` (translation or rotation per DOF) and
        ``dynamic``."""
        names = config.get("dofs")
        if not isinstance(names, list) or not names:
            raise ModuleError("linear module: 'dofs' must be a non-empty list of DOF names")
        kinds = list(config.get("kinds", ["translation"] * len(names)))
        if len(kinds) != len(names):
            raise ModuleError("linear module: 'kinds' must have one entry per DOF")
        matrices = {key: _matrix_entry(config, key, base_dir or Path.cwd()) for key in ("stiffness", "mass", "damping")}
        if matrices["stiffness"] is None:
            raise ModuleError("linear module: give 'stiffness' (a matrix) or 'stiffness_file' (a CSV file)")
        dofs = [Dof(n, k) for n, k in zip(names, kinds)]
        if "dynamic" in config:
            return DynamicModule(cls.kind, tuple(dofs), _dynamic(config, matrices, base_dir or Path.cwd()))
        return cls(dofs, **matrices)

    def describe(self) -> Description:
        return Description(kind=self.kind, dofs=self.dofs, mass=self.mass, damping=self.damping)

    def _trial(self, step: int, command: Command) -> tuple[np.ndarray, np.ndarray]:
        return command.displacement, self.stiffness @ command.displacement

    def _accept(self, step: int) -> None:
        """A linear module has no state to commit."""

    def _discard(self) -> None:
        """A linear module has no trial state to discard."""
