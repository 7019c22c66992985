"""Newmark explicit (central difference): beta = 0, gamma = 1/2.

d_{n+1} = d_n + dt v_n + dt^2/2 a_n is exact before the modules are asked,
so no stiffness enters the step; (M + dt/2 C) a_{n+1} = f_{n+1} - r_{n+1} - C
(v_n + dt/2 a_n).  Stable for dt <= 2 / omega_max (undamped), checked
against the initial stiffness at construction.  Every DOF needs mass.
"""

from __future__ import annotations

import numpy as np

from hybridsim.coordinator.integrators.base import check_stable, require_mass
from hybridsim.coordinator.integrators.newmark_family import NewmarkFamilyIntegrator


class CentralDifferenceIntegrator(NewmarkFamilyIntegrator):
    name = "central-difference"

    def __init__(self, mass: np.ndarray, damping: np.ndarray, initial_stiffness: np.ndarray, dt: float) -> None:
        require_mass(mass, "central difference")
        super().__init__(mass, damping, initial_stiffness, dt, alpha=0.0, beta=0.0, gamma=0.5)
        check_stable("central difference", dt, self.initial_stiffness, self.mass, 2.0, "2")
