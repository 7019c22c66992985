"""The integrity indicators on the monitor: the run's per-step indicator datasets the frames carry, each with its
declared threshold and action, and the first step each passes its threshold.

The datasets are the integrity monitor's (:mod:`hybridsim.coordinator.integrity.columns`): written into each
step's row before the row is queued, they reach the frames as the rows do, from the run's window or the results
file.  A threshold is compared as the monitor compares it (docs/integrity.md): with the value of a dataset of one
number a step (the energy error E_err / E_in), with the largest |value| over the columns otherwise (|TI| and
|tau| over the site's DOFs), first past it when greater.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hybridsim.coordinator.integrity.columns import BALANCE, BALANCE_TERMS
from hybridsim.coordinator.integrity.rules import Rule
from hybridsim.v1 import monitor_pb2 as pb

PREFIX = "integrity/"
UNITS = {"balance": "J", "energy_error": "1", "tracking": "m^2, rad^2", "delay": "s"}
"""each indicator's unit (tracking: m^2 for a translation, rad^2 for a rotation), in the order shown"""


@dataclass(frozen=True)
class IndicatorLayout:
    """One indicator dataset as the monitor shows it."""

    dataset: str
    module: str
    """the watched module; "" for the whole structure"""
    indicator: str
    columns: tuple[str, ...]
    """the balance's terms, the module's DOFs, or one "" for one number a step"""
    threshold: float | None = None
    action: str = ""

    @property
    def unit(self) -> str:
        return UNITS.get(self.indicator, "")


def indicator_layouts(arrays: Mapping[str, np.ndarray], rules: Mapping[str, Rule],
                      module_dofs: Mapping[str, Sequence[str]]) -> tuple[IndicatorLayout, ...]:
    """The indicator datasets among ``arrays`` (a run's window or a results file's datasets), with the ``rules``
    of the experiment's [integrity] and each module's DOF names."""
    out = []
    for key in (k for k in arrays if k.startswith(PREFIX)):  # (a window's order, or a file's alphabetical one)
        parts = key.split("/")
        module, indicator = (parts[2], parts[3]) if parts[1] == "modules" else ("", parts[1])
        shape = arrays[key].shape  # (a window's column, or a file's array)
        named = tuple(BALANCE_TERMS if key == BALANCE else module_dofs.get(module, ()))
        columns = (("",) if len(shape) == 1 else named if len(named) == shape[1] else  # (else another layout's)
                   tuple(f"{module or indicator}#{i}" for i in range(shape[1])))
        rule = rules.get(module)
        threshold = None if rule is None else rule.thresholds.get(indicator)
        out.append(IndicatorLayout(key, module, indicator, tuple(columns), threshold,
                                   "" if threshold is None or rule is None else rule.action))
    order = list(UNITS)
    return tuple(sorted(out, key=lambda i: (i.module, order.index(i.indicator) if i.indicator in order else len(order))))


class Crossings:
    """The first step past its threshold of every indicator that has one, found over every row seen."""

    def __init__(self, layouts: Sequence[IndicatorLayout]) -> None:
        self._waiting = [i for i in layouts if i.threshold is not None]
        self.found: list[pb.Crossing] = []

    def observe(self, arrays: Mapping[str, np.ndarray], start: int, stop: int) -> None:
        """Rows ``start .. stop-1`` (row 0, the state at t = 0, is no step and compared with nothing)."""
        start = max(start, 1)
        if stop <= start:
            return
        read = [(i, np.asarray(arrays[i.dataset][start:stop], float)) for i in self._waiting]  # all before any kept
        for indicator, values in read:
            compared = values if values.ndim == 1 else np.max(np.abs(values), axis=1)
            past = np.flatnonzero(compared > indicator.threshold)
            if past.size:
                n = start + int(past[0])
                self._waiting.remove(indicator)
                self.found.append(pb.Crossing(module=indicator.module, indicator=indicator.indicator,
                                              value=float(compared[past[0]]), threshold=indicator.threshold,
                                              step=n, time_s=float(arrays["time"][n]), action=indicator.action))
        self.found.sort(key=lambda c: c.step)


def indicator_info(layouts: Sequence[IndicatorLayout]) -> list[pb.Indicator]:
    """The RunInfo's description of ``layouts``."""
    return [pb.Indicator(dataset=i.dataset, module=i.module, indicator=i.indicator, columns=i.columns, unit=i.unit,
                         action=i.action, **({} if i.threshold is None else {"threshold": i.threshold}))
            for i in layouts]


def indicator_rows(arrays: Mapping[str, np.ndarray], layouts: Sequence[IndicatorLayout], rows: np.ndarray
                   ) -> np.ndarray:
    """The indicators at ``rows``: samples x every column of ``layouts``, row-major (empty without any)."""
    if not layouts:
        return np.zeros(0)
    return np.hstack([np.asarray(arrays[i.dataset][rows], float).reshape(rows.size, -1) for i in layouts]).ravel()
