"""The memory the coordinator shares with its writer process: the ring of rows and the writer's activity board.

One mapping of a file in :data:`SHARED_DIR` (unlinked as soon as both sides have mapped it): first the
:data:`BOARD`, where the writer publishes when it writes, then one array per results dataset, of the window's
size and slots (row n in slot n mod capacity, see :class:`hybridsim.coordinator.window.RowWindow`).
"""

from __future__ import annotations

import mmap
import os
import tempfile
import time
from collections.abc import Sequence

import numpy as np

from hybridsim.coordinator.lateness import INTERVALS, Intervals

Layout = Sequence[tuple[str, tuple[int, ...], str]]
"""(dataset name, shape, dtype string) of every array of the ring"""

SHARED_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None
"""where the file of the rows shared with the writer is made (memory; None: the temporary folder)"""

BOARD = 3 + 2 * INTERVALS
"""float64 slots at the start of the shared memory where the writer publishes its activity: writes done,
their total time (s), the start of the current one (0 when idle), then the last INTERVALS (start, end)"""


class SharingError(Exception):
    """No memory to share the rows with the writer (one line)."""


def share(layout: Layout, prefix: str) -> tuple[str, np.ndarray, dict[str, np.ndarray]]:
    """Make the shared memory of ``layout``: the file's name (to unlink once the writer has mapped it), the
    board and the ring; every page allocated now (a page found missing later would be a SIGBUS)."""
    size = 8 * BOARD + sum(int(np.prod(shape)) * np.dtype(dtype).itemsize for _, shape, dtype in layout)
    folder = SHARED_DIR or tempfile.gettempdir()
    try:
        descriptor, name = tempfile.mkstemp(prefix=prefix, dir=folder)
    except OSError as exc:
        raise SharingError(_sharing_error(folder, size, exc)) from None
    try:
        os.posix_fallocate(descriptor, 0, size)
        board, ring = attach(mmap.mmap(descriptor, 0), layout)
    except OSError as exc:  # a full /dev/shm, a file-size limit (RLIMIT_FSIZE) below the ring
        os.unlink(name)
        raise SharingError(_sharing_error(folder, size, exc)) from None
    finally:
        os.close(descriptor)
    return name, board, ring


def _sharing_error(folder: str, size: int, exc: OSError) -> str:
    return (f"results file: no memory to share the rows with the writer process ({size} bytes in {folder}: "
            f"{exc.strerror}; free space or raise the limit, and resume)")


def attach(buffer: mmap.mmap, layout: Layout) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The activity board and the ring of rows (arrays of ``layout``) in ``buffer``."""
    board = np.ndarray((BOARD,), np.float64, buffer)
    arrays, offset = {}, board.nbytes
    for key, shape, dtype in layout:
        arrays[key] = np.ndarray(shape, np.dtype(dtype), buffer, offset)
        offset += arrays[key].nbytes
    return board, arrays


def attach_file(name: str, layout: Layout) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(writer process) Map the shared memory the coordinator made."""
    with open(name, "r+b") as shared:
        return attach(mmap.mmap(shared.fileno(), 0), layout)


class Board:
    """(writer process) Where the writer publishes each piece of work as it does it (see :data:`BOARD`)."""

    def __init__(self, board: np.ndarray | None = None) -> None:
        self.board = board

    def began(self) -> float:
        """A piece begins now; now (wall time, s of ``time.perf_counter``)."""
        now = time.perf_counter()
        if self.board is not None:
            self.board[2] = now
        return now

    def ended(self, began: float) -> float:
        """Publish the piece that began at ``began`` and ends now; now (wall time, s)."""
        now = time.perf_counter()
        board = self.board
        if board is None:
            return now
        j = 3 + 2 * (int(board[0]) % INTERVALS)
        board[j:j + 2] = began, now
        board[1] += now - began
        board[0] += 1  # published after its interval
        board[2] = 0.0
        return now


class Activity(Intervals):
    """(coordinator) The writer process's busy intervals as it publishes them on the :data:`BOARD` (wall times
    of ``time.perf_counter``, one clock for every process of the machine); read at each overlap test."""

    def __init__(self) -> None:
        super().__init__()
        self.board: np.ndarray | None = None

    def sync(self) -> None:
        """Take the intervals the writer has published since the last call."""
        board = self.board
        if board is None:
            return
        count = int(board[0])
        for i in range(max(self.count, count - INTERVALS), count):
            j = 3 + 2 * (i % INTERVALS)
            self.spans.append((float(board[j]), float(board[j + 1])))
        self.count, self.total_s = count, float(board[1])
        self._since = float(board[2]) or None

    def overlap_s(self, start: float, stop: float) -> float:
        self.sync()
        return super().overlap_s(start, stop)
