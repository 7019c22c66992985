"""A structure split for hybrid testing: a linear numerical part and one specimen at DOF e.

Over the n condensed DOFs the equation of motion is

    M a + C v + K_N d + f(d_e) u_e = F

where the specimen (the experimental substructure) acts between DOF e and
the ground with force f (N) and initial stiffness K_E,0 (N/m, from the
pre-test).  Every numerical substructure of the implicit RTHS benchmark is
linear, so R_N(d) = K_N d.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SplitStructure:
    """Mass (kg), damping (N*s/m) and numerical stiffness K_N (N/m) over n DOFs, plus the specimen DOF."""

    mass: np.ndarray
    damping: np.ndarray
    stiffness: np.ndarray
    specimen_dof: int
    """e: index of the DOF that carries the specimen"""
    specimen_stiffness: float
    """K_E,0: the specimen's initial stiffness as the pre-test measures it (N/m)"""

    def __post_init__(self) -> None:
        n = np.asarray(self.mass).shape[0]
        for name in ("mass", "damping", "stiffness"):
            matrix = np.asarray(getattr(self, name), float)
            if matrix.shape != (n, n) or not np.all(np.isfinite(matrix)):
                raise ValueError(f"{name} must be a finite {n}x{n} matrix, got shape {matrix.shape}")
            object.__setattr__(self, name, matrix)
        if not 0 <= self.specimen_dof < n:
            raise ValueError(f"specimen DOF index must be in 0..{n - 1}, got {self.specimen_dof}")
        if not self.specimen_stiffness >= 0:
            raise ValueError(f"specimen initial stiffness must be >= 0 N/m, got {self.specimen_stiffness}")

    @property
    def ndof(self) -> int:
        return self.mass.shape[0]

    def stiffness_with_specimen(self, specimen_stiffness: float) -> np.ndarray:
        """K_N + k_E u_e u_e^T (N/m) for a specimen stiffness k_E (N/m)."""
        k = self.stiffness.copy()
        e = self.specimen_dof
        k[e, e] += specimen_stiffness
        return k
