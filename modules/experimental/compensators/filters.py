"""Causal digital filters for compensators: direct form II, one sample per call.

``free_response()`` is the output the next sample would have with a zero
input (the state's contribution z), so ``advance(x)`` returns b0 x + z; an
algebraic loop through the filter (RLS-AC, maRTHS §11.4) can be solved
with it before the input is known.  The per-sample arithmetic is in two
compiled kernels, :func:`df2_free_response` and :func:`df2_advance`, which
other compiled kernels (RLS-AC) call on a filter's arrays directly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hybridsim.modules.kernels import dot, kernel


def butterworth(order: int, cutoff: float, sample_rate: float) -> tuple[list[float], list[float]]:
    """(b, a) of a digital low-pass Butterworth filter, cutoff in Hz (scipy's bilinear design)."""
    import scipy.signal  # here: 0.9 s of imports that describing a site's configuration does not need
    b, a = scipy.signal.butter(order, cutoff / (sample_rate / 2))
    return [float(v) for v in b], [float(v) for v in a]


@kernel
def _feedback(a: np.ndarray, w: np.ndarray) -> float:
    """-sum_{i>=1} a_i w(k-i): the state's part of w(k)."""
    return -dot(a[1:], w)


@kernel
def df2_free_response(b: np.ndarray, a: np.ndarray, w: np.ndarray) -> float:
    """z(k) = b0 (-sum a_i w(k-i)) + sum_{i>=1} b_i w(k-i): the output of this sample for a zero input."""
    return b[0] * _feedback(a, w) + dot(b[1:], w)


@kernel
def df2_advance(b: np.ndarray, a: np.ndarray, w: np.ndarray, x: float) -> float:
    """Filter one sample in place: y(k) = b0 x(k) + z(k); the delay line ``w`` moves on."""
    y = b[0] * x + df2_free_response(b, a, w)
    head = x + _feedback(a, w)
    for i in range(w.size - 1, 0, -1):
        w[i] = w[i - 1]
    if w.size:
        w[0] = head
    return y


class DirectFormII:
    """y(k) = sum b_i w(k-i), w(k) = x(k) - sum_{i>=1} a_i w(k-i), a_0 = 1, from zero state."""

    def __init__(self, b: Sequence[float], a: Sequence[float]) -> None:
        if len(b) != len(a) or a[0] != 1.0:
            raise ValueError("direct form II needs len(b) == len(a) and a[0] == 1")
        self.b = np.array(b, float)
        self.a = np.array(a, float)
        self.w = np.zeros(len(a) - 1)
        """w(k-1), w(k-2), ...: the delay line"""

    @property
    def b0(self) -> float:
        return float(self.b[0])

    def free_response(self) -> float:
        """z(k): the output of this sample for a zero input."""
        return df2_free_response(self.b, self.a, self.w)

    def advance(self, x: float) -> float:
        """Filter one sample: y(k) = b0 x(k) + z(k); the delay line moves on."""
        return df2_advance(self.b, self.a, self.w, float(x))

    def state(self) -> list[float]:
        return self.w.tolist()

    def set_state(self, state: list[float]) -> None:
        w = np.array(state, float)
        if w.shape != self.w.shape:
            raise ValueError(f"direct form II: expected {self.w.size} delay-line values, got {w.size}")
        self.w = w
