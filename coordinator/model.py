"""The structural model over the coordinator's named DOFs: mass, damping, influence, condensation.

The coordinator carries the inertia and viscous damping of the whole
structure; the stiffness lives in the modules (and is seen through their
restoring forces and the pre-test).  Units: kg (kg*m^2 for rotations),
N*s/m, N/m; DOF order is the order of ``dofs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from hybridsim.coordinator.integrators.factor import structural


def rayleigh_coefficients(omega_i: float, omega_j: float, zeta: float) -> tuple[float, float]:
    """Mass and stiffness factors (a, b) of C = a M + b K with ratio ``zeta`` at omega_i, omega_j (rad/s).

    Solves 1/2 [[1/w_i, w_i], [1/w_j, w_j]] [a, b]^T = [zeta, zeta]^T.
    """
    if not (omega_i > 0 and omega_j > 0) or omega_i == omega_j:
        raise ValueError(f"Rayleigh damping needs two distinct positive frequencies, got {omega_i}, {omega_j} rad/s")
    a = 2.0 * zeta * omega_i * omega_j / (omega_i + omega_j)
    b = 2.0 * zeta / (omega_i + omega_j)
    return a, b


def massive_dofs(mass: np.ndarray) -> np.ndarray:
    """Indices of the DOFs that carry mass; a massless DOF has a zero row and column in M."""
    return np.flatnonzero(np.any(np.asarray(mass) != 0.0, axis=0))


def natural_frequencies(stiffness: np.ndarray, mass: np.ndarray) -> np.ndarray:
    """Natural frequencies (Hz, ascending) of (K, M); massless DOFs are condensed out first."""
    massive = massive_dofs(mass)
    if massive.size < mass.shape[0]:
        condensation = GuyanCondensation(stiffness, massive)
        stiffness, mass = condensation.stiffness, condensation.condense(mass)
    eigenvalues = scipy.linalg.eigh(stiffness, mass, eigvals_only=True)
    return np.sqrt(np.abs(eigenvalues)) / (2.0 * np.pi)


class GuyanCondensation:
    """Static (Guyan) condensation of K onto the retained DOFs, with recovery of the others.

    With u = [u_r; u_c] (retained, condensed-out) and no load on u_c,
    u_c = -K_cc^{-1} K_cr u_r = T_c u_r, and the condensed stiffness is
    K_rr + K_rc T_c.  ``transform`` maps u_r to the full vector.
    """

    def __init__(self, stiffness: np.ndarray, retained: Sequence[int]) -> None:
        k = np.asarray(stiffness, float)
        n = k.shape[0]
        self.retained = np.asarray(retained, int)
        self.condensed = np.setdiff1d(np.arange(n), self.retained)
        r, c = self.retained, self.condensed
        recovery = -np.linalg.solve(k[np.ix_(c, c)], k[np.ix_(c, r)]) if c.size else np.zeros((0, r.size))
        self.transform = np.zeros((n, r.size))
        self.transform[r, np.arange(r.size)] = 1.0
        self.transform[c] = recovery
        self.stiffness = k[np.ix_(r, r)] + k[np.ix_(r, c)] @ recovery

    def condense(self, matrix: np.ndarray) -> np.ndarray:
        """Project a full matrix (mass, damping) onto the retained DOFs: T^T A T."""
        return self.transform.T @ np.asarray(matrix, float) @ self.transform

    def recover(self, retained_values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Full displacement vector(s) from the retained ones (last axis = retained DOFs), into ``out`` if given."""
        return np.matmul(np.asarray(retained_values, float), self.transform.T, out=out)


@dataclass
class StructuralModel:
    """Mass, damping and ground-motion influence over named DOFs (the coordinator's global DOFs); M and C
    dense arrays, or CSR matrices for a sparse structure."""

    dofs: tuple[str, ...]
    mass: np.ndarray
    damping: np.ndarray
    influence: np.ndarray
    """r in f = -M r a_g: ground-acceleration influence vector (dimensionless); (n, c) for c excitation components"""

    def __post_init__(self) -> None:
        n = len(self.dofs)
        if len(set(self.dofs)) != n:
            seen: set[str] = set()
            twice = sorted({d for d in self.dofs if d in seen or seen.add(d)})
            raise ValueError(f"DOF named twice: {', '.join(twice)}")
        self.mass = structural(self.mass)
        self.damping = structural(self.damping)
        self.influence = np.asarray(self.influence, float)
        for name, m in (("mass", self.mass), ("damping", self.damping)):
            if m.shape != (n, n):
                raise ValueError(f"{name} must be {n}x{n} for {n} DOFs, got shape {m.shape}")
            if not np.all(np.isfinite(m.data if sp.issparse(m) else m)):
                raise ValueError(f"{name} has non-finite entries")
        if self.influence.shape[:1] != (n,) or self.influence.ndim > 2:
            raise ValueError(f"influence vector must have {n} entries, got {self.influence.size}")

    @property
    def ndof(self) -> int:
        return len(self.dofs)

    def load_shape(self) -> np.ndarray:
        """-M r (N per m/s^2): (n,), or (n, c) for c excitation components."""
        return -(self.mass @ self.influence)

    def ground_load(self, ground_acceleration: float | np.ndarray) -> np.ndarray:
        """Effective earthquake load -M r a_g (N) for a ground acceleration (m/s^2; one per component)."""
        shape = self.load_shape()
        return shape * ground_acceleration if shape.ndim == 1 else shape @ np.asarray(ground_acceleration)


class DofReduction:
    """The DOFs the integrator works on: all of them, or the DOFs with mass (Guyan condensation).

    With condensation, u = T u_r (T from the initial stiffness: the massless DOFs are in static
    equilibrium under K_I), the reduced matrices are T^T A T and a force f reduces to T^T f.  Exact
    for a linear structure without damping on the massless DOFs; for a nonlinear one the massless
    DOFs follow the linear recovery.

    Without condensation every mapping returns its input itself; with it, the result is computed into
    ``out`` when one is given (no allocation in the step loop).
    """

    def __init__(self, model: StructuralModel, stiffness: np.ndarray | sp.csr_matrix, condense: bool) -> None:
        self.model = model
        self.initial_stiffness = stiffness
        """K_I over all the structure's DOFs, as the pre-test measured it"""
        if condense and sp.issparse(model.mass):
            raise ValueError("structure.condense_massless: a sparse structure integrates every DOF")
        massive = np.arange(model.ndof) if sp.issparse(model.mass) else massive_dofs(model.mass)
        self.guyan = GuyanCondensation(stiffness, massive) if condense and massive.size < model.ndof else None
        if self.guyan is not None:
            self.mass, self.damping = self.guyan.condense(model.mass), self.guyan.condense(model.damping)
            self.stiffness = self.guyan.stiffness
        else:
            self.mass, self.damping, self.stiffness = model.mass, model.damping, stiffness
        self.ndof = model.ndof if self.guyan is None else self.guyan.retained.size

    def expand(self, reduced: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Values on all DOFs from the integrator's DOFs (the Guyan recovery of the condensed ones)."""
        return reduced if self.guyan is None else self.guyan.recover(reduced, out)

    def force(self, force: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """A force on all DOFs as the integrator sees it: T^T f."""
        return force if self.guyan is None else np.matmul(self.guyan.transform.T, force, out=out)

    def place(self, reduced: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """A reduced force on the retained DOFs, zero elsewhere (for the record)."""
        if self.guyan is None:
            return reduced
        full = np.zeros(self.model.ndof) if out is None else out
        full.fill(0.0)
        full[self.guyan.retained] = reduced
        return full
