"""Generalized-alpha-OS: the generalized-alpha method (Chung & Hulbert 1993) with operator splitting.

Schellenberg, Mahin & Fenves (2009, PEER 2009/104, section 3) combine the generalized-alpha weights with
the Combescure-Pegon split of alpha-OS; OpenSees names it ``AlphaOSGeneralized``.  With the spectral
radius at infinity rho_inf in [0, 1] (Chung & Hulbert 1993, eq. 25 in the weights on the new values):

    alpha_f = 1 / (1 + rho_inf),   alpha_i = (2 - rho_inf) / (1 + rho_inf)      (OpenSees' alphaF, alphaI)
    beta = 1 / (1 + rho_inf)^2,    gamma = (3 - rho_inf) / (2 (1 + rho_inf))

    alpha_i M a_{n+1} + (1 - alpha_i) M a_n + alpha_f (C v_{n+1} + r_{n+1}) + (1 - alpha_f) (C v_n + r_n)
        = alpha_f f_{n+1} + (1 - alpha_f) f_n

with the restoring force measured at the Newmark predictor d~ and corrected with the pre-test stiffness
K_I, r_{n+1} = r~_{n+1} + K_I (d_{n+1} - d~_{n+1}) (``newmark_family``; there alpha = alpha_f - 1 and
alpha_m = alpha_i - 1).  The matrices: M, the declared C and K_I in the effective mass, factored once.
rho_inf = 1 is the trapezoidal rule's alpha-OS (no numerical damping); rho_inf = 0 annihilates the
highest modes in one step.  Unconditionally stable while the tangent stays below K_I (softening).
"""

from __future__ import annotations

import numpy as np

from hybridsim.coordinator.integrators.newmark_family import NewmarkFamilyIntegrator
from hybridsim.modules.config_schema import Key, Number, Schema


class GeneralizedAlphaOSIntegrator(NewmarkFamilyIntegrator):
    name = "generalized-alpha-os"
    sparse = True
    CONFIG = Schema("integrator 'generalized-alpha-os'", "Generalized-alpha with operator splitting "
                    "(Schellenberg et al. 2009; OpenSees' AlphaOSGeneralized).", {
                        "rho_inf": Key(Number(minimum=0.0, maximum=1.0),
                                       "spectral radius at infinite omega dt, in [0, 1]: 1 no numerical damping",
                                       default=1.0)})

    def __init__(self, mass: np.ndarray, damping: np.ndarray, initial_stiffness: np.ndarray, dt: float,
                 *, rho_inf: float = 1.0) -> None:
        self.check_options(rho_inf=rho_inf)
        self.rho_inf = float(rho_inf)
        alpha_f, alpha_i = 1.0 / (1.0 + rho_inf), (2.0 - rho_inf) / (1.0 + rho_inf)
        super().__init__(mass, damping, initial_stiffness, dt, alpha=alpha_f - 1.0, alpha_m=alpha_i - 1.0,
                         beta=1.0 / (1.0 + rho_inf) ** 2, gamma=(3.0 - rho_inf) / (2.0 * (1.0 + rho_inf)))
