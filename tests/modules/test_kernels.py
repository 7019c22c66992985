"""hybridsim.modules.kernels: compiled kernels, cached on disk where a cache can be written, in memory otherwise."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
from numba.core import caching

from hybridsim.modules.kernels import inlined, kernel

REPOSITORY = Path(__file__).resolve().parents[2]


def _weighted_sum(weights: np.ndarray, values: np.ndarray) -> float:
    total = 0.0
    for i in range(values.size):
        total += weights[i] * values[i]
    return total


def test_a_kernel_computes_what_the_python_function_does() -> None:
    compiled = kernel(_weighted_sum)
    assert compiled(np.array([0.5, -2.0, 4.0]), np.array([2.0, 0.25, 0.125])) == 1.0  # 1 - 0.5 + 0.5, exact
    assert not isinstance(compiled._cache, caching.NullCache)  # the source folder is writable: cached on disk


_piece = inlined(_weighted_sum)


def _twice_the_piece(weights: np.ndarray, values: np.ndarray) -> float:
    return 2.0 * _piece(weights, values)


def test_an_inlined_piece_computes_the_same_inside_a_kernel_and_alone() -> None:
    weights, values = np.array([0.5, -2.0, 4.0]), np.array([2.0, 0.25, 0.125])
    assert kernel(_twice_the_piece)(weights, values) == 2.0 and _piece(weights, values) == 1.0
    assert not isinstance(_piece._cache, caching.NullCache)


def test_without_a_writable_cache_the_kernel_compiles_in_memory(tmp_path: Path) -> None:
    """A read-only install: no __pycache__ folder can be made beside the source, no user cache, no NUMBA_CACHE_DIR."""
    (tmp_path / "kernel_user.py").write_text(textwrap.dedent("""
        from hybridsim.modules.kernels import kernel

        @kernel
        def twice(x):
            return 2.0 * x
    """))
    (tmp_path / "__pycache__").write_text("a file where numba wants its cache folder")
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPOSITORY}", "XDG_CACHE_HOME": str(blocked / "cache"),
           "HOME": str(blocked), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", "import kernel_user as k; print(k.twice(1.25), type(k.twice._cache).__name__)"],
                         env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2.5", "NullCache"]
