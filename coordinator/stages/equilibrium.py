"""Static equilibrium with the modules: Newton's method with a constant tangent (the pre-test's K_I or a declared
one), some DOFs at prescribed displacements.

Find d with d_p = u_p (prescribed) and r_f(d) = P_f on the free DOFs:

    d_f <- d_f + K_ff^-1 (P_f - r_f(d))

(a modified Newton-Raphson iteration, Bathe, Finite Element Procedures, section 8.4.1, eq. 8.89 with the tangent
held), converged when ||P_f - r_f|| <= tolerance * max(||P||, ||r||); each trial is one evaluation at every
module, the last one committed.  The reactions at the prescribed DOFs are r_p.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hybridsim.coordinator.integrators.factor import Factor, FactorError
from hybridsim.coordinator.stages.base import StageContext, StageError


@dataclass
class Newton:
    """The iteration over one set of prescribed DOFs (its factored K_ff kept between solutions)."""

    tangent: np.ndarray
    prescribed: np.ndarray
    """indices of the DOFs at prescribed displacements"""
    tolerance: float = 1e-10
    max_iterations: int = 50

    def __post_init__(self) -> None:
        n = self.tangent.shape[0]
        self.free = np.setdiff1d(np.arange(n), self.prescribed)
        block = np.asarray(self.tangent)[np.ix_(self.free, self.free)]
        try:
            self.factor = Factor(block) if self.free.size else None
        except FactorError as exc:
            raise StageError(f"the tangent over the free DOFs {exc}: prescribe a displacement at the DOFs it leaves "
                             "free to move, or declare a tangent") from None

    def solve(self, context: StageContext, force: np.ndarray, values: np.ndarray,
              where: str) -> tuple[np.ndarray, np.ndarray]:
        """(d, r) in equilibrium with ``force`` (N) and d = ``values`` at the prescribed DOFs (m, rad); the last
        trial is committed and the row settled.  StageError naming ``where`` when it does not converge."""
        d = context.integrator.displacement.copy()
        d[self.prescribed] = values
        free = self.free
        residual_norm = np.inf
        for _ in range(self.max_iterations):
            r = context.evaluate(d)
            residual = force[free] - r[free]
            residual_norm = float(np.linalg.norm(residual))
            if residual_norm <= self.tolerance * max(float(np.linalg.norm(force)), float(np.linalg.norm(r))):
                context.settle(d, r, force)
                return d, r
            d[free] += self.factor.solve(residual)
        raise StageError(f"{where}: no static equilibrium after {self.max_iterations} iterations (residual "
                         f"{residual_norm:.3g} N); use more increments, a declared tangent or a larger tolerance")
