"""A user's model built into this process's OpenSees domain, with the analysis that imposes its control DOFs.

Used by the module in its own process (the description, mass and
path-independent models) and by the snapshot worker (:mod:`.forked`), which
runs path-dependent models in a process of their own.
"""

from __future__ import annotations

import numpy as np

from hybridsim.modules.opensees import domain
from hybridsim.modules.opensees.config import ControlDof, OpenSeesSpec
from hybridsim.modules.opensees.imposed import ImposedDisplacementAnalysis, check_controls
from hybridsim.modules.opensees.lazy import ops
from hybridsim.wire.contract import ModuleError


class BuiltModel:
    """The model of ``spec`` in the (already claimed) domain; ``impose`` moves it, ``reached`` reads it."""

    def __init__(self, spec: OpenSeesSpec, build: domain.ModelBuilder, label: str) -> None:
        domain.build_model(build, spec.parameters, spec.model)
        check_controls(spec.controls, label)
        check_controls([ControlDof(f.name, f.node, f.dof) for f in spec.forces], label)
        self.spec = spec
        self.label = label
        self.analysis = ImposedDisplacementAnalysis(spec.controls, spec.analysis, spec.forces)
        if not self.analysis.apply_forces():
            raise ModuleError(f"{label}: the force-controlled DOFs' targets did not converge "
                              f"({self.analysis.last_failure}); raise force_control[].increments")
        self.initial = self.analysis.displacement()
        """control displacements of the model as built (m, rad): a gravity analysis may have moved them"""
        self.info = {"model": str(spec.model), "nodes": str(len(ops.getNodeTags())),
                     "elements": str(len(ops.getEleTags())), "opensees": str(ops.version()),
                     "path_independent": str(spec.path_independent).lower()}

    def impose(self, target: np.ndarray, increments: int, forces: np.ndarray | None = None) -> bool:
        """Move the control DOFs to ``target`` in ``increments`` solves (the force-controlled DOFs' targets to
        ``forces``; None: held); False if one fails (:attr:`last_failure`)."""
        return self.analysis.impose(target, increments, forces)

    @property
    def last_failure(self) -> str:
        return self.analysis.last_failure

    def reached(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(displacement m/rad, restoring force N/N*m) at the control DOFs now, and the displacements the
        force-controlled DOFs reached (m/rad)."""
        return self.analysis.displacement(), self.analysis.force(), self.analysis.force_dofs()

    def coordinator_mass(self) -> np.ndarray | None:
        """Diagonal mass the coordinator carries: per-control 'mass', or the model's nodal mass at the ties."""
        if self.spec.mass_from_model:
            carried = {place for group in self.analysis.groups for place in group}
            lost = [(n, d + 1) for n in ops.getNodeTags() for d, m in enumerate(ops.nodeMass(n))
                    if m != 0.0 and (n, d + 1) not in carried]
            if lost:
                raise ModuleError(f"{self.label}: mass_from_model: the model has mass at (node, dof) {lost[:6]} "
                                  "which no control DOF carries; make them control DOFs or remove that mass")
            return np.diag([sum(ops.nodeMass(n, d) for n, d in group) for group in self.analysis.groups])
        if any(c.mass is not None for c in self.spec.controls):
            return np.diag([c.mass or 0.0 for c in self.spec.controls])
        return None
