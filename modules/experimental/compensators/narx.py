"""NARX model-based compensation, re-identified every sample over a sliding window (COMPENSATORS.md).

Command (order j, optional second-order product terms):

    x_c[n] = sum_{k=0..j} alpha_k x_t[n-k] + sum_{(p,q)} alpha_pq x_t[n-p] x_t[n-q]

Identification at sample n, from the commands already sent and the
(low-pass filtered) measured displacements, i = 1..L:

    x_c[n-i] = sum_k alpha_k x_m[n-i-k] + sum_{(p,q)} alpha_pq x_m[n-i-p] x_m[n-i-q],

D alpha = y solved by ordinary least squares, alpha = (D^T D)^-1 D^T y, or
ridge regression, alpha = (D^T D + gamma I)^-1 D^T y.  Previous commands are
not regressors.  The normal equations over the window are kept up to date
row by row (add the newest, drop the oldest), so a sample costs O(p^2) for
the update and O(p^3) for the p x p solve, whatever L is.  Until the window
holds L rows the initial parameters are used (default: x_c = x_t); rows
start once every regressor is a measured sample (no fit on the zero history
before the first sample).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hybridsim.modules.config_schema import Flag, Integer, Key, Number, Numbers, Schema
from hybridsim.modules.experimental.compensators.base import Compensator
from hybridsim.modules.experimental.compensators.filters import DirectFormII, butterworth
from hybridsim.modules.experimental.compensators.fir import TapLine

FILTER_ORDER = 5
FILTER_CUTOFF_HZ = 6.0
"""the Butterworth low-pass on the measurement before it enters the regression"""


def measurement_filter(sample_rate: float) -> tuple[list[float], list[float]]:
    """(b, a) of the NARX measurement filter (Butterworth, 5th order, 6 Hz) at ``sample_rate`` (Hz)."""
    return butterworth(FILTER_ORDER, FILTER_CUTOFF_HZ, sample_rate)


@dataclass(frozen=True)
class Terms:
    """The regressors of a NARX model: lags 0..order, then the products x[n-p] x[n-q] (p <= q)."""

    order: int
    products: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if self.order < 0:
            raise ValueError(f"NARX: the order must be >= 0, got {self.order}")
        for pair in self.products:
            if len(pair) != 2 or not 0 <= pair[0] <= pair[1]:
                raise ValueError(f"NARX: a product term is a pair of lags (p, q) with 0 <= p <= q, got {pair}")
        if len(set(self.products)) != len(self.products):
            raise ValueError("NARX: each product term may appear once")

    @property
    def size(self) -> int:
        return self.order + 1 + len(self.products)

    @property
    def lags(self) -> int:
        """Taps needed: the largest lag + 1."""
        return max([self.order, *(q for _, q in self.products)]) + 1

    def of(self, taps: np.ndarray) -> np.ndarray:
        """The regressor row for the taps [x[n], x[n-1], ...] (at least ``lags`` of them)."""
        row = np.empty(self.size)
        row[: self.order + 1] = taps[: self.order + 1]
        for i, (p, q) in enumerate(self.products, start=self.order + 1):
            row[i] = taps[p] * taps[q]
        return row

    def labels(self) -> list[str]:
        """Readable names of the terms, in parameter order: x[n], x[n-1], ..., x[n-1]*x[n-2], ..."""
        def lag(k: int) -> str:
            return "x[n]" if k == 0 else f"x[n-{k}]"
        return [lag(k) for k in range(self.order + 1)] + [f"{lag(p)}*{lag(q)}" for p, q in self.products]


class CompensatedSum:
    """A running sum of arrays with Neumaier compensation: its error stays ~eps * |sum| however many terms.

    A sliding window adds every row once and removes it later; plain float
    sums keep the rounding of the large rows long after they left the window.
    """

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.total = np.zeros(shape)
        self.carry = np.zeros(shape)

    def add(self, term: np.ndarray) -> None:
        total = self.total + term
        big = np.abs(self.total) >= np.abs(term)
        self.carry += np.where(big, (self.total - total) + term, (term - total) + self.total)
        self.total = total

    @property
    def value(self) -> np.ndarray:
        return self.total + self.carry


class SlidingNormalEquations:
    """The moments of [d, y] over the last ``window`` rows: D^T D, D^T y and y^T y, O(p^2) per row."""

    def __init__(self, size: int, window: int) -> None:
        if window <= size:
            raise ValueError(f"NARX: the window L = {window} must exceed the number of parameters ({size})")
        self.window = window
        self.rows = np.zeros((window, size + 1))
        """ring buffer of [d, y]"""
        self.count = 0
        """rows pushed since the start"""
        self.moments = CompensatedSum((size + 1, size + 1))
        """[[D^T D, D^T y], [y^T D, y^T y]]"""

    @property
    def full(self) -> bool:
        return self.count >= self.window

    def push(self, row: np.ndarray, value: float) -> None:
        slot = self.count % self.window
        if self.full:
            old = self.rows[slot]
            self.moments.add(-np.outer(old, old))
        new = np.append(row, value)
        self.moments.add(np.outer(new, new))
        self.rows[slot] = new
        self.count += 1

    def gram(self) -> np.ndarray:
        """D^T D."""
        return self.moments.value[:-1, :-1]

    def moment(self) -> np.ndarray:
        """D^T y."""
        return self.moments.value[:-1, -1]

    def rms(self) -> float:
        """sqrt(y^T y / L): the root mean square of the regressand over the window."""
        return float(np.sqrt(max(self.moments.value[-1, -1], 0.0) / self.window))

    def solve(self, ridge: float = 0.0) -> np.ndarray:
        """(D^T D + ridge I)^-1 D^T y (LU; raises numpy.linalg.LinAlgError if exactly singular)."""
        value = self.moments.value
        size = value.shape[0] - 1
        return np.linalg.solve(value[:-1, :-1] + ridge * np.eye(size), value[:-1, -1])

    def state(self) -> dict[str, Any]:
        return {"rows": self.rows.tolist(), "count": self.count, "total": self.moments.total.tolist(),
                "carry": self.moments.carry.tolist()}

    def set_state(self, state: dict[str, Any]) -> None:
        self.rows = np.array(state["rows"], float)
        self.count = int(state["count"])
        self.moments.total = np.array(state["total"], float)
        self.moments.carry = np.array(state["carry"], float)


class NarxCompensator(Compensator):
    """NARX compensation of ``terms`` over a window of ``window`` samples, OLS (``ridge`` = 0) or ridge.

    ``measurement_filter`` is (b, a) of the low-pass on the measurement
    (see :func:`measurement_filter`), or None for none.  Options beyond the
    definition (off by default):

    - ``filter_command``: the same filter on the commands before they enter
      the regression, as RLS-AC does (SPEC §11.1), so the inverse model is
      the plant's alone: with the measurement filtered on one side only it
      is the inverse of plant *and* filter, and the command leads by the
      filter's delay too;
    - ``excitation``: re-estimate only while the RMS of the regressand over
      the window is at least this (loop units); below it (a rest period with
      sensor noise only) the parameters are held.

    ``initial`` are the parameters used until the window is full (default:
    command = target).  If the normal equations are exactly singular the
    previous parameters stay.  Units: those of the loop (mm in the
    benchmark); ``ridge`` is in their square.
    """

    CONFIG = Schema("NARX compensation", "A NARX model of the inverse plant over a sliding window (loop units).", {
        "order": Key(Integer(1), "linear order (lags)", required=True),
        "window": Key(Integer(1, unit="samples"), "sliding window length L", required=True),
        "ridge": Key(Number("loop units^2", 0), "ridge parameter gamma", default=0.0),
        "products": Key(Numbers("", (2,), Integer(0), empty=True), "second-order product terms [[p, q], ...]"),
        "filter_b": Key(Numbers("", (1,)), "measurement filter numerator (with filter_a)"),
        "filter_a": Key(Numbers("", (1,)), "measurement filter denominator (with filter_b)"),
        "filter_command": Key(Flag(), "filter the commands the same way", default=False),
        "excitation": Key(Number("loop units", 0), "hold the parameters while the window's RMS is below this",
                          default=0.0),
        "initial": Key(Numbers("", (1,)), "initial parameters (default: pass-through)"),
    })
    name = "narx"

    def __init__(self, terms: Terms, window: int, ridge: float = 0.0,
                 measurement_filter: tuple[Sequence[float], Sequence[float]] | None = None,
                 filter_command: bool = False, excitation: float = 0.0,
                 initial: Sequence[float] | None = None) -> None:
        if not ridge >= 0:
            raise ValueError(f"NARX: the ridge parameter gamma must be >= 0, got {ridge}")
        if not excitation >= 0:
            raise ValueError(f"NARX: the excitation threshold must be >= 0, got {excitation}")
        if filter_command and measurement_filter is None:
            raise ValueError("NARX: filter_command needs a measurement filter to apply to the commands")
        self.terms = terms
        self.ridge = float(ridge)
        self.excitation = float(excitation)
        self.normal = SlidingNormalEquations(terms.size, window)
        self.filter = None if measurement_filter is None else DirectFormII(*measurement_filter)
        self.command_filter = DirectFormII(*measurement_filter) if filter_command else None
        if initial is None:
            self.initial = np.zeros(terms.size)
            self.initial[0] = 1.0
        else:
            self.initial = np.array(initial, float)
            if self.initial.shape != (terms.size,):
                raise ValueError(f"NARX: {terms.size} initial parameters needed, got {self.initial.size}")
        self.alpha = self.initial.copy()
        self.targets = TapLine(terms.lags)
        self.measured = TapLine(terms.lags)
        """filtered measurement, newest first"""
        self.regressand = 0.0
        """the last command (filtered if ``filter_command``): y of the next row"""
        self.samples = 0
        """calls so far"""

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> NarxCompensator:
        """``order``, ``window``; optional ``ridge``, ``products`` ([[p, q], ...]), ``filter_b`` and
        ``filter_a`` (the measurement filter), ``filter_command``, ``excitation``, ``initial``."""
        try:
            terms = Terms(int(table["order"]), tuple(tuple(int(v) for v in pair) for pair in table.get("products", ())))
            window = int(table["window"])
        except KeyError as exc:
            raise ValueError(f"compensator 'narx' needs {exc.args[0]!r}") from None
        if ("filter_b" in table) != ("filter_a" in table):
            raise ValueError("compensator 'narx': give both filter_b and filter_a, or neither (no filter)")
        filt = (table["filter_b"], table["filter_a"]) if "filter_b" in table else None
        return cls(terms, window, float(table.get("ridge", 0.0)), filt, bool(table.get("filter_command", False)),
                   float(table.get("excitation", 0.0)), table.get("initial"))

    @property
    def window(self) -> int:
        return self.normal.window

    def command(self, target: float, measured: float) -> float:
        filtered = measured if self.filter is None else self.filter.advance(measured)
        if self.samples >= self.terms.lags:  # the row i = 1: x_c[n-1] from x_m[n-1], x_m[n-2], ...
            self.normal.push(self.terms.of(self.measured.taps), self.regressand)
        self.measured.push(filtered)
        if self.normal.full and self.normal.rms() >= self.excitation:
            try:
                self.alpha = self.normal.solve(self.ridge)
            except np.linalg.LinAlgError:
                pass
        command = float(self.alpha @ self.terms.of(self.targets.push(target)))
        self.regressand = command if self.command_filter is None else self.command_filter.advance(command)
        self.samples += 1
        return command

    def parameters(self) -> np.ndarray:
        return self.alpha.copy()

    def state(self) -> dict[str, Any]:
        return {"alpha": self.alpha.tolist(), "regressand": self.regressand, "samples": self.samples,
                "targets": self.targets.state(), "measured": self.measured.state(), "normal": self.normal.state(),
                "filter": None if self.filter is None else self.filter.state(),
                "command_filter": None if self.command_filter is None else self.command_filter.state()}

    def set_state(self, state: dict[str, Any]) -> None:
        self.alpha = np.array(state["alpha"], float)
        self.regressand = float(state["regressand"])
        self.samples = int(state["samples"])
        self.targets.set_state(state["targets"])
        self.measured.set_state(state["measured"])
        self.normal.set_state(state["normal"])
        if self.filter is not None:
            self.filter.set_state(state["filter"])
        if self.command_filter is not None:
            self.command_filter.set_state(state["command_filter"])
