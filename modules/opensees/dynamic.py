"""A dynamic OpenSees module: OpenSees assembles a linear model's M, C and K, the module integrates them.

The model file is built as for any ``opensees`` module (with its mass: density, nodal masses); OpenSees'
``GimmeMCK`` integrator assembles M, then K, over the model's free equations (a ``FullGeneral`` system, Plain
constraints, ``printA``), and C = a M + b K (``dynamic.rayleigh``).  The control DOFs become the interface
DOFs, every other free equation an internal DOF, the record reaches the translations along
``dynamic.direction`` (uniform excitation, relative coordinates), and
:class:`hybridsim.modules.dynamic.DynamicSubstructure` integrates them with the coordinator's alpha-OS
(docs/dynamic_modules.md); the domain is then released (the module keeps numbers, not a model).  With
``dynamic.integrator = "opensees"`` the module keeps the model and OpenSees' transient analysis takes the internal
DOFs' steps (:mod:`.transient`).  Linear models only (``path_independent = true``): a yielding model's state
cannot be returned to a settled step here (docs/dynamic_modules.md, "Not built").
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.modules.dynamic import DynamicModule, DynamicSubstructure, scheme_and_ground
from hybridsim.modules.opensees import domain
from hybridsim.modules.opensees.config import OpenSeesSpec
from hybridsim.modules.opensees.imposed import dof_kind
from hybridsim.modules.opensees.lazy import ops
from hybridsim.modules.opensees.transient import OpenSeesTransient, Stepper
from hybridsim.modules.opensees.transient_worker import WorkerStepper
from hybridsim.wire.contract import Dof, ModuleError

def _assembled(m: float, k: float) -> np.ndarray:
    """The system matrix m M + k K of the model in the domain (FullGeneral, ``GimmeMCK``)."""
    ops.wipeAnalysis()
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("FullGeneral")
    ops.test("NormDispIncr", 1e-12, 1)
    ops.algorithm("Linear")
    ops.integrator("GimmeMCK", m, 0.0, k)
    ops.analysis("Transient")
    ops.analyze(1, 0.0)
    matrix = np.array(ops.printA("-ret"))
    n = round(np.sqrt(matrix.size))
    return matrix.reshape(n, n)


def _equations(spec: OpenSeesSpec, direction: int, size: int) -> tuple[list[int], np.ndarray, list[tuple[int, int]]]:
    """The control DOFs' equation numbers (in control order), the influence of every equation and its (node,
    dof)."""
    controls = []
    for control in spec.controls:
        equations = ops.nodeDOFs(control.node)
        equation = equations[control.dof - 1] if control.dof <= len(equations) else -1
        if equation < 0:
            raise ModuleError(f"opensees module: control {control.name!r} (node {control.node}, dof {control.dof}) "
                              "is not a free DOF of the model; a dynamic module drives free DOFs only")
        controls.append(equation)
    influence = np.zeros(size)
    pairs = [(0, 0)] * size
    for node in ops.getNodeTags():
        equations = ops.nodeDOFs(node)
        for dof, equation in enumerate(equations, start=1):
            if equation >= 0:
                pairs[equation] = (node, dof)
        if len(equations) >= direction and equations[direction - 1] >= 0:
            influence[equations[direction - 1]] = 1.0
    return controls, influence, pairs


class _Model:
    """The holder of this process's OpenSees domain while a transient module keeps its model there."""


def dynamic_module(spec: OpenSeesSpec, table: Mapping[str, Any], base_dir: Path) -> DynamicModule:
    """The ``opensees`` module of ``spec`` as a dynamic substructure (its ``dynamic`` table; files relative to
    ``base_dir``): the module integrates the assembled matrices, or (``integrator = "opensees"``) OpenSees runs
    the transient analysis (:mod:`.transient`): in this process's domain for a linear model, in a worker process
    for a yielding one (:mod:`.transient_worker`)."""
    in_opensees = table.get("integrator", "module") == "opensees"
    scheme, ground = scheme_and_ground(dict(table), base_dir)
    if not spec.path_independent and not in_opensees:
        raise ModuleError("opensees module: a dynamic module integrates the matrices OpenSees assembles at rest: "
                          "declare path_independent = true (a linear model), or set dynamic.integrator = "
                          "\"opensees\" for a yielding one")
    if not spec.path_independent and scheme.alpha != 0.0:
        raise ModuleError(f"opensees module: a yielding dynamic module integrates with alpha = 0 (OpenSees' HHT "
                          f"commits its elements with the imposed DOFs at t_n+alpha): set dynamic.alpha = 0 and "
                          f"integrator.alpha = 0, not {scheme.alpha:g}")
    a, b = (list(table.get("rayleigh", [0.0, 0.0])) + [0.0, 0.0])[:2]
    direction = int(table.get("direction", 1))
    owner = _Model()
    domain.claim(owner, f"the dynamic OpenSees module of {spec.model.name}")
    try:
        domain.build_model(domain.load_builder(spec.model), spec.parameters, spec.model)
        try:
            mass, stiffness = _assembled(1.0, 0.0), _assembled(0.0, 1.0)
        except Exception as exc:  # noqa: BLE001 - OpenSees' own failure, named
            raise ModuleError(f"opensees module: OpenSees could not assemble the model's M and K ({exc}); a dynamic "
                              "module needs a model without multi-point constraints (Plain handler)") from None
        controls, influence, pairs = _equations(spec, direction, mass.shape[0])
        dofs = tuple(Dof(c.name, dof_kind(c)) for c in spec.controls)
    finally:
        if not (in_opensees and spec.path_independent):
            domain.release(owner)
    order = controls + [e for e in range(mass.shape[0]) if e not in set(controls)]
    mass, stiffness = mass[np.ix_(order, order)], stiffness[np.ix_(order, order)]
    matrices = (mass, a * mass + b * stiffness, stiffness, len(controls), influence[order], ground, scheme)
    if not in_opensees:
        return DynamicModule("opensees", dofs, DynamicSubstructure(*matrices), info={"model": spec.model.name})
    arguments = ([pairs[e] for e in order], len(controls), direction, (a, b), float(table["ground_acceleration_dt"]),
                 ground.samples.tolist(), scheme.alpha, not spec.path_independent,
                 (float(table.get("tolerance", 1e-12)), bool(table.get("accept_stalled", False))))
    stepper = (Stepper(*arguments) if spec.path_independent
               else WorkerStepper(spec.model, spec.parameters, arguments))
    return DynamicModule("opensees", dofs, OpenSeesTransient(matrices, stepper, owner),
                         info={"model": spec.model.name})
