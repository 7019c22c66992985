"""Matrices read from files: CSV rows (dense), Matrix Market ``.mtx`` and SciPy's ``.npz`` (sparse), checked alike.

A file ending in ``.mtx`` (Matrix Market, ``scipy.io.mmread``) or ``.npz`` (``scipy.sparse.save_npz``, read
without pickles) gives a sparse CSR matrix, any other a dense one from comma-separated rows.  The sparse
forms are how a large structure is given (a 10,000-DOF frame's K is 0.1 % full): the coordinator's
alpha-OS and KR-alpha factor it once with SuperLU and a ``linear`` module multiplies with it.
Errors are :class:`MatrixError` with one line naming the file, never its contents.  SciPy is imported
when a matrix is read (a site that only describes its configuration never loads it).
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

SPARSE_SUFFIXES = (".mtx", ".npz")
FORMATS = "a CSV, Matrix Market .mtx or scipy.sparse .npz file"


class MatrixError(ValueError):
    """A matrix file that cannot be read, or a matrix of the wrong shape or with non-finite entries."""


def is_sparse_file(path: Path | str) -> bool:
    return Path(path).suffix.lower() in SPARSE_SUFFIXES


def is_sparse(matrix: Any) -> bool:
    """A scipy.sparse matrix (without importing SciPy: none can exist before it is imported)."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(matrix)


def read(path: Path) -> Any:
    """The matrix in ``path``: sparse (CSR) for ``.mtx`` and ``.npz``, dense for CSV rows."""
    import scipy.io
    import scipy.sparse as sp

    suffix = path.suffix.lower()
    try:
        if suffix == ".mtx":
            return sp.csr_matrix(scipy.io.mmread(path), dtype=float)
        if suffix == ".npz":
            return sp.csr_matrix(sp.load_npz(path), dtype=float)
        return np.loadtxt(path, delimiter=",", ndmin=2)
    except (OSError, ValueError, TypeError, KeyError, EOFError, zipfile.BadZipFile) as exc:  # their messages may quote the file: name it only
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise MatrixError(f"{path} is not a readable matrix ({reason}); give {FORMATS}") from None


def square(matrix: Any, n: int, key: str) -> Any:
    """``matrix`` as an n x n float matrix (kept sparse if it is), refused if it is another shape or not finite."""
    sparse = is_sparse(matrix)
    out = matrix.tocsr().astype(float) if sparse else np.asarray(matrix, dtype=float)
    if out.shape != (n, n):
        raise MatrixError(f"{key} must be {n}x{n} (one row per DOF), got shape {out.shape}")
    if not np.all(np.isfinite(out.data if sparse else out)):
        raise MatrixError(f"{key} has non-finite entries")
    return out


def asymmetry(matrix: Any) -> float:
    """max |A - A^T| / max |A| (0 for a zero matrix)."""
    difference = abs(matrix - matrix.T)
    top = float(abs(matrix).max()) if (matrix.nnz if is_sparse(matrix) else matrix.size) else 0.0
    return float(difference.max()) / top if top else 0.0


def place(block: Any, index: np.ndarray, n: int) -> Any:
    """A block over the DOFs ``index`` as a sparse n x n matrix (zero elsewhere)."""
    import scipy.sparse as sp

    selection = sp.csr_matrix((np.ones(index.size), (index, np.arange(index.size))), shape=(n, index.size))
    return (selection @ sp.csr_matrix(block) @ selection.T).tocsr()
