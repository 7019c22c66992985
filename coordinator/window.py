"""The coordinator's bounded memory of a run: the last rows of the response, and running figures.

A run keeps what the integrator, the monitor, the results writer and the summary need, not its
history: the last :data:`WINDOW_ROWS` rows of every results dataset (a ring indexed by absolute
row), the peak displacement of every DOF and the step-time distributions.  Every row is in the
results file; :class:`hybridsim.coordinator.simulation.RunResult` reads the history back from it.
Memory per run is therefore independent of its length (a 1-DOF run: about 0.7 MB; maRTHS: about
10 MB).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

WINDOW_ROWS = 8192
"""rows a run keeps in memory (a power of two; at 1024 Hz the last 8 s): at least the rows the results
writer may still have queued (see :class:`hybridsim.coordinator.recorder.Recorder`) plus what a monitor
frame reads"""


def results_columns(ndof: int, modules: Mapping[str, int], components: int = 1, staged: bool = False
                    ) -> dict[str, int]:
    """Every per-step dataset of a results file and its width (0: one number per step); several excitation
    ``components`` add ``ground_components`` (one column each; ``ground_acceleration`` is the first's), a test
    program (``staged``) each row's ``stage`` (its index in [[stages]])."""
    columns = {"time": 0, "step_id": 0, "ground_acceleration": 0, "wall_step_s": 0,
               "displacement": ndof, "velocity": ndof, "acceleration": ndof, "restoring_force": ndof}
    if components > 1:
        columns["ground_components"] = components
    if staged:
        columns["stage"] = 0
    for name, width in modules.items():
        columns[f"modules/{name}/displacement"] = width
        columns[f"modules/{name}/force"] = width
    return columns


def segments(start: int, stop: int, capacity: int) -> Iterator[tuple[int, int, int]]:
    """(first row, first slot, count) of the contiguous pieces of rows ``start .. stop-1`` in a ring of
    ``capacity`` rows (a power of two; row n in slot ``n % capacity``)."""
    row = start
    while row < stop:
        slot = row & (capacity - 1)
        count = min(stop - row, capacity - slot)
        yield row, slot, count
        row += count


class RowWindow:
    """The last ``capacity`` rows of every results dataset; row n lives in slot ``n % capacity``.

    The step loop writes row n through :meth:`slot`; readers index by absolute row through
    :attr:`view` (``view["displacement"][rows]``), and a row that has left the window is an
    IndexError, never another row's values.
    """

    def __init__(self, columns: Mapping[str, int], modules: Mapping[str, int], capacity: int = WINDOW_ROWS) -> None:
        if capacity & (capacity - 1):
            raise ValueError(f"window capacity must be a power of two, not {capacity}")
        self.columns = dict(columns)
        self.capacity = capacity
        self._mask = capacity - 1
        self.arrays = {key: np.full((capacity, width) if width else capacity, 0,  # written: resident from the start
                                    dtype=np.int64 if key == "step_id" else float)
                       for key, width in self.columns.items()}
        self.modules = [(self.arrays[f"modules/{name}/displacement"], self.arrays[f"modules/{name}/force"])
                        for name in modules]
        self.counters: dict[str, dict[str, float]] = {}
        """per module, the event counters its step results carried, as they stand at the last row
        (:attr:`hybridsim.wire.contract.StepResult.counters`: a site clock's slowed steps, held and late samples)"""
        self.descriptions: dict[str, dict[str, Any]] = {}
        """per module, its description as the results file records it (``module_descriptions``: kind, DOF names)"""
        self.rows = 0
        """rows complete (absolute count: the next row to write is ``rows``)"""
        self.view = WindowView(self)

    def slot(self, row: int) -> int:
        return row & self._mask

    @property
    def first(self) -> int:
        """The oldest row still in the window."""
        return max(self.rows - self.capacity, 0)

    def segments(self, start: int, stop: int) -> Iterator[tuple[int, int, int]]:
        """(first row, first slot, count) of the contiguous pieces of rows ``start .. stop-1``."""
        return segments(start, stop, self.capacity)

    def load(self, stored: Mapping[str, np.ndarray], first: int, rows: int) -> None:
        """Fill rows ``first .. rows-1`` from arrays that hold exactly those rows (read from a results file)."""
        for row, slot, count in self.segments(max(first, rows - self.capacity), rows):
            for key, values in self.arrays.items():
                values[slot:slot + count] = stored[key][row - first:row - first + count]
        self.rows = rows


class WindowColumn:
    """One dataset of a :class:`RowWindow`, indexed by absolute row (int, slice or integer array)."""

    def __init__(self, window: RowWindow, key: str) -> None:
        self._window, self._values = window, window.arrays[key]
        self.shape = (window.rows,) + self._values.shape[1:]

    def __getitem__(self, index: int | slice | np.ndarray | tuple[Any, ...]) -> np.ndarray:
        if isinstance(index, tuple):  # (rows, columns...): the rows here, the rest on what they return
            rows, rest = index[0], index[1:]
            picked = self[rows]
            return picked[rest] if np.ndim(rows) == 0 and not isinstance(rows, slice) else picked[(slice(None),) + rest]
        window = self._window
        if isinstance(index, slice):
            index = np.arange(*index.indices(window.rows))
        rows = np.asarray(index)
        if rows.size and (rows.min() < window.first or rows.max() >= window.rows):
            raise IndexError(f"rows {rows.min()}..{rows.max()} are not all in the window "
                             f"{window.first}..{window.rows - 1} (the results file holds every row)")
        return self._values[rows & window._mask]


class WindowView(Mapping[str, WindowColumn]):
    """The window's datasets as a mapping of :class:`WindowColumn` (what step listeners receive)."""

    def __init__(self, window: RowWindow) -> None:
        self.window = window

    @property
    def first(self) -> int:
        """The oldest row still readable."""
        return self.window.first

    @property
    def counters(self) -> Mapping[str, Mapping[str, float]]:
        """Per module, its event counters as they stand at the last row (see :attr:`RowWindow.counters`)."""
        return self.window.counters

    @property
    def descriptions(self) -> Mapping[str, Mapping[str, Any]]:
        """Per module, its description (see :attr:`RowWindow.descriptions`)."""
        return self.window.descriptions

    def __getitem__(self, key: str) -> WindowColumn:
        return WindowColumn(self.window, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.window.arrays)

    def __len__(self) -> int:
        return len(self.window.arrays)


class Durations:
    """p50, p99 and max of a stream of durations (s) in constant memory.

    Counts fall in logarithmic bins 0.5 % wide from 100 ns to 1000 s (durations outside are counted
    in the end bins); a quantile is its bin's geometric centre (within 0.25 % of the exact value),
    the maximum is exact.
    """

    LOW_S = 1e-7
    WIDTH = 1.005
    BINS = int(math.log(1e3 / LOW_S) / math.log(WIDTH)) + 1

    def __init__(self) -> None:
        self.counts = [0] * self.BINS
        """per bin, the durations counted one at a time (a list: :meth:`add` runs every step)"""
        self.block_counts = np.zeros(self.BINS, dtype=np.int64)
        """per bin, the durations counted a block at a time (:meth:`extend`, in the step loop once a block is
        on disk: one bincount, no loop over the bins in Python, 10-20 times faster for a block of 1024)"""
        self.count = 0
        self.max = 0.0
        self._scale = 1.0 / math.log(self.WIDTH)

    def add(self, seconds: float) -> None:
        """Count one duration (s)."""
        index = int(math.log(seconds / self.LOW_S) * self._scale) if seconds > self.LOW_S else 0
        self.counts[min(index, self.BINS - 1)] += 1
        self.count += 1
        if seconds > self.max:
            self.max = seconds

    def extend(self, seconds: np.ndarray) -> None:
        """Count many durations (s)."""
        if seconds.size == 0:
            return
        index = np.zeros(seconds.size, dtype=np.int64)
        above = seconds > self.LOW_S
        index[above] = (np.log(seconds[above] / self.LOW_S) * self._scale).astype(np.int64)
        self.block_counts += np.bincount(np.minimum(index, self.BINS - 1), minlength=self.BINS)
        self.count += seconds.size
        self.max = max(self.max, float(seconds.max()))

    def quantiles_us(self) -> dict[str, float]:
        """p50, p99 and max in microseconds (zeros for no durations)."""
        if self.count == 0:
            return {"p50": 0.0, "p99": 0.0, "max": 0.0}
        cumulative = np.cumsum(self.block_counts + self.counts)
        out = {}
        for name, q in (("p50", 0.50), ("p99", 0.99)):
            index = int(np.searchsorted(cumulative, q * self.count))
            out[name] = 1e6 * min(self.LOW_S * self.WIDTH ** (index + 0.5), self.max)
        out["max"] = 1e6 * self.max
        return out


class Peaks:
    """The largest |displacement| of every DOF over the rows seen, and the time of its first occurrence."""

    def __init__(self, ndof: int) -> None:
        self.value = np.zeros(ndof)
        self.time = np.zeros(ndof)

    def observe(self, displacement: np.ndarray, time: np.ndarray) -> None:
        """Rows (steps x ndof) of displacement (m, rad) at ``time`` (s)."""
        if displacement.shape[0] == 0:
            return
        magnitude = np.abs(displacement)
        at = np.argmax(magnitude, axis=0)
        value = magnitude[at, np.arange(magnitude.shape[1])]
        larger = value > self.value
        self.value[larger] = value[larger]
        self.time[larger] = time[at[larger]]
