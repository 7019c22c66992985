"""The `linear` module: a substructure given by its stiffness matrix over its own DOFs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.modules.base import StepLedger, resolve_config_path
from hybridsim.modules.config_schema import Key, Names, Numbers, Schema, Text
from hybridsim.wire.contract import Command, Description, Dof, ModuleError

CONFIG = Schema("linear", "Restoring force K d over the module's DOFs; optional mass and damping for the coordinator.", {
    "dofs": Key(Names(), "DOF names, in the coordinator's namespace", required=True),
    "kinds": Key(Names(("translation", "rotation")), "kind of each DOF", default="translation"),
    "stiffness": Key(Numbers("N/m, N/rad, N*m/rad", (2,)), "stiffness matrix K (one row per DOF)"),
    "stiffness_file": Key(Text(), "K as a CSV file, relative to the configuration's folder"),
    "mass": Key(Numbers("kg, kg*m^2", (2,)), "mass matrix the coordinator assembles"),
    "mass_file": Key(Text(), "the mass matrix as a CSV file"),
    "damping": Key(Numbers("N*s/m", (2,)), "damping matrix the coordinator assembles"),
    "damping_file": Key(Text(), "the damping matrix as a CSV file"),
}, exactly_one=(("stiffness", "stiffness_file"),), at_most_one=(("mass", "mass_file"), ("damping", "damping_file")))


def _square(name: str, matrix: Any, n: int) -> np.ndarray:
    arr = np.asarray(matrix, dtype=float)
    if arr.shape != (n, n):
        raise ModuleError(f"linear module: {name} must be {n}x{n} (one row per DOF), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ModuleError(f"linear module: {name} has non-finite entries")
    return arr


def _matrix_entry(config: Mapping[str, Any], key: str, base_dir: Path) -> Any:
    """``key`` given inline or as ``key_file`` (CSV, relative to ``base_dir``); None when absent."""
    if f"{key}_file" not in config:
        return config.get(key)
    path = resolve_config_path(base_dir, config[f"{key}_file"], f"linear module: {key}_file")
    try:
        return np.loadtxt(path, delimiter=",", ndmin=2)
    except (OSError, ValueError) as exc:
        raise ModuleError(f"linear module: cannot read {key}_file {path} ({exc})") from None


class LinearModule(StepLedger):
    """Restoring force r = K d over the module's DOFs (N, N*m; d in m, rad).

    Optional ``mass`` (kg, kg*m^2) and ``damping`` (N*s/m) are reported in
    :meth:`describe` for the coordinator to assemble; they are not part of
    the restoring force, so the module stays a pure stiffness substructure.
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
        self.mass = None if mass is None else _square("mass", mass, n)
        self.damping = None if damping is None else _square("damping", damping, n)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], base_dir: Path | None = None) -> "LinearModule":
        """Build from a config table: ``dofs``, ``stiffness`` (or ``stiffness_file``, CSV), and optional
        ``mass``/``mass_file``, ``damping``/``damping_file`` and ``kinds`` (translation or rotation per DOF)."""
        names = config.get("dofs")
        if not isinstance(names, list) or not names:
            raise ModuleError("linear module: 'dofs' must be a non-empty list of DOF names")
        kinds = list(config.get("kinds", ["translation"] * len(names)))
        if len(kinds) != len(names):
            raise ModuleError("linear module: 'kinds' must have one entry per DOF")
        matrices = {key: _matrix_entry(config, key, base_dir or Path.cwd()) for key in ("stiffness", "mass", "damping")}
        if matrices["stiffness"] is None:
            raise ModuleError("linear module: give 'stiffness' (a matrix) or 'stiffness_file' (a CSV file)")
        return cls([Dof(n, k) for n, k in zip(names, kinds)], **matrices)

    def describe(self) -> Description:
        return Description(kind=self.kind, dofs=self.dofs, mass=self.mass, damping=self.damping)

    def _trial(self, step: int, command: Command) -> tuple[np.ndarray, np.ndarray]:
        return command.displacement, self.stiffness @ command.displacement

    def _accept(self, step: int) -> None:
        """A linear module has no state to commit."""

    def _discard(self) -> None:
        """A linear module has no trial state to discard."""
