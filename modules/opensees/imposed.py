"""The static step that imposes displacements at control DOFs and reads the restoring forces.

The displacements are imposed by non-homogeneous single-point (sp) constraints
enforced by the Transformation handler; the pseudo time does not advance
(LoadControl with dlambda = 0), so loads that the user's model defines
(gravity) stay as they are.  Each control DOF has its own Plain pattern whose
sp has the reference value 1 and whose Constant series' factor is the target:
OpenSees imposes factor x 1 (``SP_Constraint::applyConstraint``).  An increment
sets the factors through ``updateParameter`` (a parameter on the pattern's
series: ``LoadPattern::setParameter`` passes ``randomProcessDiscretizer`` on to
``ConstantSeries::setParameter('factor')``) and runs one Newton solve; a failed
solve makes OpenSees revert to its last commit.  The domain never changes after
the set-up, so the analysis is set up once: replacing a pattern every increment
(the earlier way) made OpenSees number and allocate the system again each time,
which cost time and leaked native memory (20-140 B per increment).

The restoring force at a control DOF is the OpenSees reaction there, summed
over the DOFs that ``equalDOF`` ties to it (a rigid floor is driven at its
retained node and its shear is the sum over the floor's nodes).  A control
node that retains a rigid link (a constraint that is not the identity) is
refused: its reactions would need the link's transformation.

A DOF in force control (``force_control``) has a Plain pattern of its own whose nodal load has the reference
value 1 at that DOF and a Constant series' factor the target, set the same way; its node stays free there (no
sp), so its displacement is what the model reaches under the held force (OpenFresco's ExpForceControl at a
simulated specimen: the target is a load, the measured quantity the displacement).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hybridsim.wire.contract import ModuleError
from hybridsim.modules.opensees.config import AnalysisSettings, ControlDof, ForceDof
from hybridsim.modules.opensees.lazy import ops

RESERVED_TAG = 1_900_000_000
"""first time-series, pattern and parameter tag the module uses (one per control DOF from here up);
a user's model must not use them"""


def tied_dofs(control: ControlDof) -> list[tuple[int, int]]:
    """The (node, dof) pairs whose reactions add up to the force at ``control``: itself and its equalDOF ties."""
    group = [(control.node, control.dof)]
    for constrained in ops.getConstrainedNodes(control.node) or []:
        pairs = zip(ops.getConstrainedDOFs(constrained, control.node), ops.getRetainedDOFs(control.node, constrained))
        group += [(constrained, c) for c, r in pairs if r == control.dof]
    return group


def dof_kind(control: ControlDof) -> str:
    """'rotation' for the rotational DOFs of 2-D (ndf 3) and 3-D (ndf 6) frame nodes, else 'translation'."""
    if control.kind is not None:
        return control.kind
    ndm = ops.getNDM(control.node)[0]
    ndf = ops.getNDF(control.node)[0]
    rotational = (ndm == 2 and ndf == 3 and control.dof == 3) or (ndm == 3 and ndf == 6 and control.dof >= 4)
    return "rotation" if rotational else "translation"


def check_controls(controls: Sequence[ControlDof], origin: str) -> None:
    """Refuse control DOFs the model cannot drive: missing node or DOF, fixed, or an equalDOF slave."""
    nodes = set(ops.getNodeTags())
    fixed = set(ops.getFixedNodes())
    for c in controls:
        if c.node not in nodes:
            raise ModuleError(f"{origin}: control DOF {c.name!r} names node {c.node}, which the model does not have")
        ndf = ops.getNDF(c.node)[0]
        if not 1 <= c.dof <= ndf:
            raise ModuleError(f"{origin}: control DOF {c.name!r}: node {c.node} has DOFs 1..{ndf}, not {c.dof}")
        if c.node in fixed and c.dof in ops.getFixedDOFs(c.node):
            raise ModuleError(f"{origin}: control DOF {c.name!r}: node {c.node} DOF {c.dof} is fixed in the model")
        for constrained in ops.getConstrainedNodes(c.node) or []:
            ties_rotation = any(dof_kind(ControlDof("", c.node, d)) == "rotation"
                                for d in ops.getRetainedDOFs(c.node, constrained))
            if ties_rotation and ops.nodeCoord(constrained) != ops.nodeCoord(c.node):
                raise ModuleError(f"{origin}: control DOF {c.name!r}: node {c.node} is tied to node {constrained} by "
                                  "a rigid link (rotation and translation at a distance); reactions are summed only "
                                  "over equalDOF ties, so model rigid offsets with geomTransf -jntOffset instead")
        retained = ops.getRetainedNodes(c.node) or []
        for r in retained:
            if c.dof in ops.getConstrainedDOFs(c.node, r):
                raise ModuleError(f"{origin}: control DOF {c.name!r}: node {c.node} DOF {c.dof} is constrained to "
                                  f"node {r}; name the retained node {r} as the control node")


