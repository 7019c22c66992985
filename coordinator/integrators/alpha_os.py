"""alpha-OS: the alpha operator-splitting scheme of Combescure and Pegon (1997), UI-SIMCOR's default.

alpha in [-1/3, 0], beta = (1 - alpha)^2 / 4, gamma = (1 - 2 alpha) / 2.  The
restoring forces are measured at the explicit predictor d~ and corrected
with the initial stiffness K_I (see ``newmark_family``).  For a linear
structure with K_I = K it is the HHT-alpha method; it is unconditionally
stable when the tangent stiffness stays below K_I (softening) and loses
that guarantee for a stiffening structure.  alpha < 0 adds numerical
damping of the high modes.

OpenSees names the same scheme ``AlphaOS`` with a shifted weight:
alpha_OpenSees = 1 + alpha, in [2/3, 1].
"""

from __future__ import annotations

import numpy as np

from hybridsim.coordinator.integrators.newmark_family import NewmarkFamilyIntegrator
from hybridsim.modules.config_schema import Key, Number, Schema


class AlphaOSIntegrator(NewmarkFamilyIntegrator):
    name = "alpha-os"
    sparse = True
    CONFIG = Schema("integrator 'alpha-os'", "Combescure-Pegon operator splitting, UI-SIMCOR's default.", {
        "alpha": Key(Number(minimum=-1.0 / 3.0 - 1e-15, maximum=0.0),
                     "the splitting weight in [-1/3, 0]: 0 none, below 0 numerical damping of the high modes",
                     default=-0.05)})

    def __init__(self, mass: np.ndarray, damping: np.ndarray, initial_stiffness: np.ndarray, dt: float,
                 *, alpha: float = -0.05) -> None:
        self.check_options(alpha=alpha)
        super().__init__(mass, damping, initial_stiffness, dt,
                         alpha=alpha, beta=(1.0 - alpha) ** 2 / 4.0, gamma=(1.0 - 2.0 * alpha) / 2.0)
