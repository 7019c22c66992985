"""The monolithic reference: a whole model file run under OpenSees' own AlphaOS integrator.

This is the UI-SIMCOR verification oracle: the same structure, integrated by
the coordinator's alpha-OS over modules, must give the response that OpenSees
gives for the whole model.  OpenSees weights the scheme by alpha_OpenSees =
1 + alpha, with alpha in [-1/3, 0] the Combescure-Pegon (and the
coordinator's) parameter.  AlphaOS needs the Linear algorithm (one solve per
step), and only ``Linear -initial`` makes it the operator-splitting scheme:
plain ``Linear`` forms the effective mass and the correction with the
*current* tangent, which for a yielding model is another method (and, with
massless DOFs at a softened section, an unstable one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hybridsim.wire.contract import ModuleError
from hybridsim.modules.opensees import domain
from hybridsim.modules.opensees.lazy import ops

_SERIES, _PATTERN = 1_900_000_001, 1_900_000_001


def alpha_os_response(model: Path, parameters: Mapping[str, Any], *, dt: float, ground_acceleration: np.ndarray,
                      alpha: float, record: Sequence[tuple[int, int]], rayleigh: tuple[float, float] = (0.0, 0.0),
                      direction: int = 1, implicit: bool = False, tolerance: float = 1e-12,
                      accept_stalled: bool = False, extra: Callable[[], Sequence[float]] | None = None
                      ) -> np.ndarray:
    """Displacements (steps+1 x len(record)) at the (node, dof) pairs ``record`` (m, rad).

    ``ground_acceleration`` is sampled at t_k = k dt (m/s^2) and excites the
    model's masses in ``direction`` (UniformExcitation, load -M r a_g);
    ``rayleigh`` = (a, b) gives C = a M + b K_initial; ``alpha`` is in [-1/3, 0].
    ``implicit = True`` runs OpenSees' HHT (same alpha, 1 + alpha) with Newton
    iterations to NormDispIncr <= ``tolerance`` instead: every DOF in
    equilibrium at every step, the reference for a nonlinear model
    (``accept_stalled``: a step still above the tolerance after 50 iterations is
    taken as it is, with OpenSees' warning, as its test's print flag 5 does, for
    a material whose iterations stall at a floor).  ``extra``, called
    after every step, adds its numbers (e.g. element forces) as further columns
    (zero at t = 0).
    """
    if not -1.0 / 3.0 - 1e-15 <= alpha <= 0.0:
        raise ValueError(f"alpha must be in [-1/3, 0] (OpenSees takes 1 + alpha), got {alpha}")
    values = np.asarray(ground_acceleration, float)
    out = np.zeros((values.size, len(record)))
    more: list[list[float]] = []
    with domain.held(f"AlphaOS reference of {Path(model).name}"):
        domain.build_model(domain.load_builder(Path(model)), parameters, Path(model))
        ops.rayleigh(rayleigh[0], 0.0, rayleigh[1], 0.0)
        ops.timeSeries("Path", _SERIES, "-dt", dt, "-values", *values)
        ops.pattern("UniformExcitation", _PATTERN, direction, "-accel", _SERIES)
        ops.constraints("Transformation")
        ops.numberer("RCM")
        ops.system("UmfPack")
        if implicit:
            ops.test("NormDispIncr", tolerance, 50, 5 if accept_stalled else 0)
            ops.algorithm("Newton")
            ops.integrator("HHT", 1.0 + alpha)
        else:
            ops.algorithm("Linear", "-initial", "-factorOnce")  # the effective mass with K_initial, as alpha-OS
            ops.integrator("AlphaOS", 1.0 + alpha)
        ops.analysis("Transient")
        for n in range(1, values.size):
            if ops.analyze(1, dt) < 0:
                raise ModuleError(f"OpenSees {'HHT' if implicit else 'AlphaOS'} failed at step {n} (t = {n * dt:g} s)")
            out[n] = [ops.nodeDisp(node, dof) for node, dof in record]
            if extra is not None:
                more.append(list(extra()))
    return np.hstack([out, np.vstack([np.zeros(len(more[0])), more])]) if more else out
