"""Causal digital filters for compensators: direct form II, one sample per call.

``free_response()`` is the output the next sample would have with a zero
input (the state's contribution z), so ``advance(x)`` returns b0 x + z; an
algebraic loop through the filter (RLS-AC, maRTHS §11.4) can be solved
with it before the input is known.
"""

from __future__ import annotations

from collections.abc import Sequence

import scipy.signal


def butterworth(order: int, cutoff: float, sample_rate: float) -> tuple[list[float], list[float]]:
    """(b, a) of a digital low-pass Butterworth filter, cutoff in Hz (scipy's bilinear design)."""
    b, a = scipy.signal.butter(order, cutoff / (sample_rate / 2))
    return [float(v) for v in b], [float(v) for v in a]


class DirectFormII:
    """y(k) = sum b_i w(k-i), w(k) = x(k) - sum_{i>=1} a_i w(k-i), a_0 = 1, from zero state."""

    def __init__(self, b: Sequence[float], a: Sequence[float]) -> None:
        if len(b) != len(a) or a[0] != 1.0:
            raise ValueError("direct form II needs len(b) == len(a) and a[0] == 1")
        self.b = [float(v) for v in b]
        self.a = [float(v) for v in a]
        self._a_tail, self._b_tail = self.a[1:], self.b[1:]
        self.w = [0.0] * (len(a) - 1)
        """w(k-1), w(k-2), ...: the delay line"""
        self._settle()

    @property
    def b0(self) -> float:
        return self.b[0]

    def _settle(self) -> None:
        """Precompute the state's contributions: -sum a_i w(k-i) and the free response z.

        Plain loops in the order of the sums (this runs twice per sample per actuator)."""
        feedback = free = 0.0
        for ai, bi, wi in zip(self._a_tail, self._b_tail, self.w):
            feedback += ai * wi
            free += bi * wi
        self._feedback = -feedback
        self._free = self.b[0] * self._feedback + free

    def free_response(self) -> float:
        """z(k): the output of this sample for a zero input."""
        return self._free

    def advance(self, x: float) -> float:
        """Filter one sample: y(k) = b0 x(k) + z(k); the delay line moves on."""
        y = self.b[0] * x + self._free
        self.w = [x + self._feedback] + self.w[:-1]
        self._settle()
        return y

    def state(self) -> list[float]:
        return list(self.w)

    def set_state(self, state: list[float]) -> None:
        self.w = [float(v) for v in state]
        self._settle()
