"""Inverse compensation (IC) with constant parameters from an assumed delay (COMPENSATORS.md).

x_c[n] = a0 x_t[n] + a1 x_t[n-1],  a0 = 1 + tau/dt,  a1 = 1 - a0 = -tau/dt.

It is the exact inverse of a first-order actuator tau x' + x = u discretised
by backward differences, x[n] = (tau x[n-1] + dt u[n]) / (tau + dt), and a
linear extrapolation of the target by tau.  The parameters never change, so
the result depends on how good the assumed delay tau is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridsim.modules.config_schema import Key, Number, Schema
from hybridsim.modules.experimental.compensators.fir import FixedFir


class InverseCompensation(FixedFir):
    """IC with ``a0`` (a1 = 1 - a0); build it from a delay with :meth:`from_delay`."""

    name = "inverse"

    def __init__(self, a0: float) -> None:
        super().__init__((a0, 1.0 - a0))

    CONFIG = Schema("inverse compensation", "Inverse compensation of an assumed delay: a0, or delay and "
                    "sample_period.", {
                        "a0": Key(Number(""), "the command weight a0 (a1 = 1 - a0)"),
                        "delay": Key(Number("s", 0), "assumed actuator delay"),
                        "sample_period": Key(Number("s", 0, open_minimum=True), "control sample"),
                    }, at_most_one=(("a0", "delay"),))

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> InverseCompensation:
        """``a0``, or ``delay`` (s) and ``sample_period`` (s)."""
        if "a0" in table:
            return cls(float(table["a0"]))
        try:
            return cls.from_delay(float(table["delay"]), float(table["sample_period"]))
        except KeyError as exc:
            raise ValueError(f"compensator 'inverse' needs 'a0', or 'delay' and 'sample_period' "
                             f"(missing {exc.args[0]!r})") from None

    @classmethod
    def from_delay(cls, delay: float, sample_period: float) -> InverseCompensation:
        """IC for an assumed actuator delay ``delay`` (s) at the control period ``sample_period`` (s)."""
        if not delay >= 0 or not sample_period > 0:
            raise ValueError(f"inverse compensation: the delay must be >= 0 s and the sample period > 0 s, "
                             f"got {delay} and {sample_period}")
        return cls(1.0 + delay / sample_period)

    @property
    def a0(self) -> float:
        return float(self.weights[0])

    @property
    def a1(self) -> float:
        return float(self.weights[1])
