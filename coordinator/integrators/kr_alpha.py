"""KR-alpha: the explicit model-based scheme of Kolay & Ricles (2014), with CR (Chen & Ricles 2008).

Kolay, C. and Ricles, J. M. (2014) "Development of a family of unconditionally stable explicit direct
integration algorithms with controllable numerical energy dissipation", EESD 43(9):1361-1380; OpenSees
names it ``KRAlphaExplicit``.  The displacement is explicit, so the modules are commanded once per step:

    d_{n+1} = d_n + dt v_n + dt^2 alpha_2 a_n,     v_{n+1} = v_n + dt alpha_1 a_n
    M (I - alpha_3) a_{n+1} = f_{n+1-af} - C v_{n+1-af} - r_{n+1-af} - M alpha_3 a_n

with x_{n+1-af} = (1 - af) x_{n+1} + af x_n and r_{n+1} the force the modules measure at d_{n+1}.
The integration parameter matrices come from M, the declared damping C and the pre-test stiffness K_I:

    A = M + gamma dt C + beta dt^2 K_I
    alpha_1 = A^{-1} M,   alpha_2 = (1/2 + gamma) alpha_1,   alpha_3 = A^{-1} (am M + af gamma dt C + af beta dt^2 K_I)

with the generalized-alpha weights of Chung & Hulbert (1993) from the spectral radius at infinity
rho_inf in [0, 1]: am = (2 rho_inf - 1)/(rho_inf + 1), af = rho_inf/(rho_inf + 1), gamma = 1/2 - am + af,
beta = (1 - am + af)^2 / 4.  For a linear structure it has the generalized-alpha method's characteristic
equation: unconditionally stable, second-order accurate, spectral radius rho_inf as omega dt -> inf.
OpenSees evaluates its elements at the weighted displacement d_{n+1-af}; a hybrid test commands d_{n+1}
and weights the measured forces (the same for a linear structure; for a yielding one the two differ by
O(dt^2), docs/integrators.md).

rho_inf = 1 (am = af = 1/2, alpha_3 = I/2, alpha_1 = alpha_2 = 4 (4M + 2 dt C + dt^2 K_I)^{-1} M) is the
CR scheme of Chen & Ricles (2008, "Development of direct integration algorithms for structural dynamics
using discrete control theory", J. Eng. Mech. 134(8):676-683) with its equation of motion taken at the
step's midpoint, which for a linear structure gives CR's response; registered as ``cr``.
Every DOF needs mass (M (I - alpha_3) is factored).

Over sparse M, C and K_I the dense alpha_1 and alpha_3 are never formed: with S = gamma dt C + beta dt^2 K_I,
A = M + S and B = (1 - am) M + (1 - af) S, M (I - alpha_3) = M A^{-1} B, so the step is

    alpha_1 a_n = A^{-1} (M a_n),     a_{n+1} = B^{-1} [A M^{-1} rhs - (am M + af S) a_n]

(rhs the weighted forces above): three sparse solves (SuperLU of A and B, a division for a lumped M).

The first step from a state with a_0 != 0 (free vibration from a displacement) takes alpha_2 dt^2 a_0
where Taylor's series has dt^2/2 a_0: the O(dt^2) error of d_1 makes such a history first-order accurate,
and at large omega dt d_1 overshoots to d_0 - (1/2 + gamma)/beta d_0 (-2 d_0 at rho_inf = 0.5, -3 d_0
for CR) before the spectral radius takes over; from rest (a ground motion) the scheme is second order.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from hybridsim.coordinator.integrators.amplification import rho_inf_weights
from hybridsim.coordinator.integrators.base import Integrator, factor, require_mass
from hybridsim.coordinator.integrators.factor import is_sparse, matvec
from hybridsim.modules.config_schema import Key, Number, Schema


class KRAlphaIntegrator(Integrator):
    """One module evaluation per step; the parameter matrices computed once from M, C and K_I."""

    name = "kr-alpha"
    sparse = True
    CONFIG = Schema("integrator 'kr-alpha'", "Kolay-Ricles explicit model-based scheme (OpenSees' KRAlphaExplicit).", {
        "rho_inf": Key(Number(minimum=0.0, maximum=1.0),
                       "spectral radius at infinite omega dt, in [0, 1]: 1 is CR (no numerical damping)",
                       default=0.5)})

    def __init__(self, mass: np.ndarray, damping: np.ndarray, initial_stiffness: np.ndarray, dt: float,
                 *, rho_inf: float = 0.5) -> None:
        KRAlphaIntegrator.check_options(rho_inf=rho_inf)  # cr declares no options and passes 1
        require_mass(mass, self.name)
        super().__init__(mass, damping, initial_stiffness, dt)
        self.rho_inf = float(rho_inf)
        self.alpha_m, self.alpha_f, self.beta, self.gamma = rho_inf_weights(self.rho_inf)
        m, c, k = self.mass, self.damping, self.initial_stiffness
        stiff = self.gamma * dt * c + self.beta * dt * dt * k
        n = self.displacement.size
        self._pred_d, self._pred_v, self._rhs, self._work = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
        self._sparse = is_sparse(m)
        if self._sparse:  # the factors of A, M and B (the module's docstring), never alpha_1 or alpha_3
            self._a_matrix, self._weighted = (m + stiff).tocsr(), (self.alpha_m * m + self.alpha_f * stiff).tocsr()
            self._a, self._m = factor(self._a_matrix, self.name), factor(m, self.name)
            self._lu = factor((1.0 - self.alpha_m) * m + (1.0 - self.alpha_f) * stiff, self.name)
            return
        a = factor(m + stiff, self.name).lu
        self.alpha1 = scipy.linalg.lu_solve(a, m)
        self.alpha3 = scipy.linalg.lu_solve(a, self.alpha_m * m + self.alpha_f * stiff)
        self._lu = factor(m - m @ self.alpha3, self.name)
        self._inertia_n = m @ self.alpha3

    def predict(self, load: np.ndarray) -> np.ndarray:
        dt, work = self.dt, self._work
        if self._sparse:
            work[...] = self._a.solve(self.mass @ self.acceleration)
        else:
            self.alpha1.dot(self.acceleration, work)
        work *= dt
        np.add(self.velocity, work, out=self._pred_v)
        np.add(self.displacement, np.multiply(self.velocity, dt, out=self._pred_d), out=self._pred_d)
        work *= (0.5 + self.gamma) * dt
        self._pred_d += work
        self._take_load(load)
        return self._pred_d

    def correct(self, restoring_force: np.ndarray) -> None:
        af, c, rhs, work = self.alpha_f, self.damping, self._rhs, self._work
        r = np.asarray(restoring_force, float)
        np.subtract(self._next_load, matvec(c, self._pred_v, work), out=rhs)
        rhs -= r
        rhs *= 1.0 - af
        np.subtract(self.load, matvec(c, self.velocity, work), out=work)
        work -= self.restoring_force
        work *= af
        rhs += work
        if self._sparse:
            matvec(self._a_matrix, self._m.solve(rhs), rhs)
            rhs -= self._weighted @ self.acceleration
        else:
            rhs -= self._inertia_n.dot(self.acceleration, work)
        self.acceleration[...] = self._lu.solve(rhs)
        self.displacement[...] = self._pred_d
        self.velocity[...] = self._pred_v
        self.restoring_force[...] = r
        self._commit_step()
        return None


class CRIntegrator(KRAlphaIntegrator):
    """CR (Chen & Ricles 2008): KR-alpha with rho_inf = 1."""

    name = "cr"
    CONFIG = Schema("integrator 'cr'", "Chen-Ricles explicit model-based scheme: KR-alpha with rho_inf = 1.")

    def __init__(self, mass: np.ndarray, damping: np.ndarray, initial_stiffness: np.ndarray, dt: float) -> None:
        super().__init__(mass, damping, initial_stiffness, dt, rho_inf=1.0)
