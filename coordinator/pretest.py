"""Pre-test of initial stiffness: impose small deformations at each module's DOFs, read the reactions.

For each module DOF j, the trial displacements +h e_j and -h e_j are
imposed (never committed) and column j of the module's stiffness is
(r(+h e_j) - r(-h e_j)) / (2 h).  Modules are probed at the same time
(column j of every module in one step).  The assembled global K_I is
symmetrised; its asymmetry ||K - K^T|| / ||K|| is reported.  The test ends
by imposing and committing zero displacement, so every module starts the
test from its committed rest state.  For a sparse structure (``sparse``) K_I
keeps only the nonzero entries of each measured column (CSR): a 10,000-DOF
frame's K_I is 0.1 % full, where a dense one would take 800 MB.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg  # noqa: F401 - sp.linalg.norm

from hybridsim.coordinator.partition import Partition


@dataclass(frozen=True)
class PretestResult:
    stiffness: np.ndarray | sp.csr_matrix
    """symmetrised initial stiffness over the global DOFs (N/m, N/rad, N*m/rad); CSR for a sparse structure"""
    asymmetry: float
    """||K - K^T||_F / ||K||_F of the measured matrix (dimensionless)"""
    rest_force: np.ndarray
    """global restoring force at zero displacement after the test (N)"""
    last_step: int
    """the step ID committed at the end (the test continues after it)"""


def pretest(partition: Partition, amplitude: float = 1e-5, first_step: int = 1, sparse: bool = False) -> PretestResult:
    """Measure the initial stiffness of every module by central differences of size ``amplitude`` (m, rad);
    ``sparse``: K_I as a CSR matrix of the nonzero entries measured."""
    if not amplitude > 0:
        raise ValueError(f"pre-test amplitude must be positive, got {amplitude}")
    n = partition.ndof
    columns = _Columns(n, sparse)
    steps = count(first_step)
    widest = max((slot.ndof for slot in partition.slots), default=0)
    for j in range(widest):
        probes = [np.zeros(slot.ndof) for slot in partition.slots]
        for probe in probes:
            if j < probe.size:
                probe[j] = amplitude
        plus = [r.force.copy() for r in partition.evaluate(next(steps), 0.0, probes)]
        minus = [r.force.copy() for r in partition.evaluate(next(steps), 0.0, [-p for p in probes])]
        for slot, f_plus, f_minus in zip(partition.slots, plus, minus):
            if j < slot.ndof:
                columns.add(slot.index, slot.index[j], (f_plus - f_minus) / (2 * amplitude))
    rest_step = next(steps)
    rest_force = partition.restoring_force(rest_step, 0.0, np.zeros(n))
    partition.commit(rest_step)
    measured = columns.matrix()
    norm = sp.linalg.norm(measured) if sparse else np.linalg.norm(measured)
    difference = measured - measured.T
    asymmetry = float((sp.linalg.norm(difference) if sparse else np.linalg.norm(difference)) / norm) if norm else 0.0
    return PretestResult(0.5 * (measured + measured.T), asymmetry, rest_force, rest_step)


class _Columns:
    """The measured columns of K_I, summed over the modules: a dense array, or the nonzero entries (CSR)."""

    def __init__(self, n: int, sparse: bool) -> None:
        self.n, self.sparse = n, sparse
        self.dense = None if sparse else np.zeros((n, n))
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.values: list[np.ndarray] = []

    def add(self, rows: np.ndarray, column: int, values: np.ndarray) -> None:
        if self.dense is not None:
            self.dense[rows, column] += values
            return
        nonzero = np.flatnonzero(values)
        self.rows.append(rows[nonzero])
        self.cols.append(np.full(nonzero.size, column))
        self.values.append(values[nonzero])

    def matrix(self) -> np.ndarray | sp.csr_matrix:
        if self.dense is not None:
            return self.dense
        if not self.values:
            return sp.csr_matrix((self.n, self.n))
        entries = (np.concatenate(self.values), (np.concatenate(self.rows), np.concatenate(self.cols)))
        return sp.csr_matrix(entries, shape=(self.n, self.n))  # duplicates (shared DOFs) are summed
