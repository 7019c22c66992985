"""The factor an integrator solves with at every step: LAPACK's LU of a dense matrix, SuperLU of a sparse one.

A scheme factors its effective matrix once, when it is built, and each step is one solve with the factor.
A dense matrix (numpy) is factored by LAPACK (``getrf``; a step is ``getrs``, in place); a sparse one
(``scipy.sparse``: the structure's matrices given as Matrix Market or NPZ files) by SuperLU
(``scipy.sparse.linalg.splu``) with the minimum-degree ordering of A^T + A and symmetric pivoting (the
structural matrices are symmetric), and a diagonal one is a division.  :func:`matvec` is the product the
step takes with either kind.  Which kind a structure is given in is the experiment's choice: the
crossover measured by ``hybridsim bench``'s ``large_model`` says where sparse wins.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.linalg.lapack import dgetrs


class FactorError(RuntimeError):
    """A matrix that cannot be factored: singular or not finite."""


def is_sparse(matrix: Any) -> bool:
    return sp.issparse(matrix)


def structural(matrix: Any) -> np.ndarray | sp.csr_matrix:
    """A structural matrix as the integrators keep it: a float array, or a CSR matrix if it is sparse."""
    return sp.csr_matrix(matrix, dtype=float) if sp.issparse(matrix) else np.asarray(matrix, float)


def matvec(matrix: np.ndarray | sp.spmatrix, vector: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` into ``out`` (dense: without allocating; sparse: one temporary)."""
    if sp.issparse(matrix):
        out[...] = matrix @ vector
        return out
    return matrix.dot(vector, out)


class Factor:
    """One matrix factored once; :meth:`solve` answers A x = b (b's array may be overwritten)."""

    def __init__(self, matrix: np.ndarray | sp.spmatrix) -> None:
        self.sparse = sp.issparse(matrix)
        self._diagonal: np.ndarray | None = None
        if self.sparse:
            matrix = sp.csc_matrix(matrix, dtype=float)
            if not np.all(np.isfinite(matrix.data)):
                raise FactorError("has non-finite entries")
            diagonal = matrix.diagonal()
            if matrix.count_nonzero() == np.count_nonzero(diagonal):
                if np.any(diagonal == 0.0):
                    raise FactorError("is singular (a DOF with neither mass nor stiffness?)")
                self._diagonal = diagonal
                return
            try:
                self._lu = spla.splu(matrix, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                                     options={"SymmetricMode": True})
            except RuntimeError as exc:
                raise FactorError(f"is singular ({exc}; a DOF with neither mass nor stiffness?)") from None
            return
        try:
            self._dense = scipy.linalg.lu_factor(matrix, check_finite=True)
        except (ValueError, np.linalg.LinAlgError) as exc:
            raise FactorError(f"cannot be factored ({exc})") from None
        if not np.all(np.isfinite(self._dense[0])) or np.min(np.abs(np.diag(self._dense[0]))) == 0.0:
            raise FactorError("is singular (a DOF with neither mass nor stiffness?)")

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """x with A x = rhs (dense: computed in rhs's array, which is returned)."""
        if self._diagonal is not None:
            return np.divide(rhs, self._diagonal, out=rhs)
        if self.sparse:
            return self._lu.solve(rhs)
        return dgetrs(self._dense[0], self._dense[1], rhs, overwrite_b=1)[0]

    @property
    def lu(self) -> tuple[np.ndarray, np.ndarray]:
        """LAPACK's LU factors and pivots of a dense matrix (for ``scipy.linalg.lu_solve``)."""
        return self._dense
