"""Pre-test of initial stiffness: impose small deformations at each module's DOFs, read the reactions.

For each module DOF j, the trial displacements +h e_j and -h e_j are
imposed (never committed) and column j of the module's stiffness is
(r(+h e_j) - r(-h e_j)) / (2 h).  Modules are probed at the same time
(column j of every module in one step).  The assembled global K_I is
symmetrised; its asymmetry ||K - K^T|| / ||K|| is reported.  The test ends
by imposing and committing zero displacement, so every module starts the
test from its committed rest state.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count

import numpy as np

from hybridsim.coordinator.partition import Partition


@dataclass(frozen=True)
class PretestResult:
    stiffness: np.ndarray
    """symmetrised initial stiffness over the global DOFs (N/m, N/rad, N*m/rad)"""
    asymmetry: float
    """||K - K^T||_F / ||K||_F of the measured matrix (dimensionless)"""
    rest_force: np.ndarray
    """global restoring force at zero displacement after the test (N)"""
    last_step: int
    """the step ID committed at the end (the test continues after it)"""


def pretest(partition: Partition, amplitude: float = 1e-5, first_step: int = 1) -> PretestResult:
    """Measure the initial stiffness of every module by central differences of size ``amplitude`` (m, rad)."""
    if not amplitude > 0:
        raise ValueError(f"pre-test amplitude must be positive, got {amplitude}")
    n = partition.ndof
    measured = np.zeros((n, n))
    steps = count(first_step)
    widest = max((slot.ndof for slot in partition.slots), default=0)
    for j in range(widest):
        probes = [np.eye(slot.ndof)[j] * amplitude if j < slot.ndof else np.zeros(slot.ndof)
                  for slot in partition.slots]
        plus = [r.force.copy() for r in partition.evaluate(next(steps), 0.0, probes)]
        minus = [r.force.copy() for r in partition.evaluate(next(steps), 0.0, [-p for p in probes])]
        for slot, f_plus, f_minus in zip(partition.slots, plus, minus):
            if j < slot.ndof:
                measured[slot.index, slot.index[j]] += (f_plus - f_minus) / (2 * amplitude)
    rest_step = next(steps)
    rest_force = partition.restoring_force(rest_step, 0.0, np.zeros(n))
    partition.commit(rest_step)
    norm = np.linalg.norm(measured)
    asymmetry = float(np.linalg.norm(measured - measured.T) / norm) if norm else 0.0
    return PretestResult(0.5 * (measured + measured.T), asymmetry, rest_force, rest_step)