class ImposedDisplacementAnalysis:
    """Drive the control DOFs of the built model to target displacements by static sp-constrained steps."""

    def __init__(self, controls: Sequence[ControlDof], settings: AnalysisSettings,
                 forces: Sequence[ForceDof] = ()) -> None:
        self.controls = tuple(controls)
        self.forces = tuple(forces)
        self.settings = settings
        self.groups = [tied_dofs(c) for c in self.controls]
        self.last_failure = ""
        self._tags = [RESERVED_TAG + i for i in range(len(self.controls))]
        self._force_tags = [RESERVED_TAG + len(self.controls) + i for i in range(len(self.forces))]
        self.force_targets = np.zeros(len(self.forces))
        """the force-controlled DOFs' targets the model holds now (N, N*m)"""
        for tag, c in zip(self._tags, self.controls):
            ops.timeSeries("Constant", tag, "-factor", 0.0)
            ops.pattern("Plain", tag, tag)
            ops.sp(c.node, c.dof, 1.0)
            ops.parameter(tag, "loadPattern", tag, "randomProcessDiscretizer", "factor")
        for tag, f in zip(self._force_tags, self.forces):
            ops.timeSeries("Constant", tag, "-factor", 0.0)
            ops.pattern("Plain", tag, tag)
            ops.load(f.node, *[1.0 if d == f.dof else 0.0 for d in range(1, ops.getNDF(f.node)[0] + 1)])
            ops.parameter(tag, "loadPattern", tag, "randomProcessDiscretizer", "factor")
        ops.constraints("Transformation")
        ops.numberer("RCM")
        ops.system("UmfPack")
        ops.test("NormDispIncr", settings.tolerance, settings.max_iterations)
        ops.algorithm(settings.algorithm)
        ops.integrator("LoadControl", 0.0)
        ops.analysis("Static")

    def displacement(self) -> np.ndarray:
        """Current displacements at the control DOFs (m, rad)."""
        return np.array([ops.nodeDisp(c.node, c.dof) for c in self.controls])

    def force_dofs(self) -> np.ndarray:
        """Displacements the force-controlled DOFs reached (m, rad)."""
        return np.array([ops.nodeDisp(f.node, f.dof) for f in self.forces])

    def apply_forces(self) -> bool:
        """Ramp the force-controlled DOFs to their targets in the largest of their ``increments`` solves, the
        control DOFs held where they are; False if a solve fails (:attr:`last_failure`)."""
        if not self.forces:
            return True
        steps = max(f.increments for f in self.forces)
        held = self.displacement()
        self._set_values(held)
        for k in range(1, steps + 1):
            self._set_forces(np.array([f.force for f in self.forces]) * (k / steps))
            if ops.analyze(1) < 0:
                self.last_failure = (f"force-control increment {k} of {steps}: {self.settings.algorithm} did not "
                                     f"reach NormDispIncr <= {self.settings.tolerance:g} in {ops.testIter()} "
                                     "iterations")
                return False
        return True

    def force(self) -> np.ndarray:
        """Restoring forces at the control DOFs (N, N*m): reactions summed over each tie group."""
        ops.reactions()
        return np.array([sum(ops.nodeReaction(n, d) for n, d in group) for group in self.groups])

    def impose(self, target: np.ndarray, increments: int, forces: np.ndarray | None = None) -> bool:
        """Move from the current state to ``target`` in ``increments`` equal solves (the force-controlled DOFs'
        targets from theirs to ``forces`` alongside, None: held); False if one fails.

        On failure OpenSees has reverted to the last converged increment and
        :attr:`last_failure` says where the Newton iterations stopped.
        """
        start, held = self.displacement(), self.force_targets.copy()
        for k in range(1, increments + 1):
            self._set_values(start + (target - start) * (k / increments))
            if forces is not None:
                self._set_forces(held + (forces - held) * (k / increments))
            if ops.analyze(1) < 0:
                norms = ops.testNorm()
                self.last_failure = (f"increment {k} of {increments}: {self.settings.algorithm} did not reach "
                                     f"NormDispIncr <= {self.settings.tolerance:g} in {ops.testIter()} iterations "
                                     f"(last norm {norms[-1] if norms else float('nan'):.3g})")
                return False
        return True

    def _set_forces(self, values: np.ndarray) -> None:
        for tag, value in zip(self._force_tags, values):
            ops.updateParameter(tag, float(value))
        self.force_targets = np.array(values, float)

    def _set_values(self, values: np.ndarray) -> None:
        for tag, value in zip(self._tags, values):
            ops.updateParameter(tag, float(value))
