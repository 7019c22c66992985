"""The Newmark predictor and the one-pass corrector shared by alpha-OS and the explicit scheme.

Predictor (beta, gamma of Newmark):

    d~_{n+1} = d_n + dt v_n + dt^2 (1/2 - beta) a_n
    v~_{n+1} = v_n + dt (1 - gamma) a_n

Corrector with the operator-splitting weight alpha in [-1/3, 0] and the
initial stiffness K_I (Combescure & Pegon 1997), and the inertia weight alpha_m
of the generalized-alpha form (Chung & Hulbert 1993; 0 for alpha-OS and HHT):

    [(1+alpha_m) M + (1+alpha) gamma dt C + (1+alpha) beta dt^2 K_I] a_{n+1}
        = (1+alpha) f_{n+1} - alpha f_n - (1+alpha) (C v~_{n+1} + r~_{n+1}) + alpha (C v_n + r_n)
          + alpha_m M a_n
    d_{n+1} = d~_{n+1} + beta dt^2 a_{n+1},   v_{n+1} = v~_{n+1} + gamma dt a_{n+1}
    r_{n+1} = r~_{n+1} + K_I (d_{n+1} - d~_{n+1})

where r~ is the restoring force the modules return at d~.  The effective
mass is factored once (LAPACK's LU, or SuperLU when M, C and K_I are sparse:
``factor``).  With beta = 0 the corrector leaves d = d~ and the scheme is
explicit.
"""

from __future__ import annotations

import numpy as np

from hybridsim.coordinator.integrators.base import Integrator, factor
from hybridsim.coordinator.integrators.factor import matvec


class NewmarkFamilyIntegrator(Integrator):
    """One evaluation per step: predict displacement, measure force, correct acceleration.

    A step allocates nothing: the predictor, the right-hand side and the
    committed state are written into arrays made once, in the operation
    order of the formulas above (so the results are the same to the bit).
    Over sparse matrices each product and the solve make one temporary.
    """

    def __init__(self, mass: np.ndarray, damping: np.ndarray, initial_stiffness: np.ndarray, dt: float,
                 *, alpha: float, beta: float, gamma: float, alpha_m: float = 0.0) -> None:
        super().__init__(mass, damping, initial_stiffness, dt)
        self.alpha, self.beta, self.gamma, self.alpha_m = float(alpha), float(beta), float(gamma), float(alpha_m)
        w = 1.0 + self.alpha
        inertia = self.mass if not self.alpha_m else (1.0 + self.alpha_m) * self.mass
        effective_mass = inertia + w * self.gamma * dt * self.damping
        if self.beta:
            effective_mass = effective_mass + w * self.beta * dt * dt * self.initial_stiffness
        self._factor = factor(effective_mass, self.name)
        self._pred_d = np.zeros_like(self.displacement)
        self._pred_v = np.zeros_like(self.displacement)
        self._rhs = np.zeros_like(self.displacement)
        self._work = np.zeros_like(self.displacement)
        self._shift = np.zeros_like(self.displacement)

    def predict(self, load: np.ndarray) -> np.ndarray:
        dt, a = self.dt, self.acceleration
        np.multiply(a, dt * dt * (0.5 - self.beta), out=self._pred_d)
        self._pred_d += self.displacement
        self._pred_d += np.multiply(self.velocity, dt, out=self._work)
        np.multiply(a, dt * (1.0 - self.gamma), out=self._pred_v)
        self._pred_v += self.velocity
        self._take_load(load)
        return self._pred_d

    def correct(self, restoring_force: np.ndarray) -> None:
        alpha, c, work, rhs = self.alpha, self.damping, self._work, self._rhs
        r_tilde = np.asarray(restoring_force, float)
        np.subtract(self._next_load, matvec(c, self._pred_v, work), out=rhs)
        rhs -= r_tilde
        if alpha:  # with alpha = 0 the weight 1 + alpha = 1 would multiply exactly: skipped
            rhs *= 1.0 + alpha
            matvec(c, self.velocity, work)
            work += self.restoring_force
            work -= self.load
            work *= alpha
            rhs += work
        if self.alpha_m:  # 0 for alpha-OS and HHT: skipped, their operations unchanged
            matvec(self.mass, self.acceleration, work)
            work *= self.alpha_m
            rhs += work
        a = self._factor.solve(rhs)  # dense: in rhs; the LU of the effective mass
        shift = np.multiply(a, self.beta * self.dt * self.dt, out=self._shift)
        np.add(self._pred_d, shift, out=self.displacement)
        np.add(self._pred_v, np.multiply(a, self.gamma * self.dt, out=work), out=self.velocity)
        self.acceleration[...] = a
        if self.beta:
            np.add(r_tilde, matvec(self.initial_stiffness, shift, work), out=self.restoring_force)
        else:
            self.restoring_force[...] = r_tilde
        self._commit_step()
        return None
