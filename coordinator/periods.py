"""The structure's first natural periods, from its mass M and the pre-test's stiffness K_I, before the first step.

The generalized eigenproblem K_I phi = omega^2 M phi (Chopra, Dynamics of Structures, section 10.2):
scipy.linalg.eigh for a dense structure (massless DOFs condensed out first, Guyan), scipy.sparse.linalg.eigsh
in shift-invert about 0 for a sparse one (its lowest modes only).  T_i = 2 pi / omega_i (s), longest first;
a rigid-body mode (omega = 0) has no period and is left out.  Printed when a run starts and kept in its
results file and summary (``natural_periods_s``): a unit mistake (mass in tonnes, stiffness in kN) shows here
before anything moves.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg

from hybridsim.coordinator.model import natural_frequencies

FIRST = 6
"""how many periods a run prints and keeps"""


def natural_periods(stiffness: np.ndarray | sp.spmatrix, mass: np.ndarray | sp.spmatrix,
                    count: int = FIRST) -> tuple[float, ...]:
    """The ``count`` longest natural periods (s) of (K, M), longest first; rigid-body modes left out."""
    try:
        hertz = _frequencies(stiffness, mass, count)
    except (np.linalg.LinAlgError, scipy.sparse.linalg.ArpackError, RuntimeError):
        return ()  # K_I singular where M has no mass to span (said as "none"); the integrator judges the run
    scale = max(float(np.max(hertz, initial=0.0)), np.finfo(float).tiny)
    flexible = np.sort(hertz[hertz > 1e-9 * scale])
    return tuple(float(1.0 / f) for f in flexible[:count])


def _frequencies(stiffness: np.ndarray | sp.spmatrix, mass: np.ndarray | sp.spmatrix, count: int) -> np.ndarray:
    """Natural frequencies (Hz): the lowest ``count`` of a sparse structure, all of a dense one."""
    if sp.issparse(mass) and mass.shape[0] > count + 1:
        omega2 = scipy.sparse.linalg.eigsh(sp.csc_matrix(stiffness), k=count, M=sp.csc_matrix(mass), sigma=0.0,
                                           which="LM", return_eigenvectors=False)
        return np.sqrt(np.clip(omega2, 0.0, None)) / (2.0 * np.pi)
    return natural_frequencies(*(m.toarray() if sp.issparse(m) else np.asarray(m, float) for m in (stiffness, mass)))


def describe(periods: tuple[float, ...]) -> str:
    """One line: ``natural periods (s): T1 0.5, T2 0.19, ...``."""
    listed = ", ".join(f"T{i} {t:.4g}" for i, t in enumerate(periods, start=1))
    return f"natural periods (s) from M and the pre-test's K_I: {listed or 'none found'}"
