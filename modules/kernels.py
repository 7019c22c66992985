"""Compiled per-sample kernels: what a lab's real-time controller runs every control sample.

:func:`kernel` is numba's ``njit`` with the machine code cached on disk
(beside the source, or in ``NUMBA_CACHE_DIR``), so a process loads a kernel
in milliseconds instead of compiling it.  Where no cache can be written (a
read-only install without ``NUMBA_CACHE_DIR``) each process compiles its
kernels in memory instead of failing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numba
import numpy as np

F = TypeVar("F", bound=Callable[..., object])


def kernel(function: F) -> F:
    """``function`` compiled in nopython mode on its first call, cached on disk where possible."""
    try:
        return numba.njit(cache=True)(function)
    except RuntimeError:  # numba: "cannot cache function ...: no locator available"
        return numba.njit(function)


def inlined(function: F) -> F:
    """A piece of a larger kernel, compiled into each kernel that calls it (numba's ``inline="always"``): the
    caller's first compilation is a quarter shorter than with a kernel of its own (the maRTHS tick, 8.9 s against
    11.6 s at load 4.6).  Called from Python it is a kernel like any other."""
    try:
        return numba.njit(cache=True, inline="always")(function)
    except RuntimeError:  # as in kernel: no cache locator
        return numba.njit(inline="always")(function)


@kernel
def dot(x: np.ndarray, y: np.ndarray) -> float:
    """sum_i x_i y_i in index order: the inner product the other kernels build on (over ``y``'s length)."""
    total = 0.0
    for i in range(y.size):
        total += x[i] * y[i]
    return total
