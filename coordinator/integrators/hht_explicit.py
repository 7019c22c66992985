"""HHT explicit, as OpenSees' ``HHTExplicit`` defines it: beta = 0 with the HHT weight on C v and r.

    d_{n+1} = d_n + dt v_n + dt^2/2 a_n                      (commanded before the modules answer)
    M a_{n+1} + (1 + alpha) (C v_{n+1} + r_{n+1}) - alpha (C v_n + r_n) = (1 + alpha) f_{n+1} - alpha f_n
    v_{n+1} = v_n + dt ((1 - gamma) a_n + gamma a_{n+1})

Hilber, Hughes & Taylor (1977) weights on an explicit Newmark predictor (``newmark_family`` with
beta = 0; OpenSees' alpha is 1 + alpha here, in [2/3, 1]).  r_{n+1} is the force the modules measure
at d_{n+1}; no stiffness enters the step, every DOF needs mass.  Conditionally stable, and only for
gamma above 1/2 - alpha (at gamma = 1/2 - alpha, OpenSees' suggestion, the spectral radius exceeds 1 by
O((omega dt)^4)): the highest mode of the pre-test stiffness (undamped) is checked at construction and
refused when its spectral radius exceeds 1 + GROWTH.
"""

from __future__ import annotations

import numpy as np

from hybridsim.coordinator.integrators.amplification import critical_omega_dt, newmark_family_matrix
from hybridsim.coordinator.integrators.base import check_stable, require_mass
from hybridsim.coordinator.integrators.newmark_family import NewmarkFamilyIntegrator
from hybridsim.modules.config_schema import Key, Number, Schema


GROWTH = 1e-6
"""a growth per step the check lets pass: under 1 % over 10^4 steps of the highest mode"""


class HHTExplicitIntegrator(NewmarkFamilyIntegrator):
    name = "hht-explicit"
    CONFIG = Schema("integrator 'hht-explicit'", "Explicit Newmark with HHT weights (OpenSees' HHTExplicit).", {
        "alpha": Key(Number(minimum=-1.0 / 3.0 - 1e-15, maximum=0.0),
                     "the HHT weight in [-1/3, 0] (OpenSees' alpha is 1 + alpha)", default=0.0),
        "gamma": Key(Number(minimum=0.5, maximum=1.0), "Newmark's gamma in [1/2, 1]; stable above 1/2 - alpha",
                     default=0.5)})

    def __init__(self, mass: np.ndarray, damping: np.ndarray, initial_stiffness: np.ndarray, dt: float,
                 *, alpha: float = 0.0, gamma: float = 0.5) -> None:
        self.check_options(alpha=alpha, gamma=gamma)
        require_mass(mass, "hht-explicit")
        super().__init__(mass, damping, initial_stiffness, dt, alpha=alpha, beta=0.0, gamma=gamma)
        limit = critical_omega_dt(lambda omega_dt: newmark_family_matrix(omega_dt, alpha=alpha, beta=0.0,
                                                                         gamma=gamma), tolerance=GROWTH)
        hint = f", or gamma above 1/2 - alpha = {0.5 - alpha:g}" if alpha < 0 and gamma <= 0.5 - alpha else ""
        check_stable(f"hht-explicit (alpha = {alpha:g}, gamma = {gamma:g})", dt, self.initial_stiffness, self.mass,
                     limit, f"{limit:.4g}", hint=f" or kr-alpha{hint}")
