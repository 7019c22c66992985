"""A log of rows that a long run streams away: the rows stored elsewhere are forgotten, in place.

A site's per-sample record, its clock's records and a plant's DAQ log grow one row per sample and are
collected in blocks (docs/step_loop.md).  Kept as a list of small arrays, or rebuilt at every
collection, such a log leaves the heap fragmented: the freed blocks sit between objects allocated
meanwhile and the process's resident memory creeps up (1.4 MB per 100,000 steps in a plant daemon).
:class:`RowLog` is one array that doubles when full, never shrinks, and moves the rows it keeps to its
start when it forgets: once it has grown to hold two collections it allocates nothing more.
"""

from __future__ import annotations

import numpy as np


class RowLog:
    """Rows of ``width`` floats numbered 0, 1, .., held from row :attr:`first` to :attr:`rows` - 1 (unwritten
    rows between written ones are NaN)."""

    def __init__(self, width: int, capacity: int = 1024) -> None:
        self.values = np.full((capacity, width), np.nan)
        self.first = 0
        """the first row held (the ones before are forgotten)"""
        self.held = 0
        """rows held"""

    @property
    def rows(self) -> int:
        """one past the last row held (the next row appended)"""
        return self.first + self.held

    def at(self, k: int) -> np.ndarray:
        """Row k (k >= :attr:`first`) to write into; the log grows to hold it."""
        row = k - self.first
        if row < 0:
            raise ValueError(f"row log: rows before {self.first} were stored and forgotten, not {k}")
        if row >= self.values.shape[0]:
            grown = np.full((max(2 * self.values.shape[0], row + 1), self.values.shape[1]), np.nan)
            grown[: self.held] = self.values[: self.held]
            self.values = grown
        self.held = max(self.held, row + 1)
        return self.values[row]

    def write(self, k: int, rows: np.ndarray) -> None:
        """Rows k .. k + len(rows) - 1 at once (those before :attr:`first` are not this log's: skipped)."""
        skip = max(self.first - k, 0)
        if skip < len(rows):
            self.at(k + len(rows) - 1)
            self.values[k + skip - self.first: k + len(rows) - self.first] = rows[skip:]

    def append(self, *row: float) -> None:
        self.at(self.rows)[:] = row

    def last(self) -> np.ndarray:
        """The last row held."""
        return self.values[self.held - 1]

    def truncate(self, stop: int) -> None:
        """Drop the rows from ``stop`` on (not below :attr:`first`)."""
        keep = min(max(stop - self.first, 0), self.held)
        self.values[keep: self.held] = np.nan
        self.held = keep

    def head(self, stop: int | None = None, start: int | None = None) -> np.ndarray:
        """Rows ``start`` (default :attr:`first`) .. ``stop`` - 1 (default: all held), as a copy."""
        start = self.first if start is None else start
        stop = self.rows if stop is None else stop
        if start < self.first:
            raise ValueError(f"row log: rows before {self.first} were stored and forgotten, not {start}")
        return self.values[start - self.first: max(stop, start) - self.first].copy()

    def forget(self, below: int, keep: int = 0) -> None:
        """Drop the rows before ``below`` (also rows not written yet: the next row is then ``below``), keeping at
        least the last ``keep`` rows."""
        drop = below - self.first
        if keep:
            drop = min(drop, self.held - keep)
        if drop <= 0:
            return
        kept = max(self.held - drop, 0)
        for row in range(0, kept, drop):  # in pieces that do not overlap: numpy copies nothing aside
            piece = min(drop, kept - row)
            self.values[row: row + piece] = self.values[drop + row: drop + row + piece]
        self.values[kept: self.held] = np.nan
        self.first += drop
        self.held = kept

    def restart(self, at: int) -> None:
        """Hold nothing; the next row is ``at``."""
        self.values[: self.held] = np.nan
        self.first, self.held = at, 0
