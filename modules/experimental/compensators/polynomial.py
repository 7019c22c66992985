"""Polynomial extrapolation of the target by a fixed delay (Horiuchi et al., 1999).

The polynomial of order p through the last p + 1 targets x_t[n], ..., x_t[n-p]
(one per control sample) is evaluated a delay tau ahead, at n + s with
s = tau/dt.  That is a constant FIR whose weights are the Lagrange basis
polynomials at s with nodes 0, -1, ..., -p:

    w_j = prod_{m != j} (s + m) / (m - j),   x_c[n] = sum_j w_j x_t[n-j],

exact for any target that is a polynomial of order <= p.  Order 1 is the
inverse compensation of the same delay.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Integer, Key, Number, Schema
from hybridsim.modules.experimental.compensators.fir import FixedFir

ORDERS = (1, 2, 3)


def extrapolation_weights(order: int, lead: float) -> np.ndarray:
    """Lagrange weights w_0..w_order for the value ``lead`` samples after the newest of order + 1 samples."""
    if order < 0:
        raise ValueError(f"polynomial order must be >= 0, got {order}")
    weights = np.ones(order + 1)
    for j in range(order + 1):
        for m in range(order + 1):
            if m != j:
                weights[j] *= (lead + m) / (m - j)
    return weights


class PolynomialExtrapolation(FixedFir):
    """Order 1..3 extrapolation of the target by ``delay`` (s) at the control period ``sample_period`` (s)."""

    name = "polynomial"

    CONFIG = Schema("polynomial extrapolation", "Horiuchi's polynomial extrapolation over the assumed delay.", {
        "order": Key(Integer(1, 3), "polynomial order", required=True),
        "delay": Key(Number("s", 0), "assumed actuator delay", required=True),
        "sample_period": Key(Number("s", 0, open_minimum=True), "control sample", required=True),
    })

    def __init__(self, order: int, delay: float, sample_period: float) -> None:
        if order not in ORDERS:
            raise ValueError(f"polynomial extrapolation: order must be one of {ORDERS}, got {order}")
        if not delay >= 0 or not sample_period > 0:
            raise ValueError(f"polynomial extrapolation: the delay must be >= 0 s and the sample period > 0 s, "
                             f"got {delay} and {sample_period}")
        self.order = order
        self.delay = float(delay)
        super().__init__(extrapolation_weights(order, delay / sample_period))

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> PolynomialExtrapolation:
        """``order`` (1..3), ``delay`` (s) and ``sample_period`` (s)."""
        try:
            return cls(int(table["order"]), float(table["delay"]), float(table["sample_period"]))
        except KeyError as exc:
            raise ValueError(f"compensator 'polynomial' needs {exc.args[0]!r}") from None
