"""Newmark explicit with its gamma, as OpenSees' ``NewmarkExplicit`` defines it (beta = 0).

    d_{n+1} = d_n + dt v_n + dt^2/2 a_n                      (commanded before the modules answer)
    (M + gamma dt C) a_{n+1} = f_{n+1} - r_{n+1} - C (v_n + (1 - gamma) dt a_n)
    v_{n+1} = v_n + dt ((1 - gamma) a_n + gamma a_{n+1})

Newmark (1959) with beta = 0; gamma = 1/2 is ``central-difference``, gamma > 1/2 adds numerical damping
(first-order accurate).  No stiffness enters the step; every DOF needs mass.  Stable for undamped modes
when omega dt <= sqrt(2 / gamma) (Hughes 1987, The Finite Element Method, section 9.1, with beta = 0),
checked against the highest mode of the pre-test stiffness at construction.
"""

from __future__ import annotations

import math

import numpy as np

from hybridsim.coordinator.integrators.base import check_stable, require_mass
from hybridsim.coordinator.integrators.newmark_family import NewmarkFamilyIntegrator
from hybridsim.modules.config_schema import Key, Number, Schema


class NewmarkExplicitIntegrator(NewmarkFamilyIntegrator):
    name = "newmark-explicit"
    CONFIG = Schema("integrator 'newmark-explicit'", "Newmark with beta = 0 (OpenSees' NewmarkExplicit).", {
        "gamma": Key(Number(minimum=0.5, maximum=1.0), "Newmark's gamma in [1/2, 1]: 1/2 central difference, "
                     "above it numerical damping", default=0.5)})

    def __init__(self, mass: np.ndarray, damping: np.ndarray, initial_stiffness: np.ndarray, dt: float,
                 *, gamma: float = 0.5) -> None:
        self.check_options(gamma=gamma)
        require_mass(mass, "newmark-explicit")
        super().__init__(mass, damping, initial_stiffness, dt, alpha=0.0, beta=0.0, gamma=gamma)
        check_stable(f"newmark-explicit (gamma = {gamma:g})", dt, self.initial_stiffness, self.mass,
                     math.sqrt(2.0 / gamma), "sqrt(2/gamma)", hint=" or kr-alpha")
