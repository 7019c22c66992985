"""Constant FIR compensation on the tapped target: x_c[n] = sum_k w_k x_t[n-k].

The fixed-parameter compensators (inverse compensation, polynomial
extrapolation) are this map with weights derived once from an assumed
delay; :class:`TapLine` is the tapped delay line they and NARX share.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hybridsim.modules.experimental.compensators.base import Compensator


class TapLine:
    """The last ``length`` samples of a signal, newest first, zero before the first sample."""

    def __init__(self, length: int) -> None:
        if length < 1:
            raise ValueError(f"a tap line needs at least one tap, got {length}")
        self.taps = np.zeros(length)

    def push(self, value: float) -> np.ndarray:
        """Shift ``value`` in as x[n]; returns [x[n], x[n-1], ...] (the line itself: copy to keep it)."""
        self.taps[1:] = self.taps[:-1]
        self.taps[0] = value
        return self.taps

    def state(self) -> list[float]:
        return self.taps.tolist()

    def set_state(self, state: Sequence[float]) -> None:
        taps = np.array(state, float)
        if taps.shape != self.taps.shape:
            raise ValueError(f"tap line: expected {self.taps.size} taps, got {taps.size}")
        self.taps = taps


class FixedFir(Compensator):
    """x_c[n] = w . [x_t[n], x_t[n-1], ...] with weights that never change; the measurement is not used."""

    name = "fir"

    def __init__(self, weights: Sequence[float]) -> None:
        self.weights = np.array(weights, float)
        if self.weights.ndim != 1 or self.weights.size == 0 or not np.all(np.isfinite(self.weights)):
            raise ValueError(f"{self.name}: the weights must be a non-empty vector of finite numbers")
        self.targets = TapLine(self.weights.size)

    def command(self, target: float, measured: float) -> float:
        return float(self.weights @ self.targets.push(target))

    def parameters(self) -> np.ndarray:
        return self.weights.copy()

    def state(self) -> dict[str, Any]:
        return {"targets": self.targets.state()}

    def set_state(self, state: dict[str, Any]) -> None:
        self.targets.set_state(state["targets"])
