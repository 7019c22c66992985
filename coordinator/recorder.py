"""Streaming HDF5 recorder: every completed step reaches the file, even when a run stops early.

Datasets grow along their first axis (one row per step) and are flushed
in blocks of steps and whenever the run ends, however it ends.  The
file is written in SWMR mode, so it stays readable while the test runs and
after a crash at any flush point.  Layout::

    /time, /step_id, /ground_acceleration, /wall_step_s         (n,)
    /displacement, /velocity, /acceleration, /restoring_force   (n, ndof)
    /modules/<name>/displacement, /modules/<name>/force          (n, module ndof)
    /modules/<name>/records/<record>                             a module's own records (rows x columns; a
                                                                 streamed one grows in blocks during the run,
                                                                 one row per committed sample of the module)

Every dataset carries ``units`` (one per column, or one string) and, over DOFs, ``dofs``; every
module group its ``kind``, ``where``, ``dofs`` and ``units`` (see :func:`hybridsim.coordinator.units.labels`).

``/restoring_force`` is the integrator's committed restoring force (for alpha-OS the measured
force corrected with K_I; with condensed massless DOFs, T^T r on the DOFs kept, zero on the others);
what each module measured is in ``/modules/<name>/``.
    attrs: dofs, status ("running", "completed" or "stopped: <reason>"), completed_steps,
           stop (a stopped run: JSON {reason, step, time_s, module, cause}), ...
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import errno
import json
import mmap
import multiprocessing
import multiprocessing.connection
import multiprocessing.util
import os
import re
import select
import signal
import struct
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from hybridsim.coordinator.lateness import INTERVALS, Intervals
from hybridsim.coordinator.window import RowWindow, segments
from hybridsim.wire.contract import Record


class ResultsFileError(Exception):
    """The results file cannot take what the run must write (its disk is full, or a write failed): one line."""


RESERVE_BYTES = 256 * 1024
"""free space kept on the results file's disk beyond the next write, for the status and summary at the end"""

CHUNK_CACHE_BYTES = 0
"""HDF5's raw-data chunk cache per dataset: none.  Every row is written once, in whole chunks but for
the last; HDF5's default (1 MiB per dataset, filled by the chunks written) grew a run's memory by
about 9 MB per 100,000 steps of a 1-DOF run (rdcc_nbytes=CHUNK_CACHE_BYTES below)"""

RESUME_ROWS = 1024
"""rows a resumed run must have room for (estimated from the file's bytes per row) before anything is written"""

QUEUE_WRITES = 4
"""blocks of rows, checkpoints and records that may wait for the writer process before the step loop waits for it"""

DEFERRED_ROWS = 4096
"""rows a paced run's writer may be behind at most before it writes beside the loop (a loop that never sleeps
long enough for it): half the window, so that the loop never waits for a whole window to be written"""


def _space_error(path: Path, needed: int) -> str | None:
    """The one-line refusal if the disk of ``path`` has less than ``needed`` + RESERVE_BYTES free, else None."""
    folder = path.parent if path.parent.exists() else Path(".")
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    if free >= needed + RESERVE_BYTES:
        return None
    return (f"results file: no space left on device ({path}: {free} bytes free on its disk, the next write needs "
            f"{needed} and {RESERVE_BYTES} are kept for closing the file; free space and resume)")


def _write_error(path: Path, exc: BaseException) -> str:
    """The one-line message of a failed write or flush (HDF5 reports the errno inside its message)."""
    text = str(exc)
    found = re.search(r"errno = (\d+)", text)
    code = getattr(exc, "errno", None) or (int(found.group(1)) if found else None)
    if code == errno.ENOSPC:
        return f"results file: no space left on device ({path}: a write failed; free space and resume)"
    reason = os.strerror(code) if code else (text.strip().splitlines() or [type(exc).__name__])[0]
    return f"results file: write failed ({path}: {reason})"


class Recorder:
    """Append-only writer of one run's response history, its model and its checkpoints.

    ``columns`` maps each dataset name to its width (0 for a scalar per step).  The file is
    created by the constructor, which then starts the **writer process** (:func:`_serve`: multiprocessing's
    forkserver, never a fork of the coordinator and its gRPC threads; :data:`WRITER_NICE` lower in
    priority), the only one to write the file from then on: the coordinator's GIL is never held by an
    HDF5 call.  After :meth:`start`, :meth:`submit` copies the window's rows up to a row count into
    shared memory (a ring of the window's size, same slots) and asks the writer to write them;
    :meth:`checkpoint` and :meth:`records` send their data through the writer's pipe.  At most
    :data:`QUEUE_WRITES` requests wait for the writer; beyond that the caller waits (it never drops a row).

    Guarantees: ``completed_steps`` (and :attr:`rows`) move only after the writer says the rows are
    written and flushed; ``observe`` then sees them here, from the window (whose rows are not
    overwritten before: the step loop waits for :attr:`rows`).  A write or flush error, or a disk
    without room for the next write, sets :attr:`failure` to one line (``results file: no space left
    on device (...)``) and the writer writes nothing more.  When the disk was found full before
    writing, the file is intact and :meth:`close` still records the status; when the operating system
    refused a write, the file is abandoned: its descriptor is pointed at /dev/null so that closing it
    cannot write into it again, and what it holds is what was flushed before (its status stays
    ``running``).  A writer process that ended is a failure line too (never a wait without end); the
    file is then as a crash leaves it (readable, resumable).  The writer ignores SIGINT and SIGTERM (it
    is in the coordinator's process group: a Ctrl-C must not end it before the coordinator has closed
    the file) and ends when its pipe closes (the coordinator ended, however), after its current write.

    Replies are taken when the coordinator calls in (:meth:`collect`, and every method here): nothing
    runs in the coordinator between its calls.

    Checkpoints are double-buffered (``/checkpoint/slot0``, ``slot1``): a new one is written into
    the slot not in use, flushed, and only then does ``/checkpoint/current`` = [slot, step, step_id]
    point to it, so a crash at any moment leaves the last complete checkpoint readable.
    """

    def __init__(self, path: str | Path, columns: Mapping[str, int], *, dofs: Sequence[str],
                 attrs: Mapping[str, Any] | None = None, model: Mapping[str, np.ndarray] | None = None,
                 checkpoint_state: Mapping[str, np.ndarray] | None = None, checkpoint_modules: Sequence[str] = (),
                 chunk: int = 256, labels: Mapping[str, Mapping[str, Any]] | None = None,
                 streamed: Mapping[str, Sequence[Record]] | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        refusal = _space_error(self.path, 8 * sum(max(width, 1) for width in columns.values()) * chunk)
        if refusal is not None:
            raise ResultsFileError(refusal)
        with h5py.File(self.path, "w", libver="latest", rdcc_nbytes=CHUNK_CACHE_BYTES) as f:
            f.attrs["dofs"] = json.dumps(list(dofs))
            f.attrs["status"] = "running"
            f.attrs["completed_steps"] = 0
            f.attrs["summary"] = ""
            for key, value in (attrs or {}).items():
                f.attrs[key] = value if isinstance(value, (int, float, str)) else json.dumps(value)
            for key, width in columns.items():
                shape, maxshape = ((0,), (None,)) if width == 0 else ((0, width), (None, width))
                dtype = np.int64 if key == "step_id" else np.float64
                f.create_dataset(key, shape=shape, maxshape=maxshape, dtype=dtype, chunks=(chunk,) + shape[1:])
            for key, matrix in (model or {}).items():
                f.create_dataset(f"model/{key}", data=np.asarray(matrix))
            for key, values in (labels or {}).items():
                (f[key] if key in f else f.create_group(key)).attrs.update(values)
            if checkpoint_state is not None:
                f.create_dataset("checkpoint/current", data=np.array([-1, -1, -1], dtype=np.int64))
                for slot in ("slot0", "slot1"):
                    for key, value in checkpoint_state.items():
                        f.create_dataset(f"checkpoint/{slot}/integrator/{key}",
                                         data=np.zeros_like(np.asarray(value)))
                    for name in checkpoint_modules:
                        f.create_dataset(f"checkpoint/{slot}/modules/{name}", shape=(0,), maxshape=(None,),
                                         dtype=np.uint8, chunks=(4096,))
            _create_streamed(f, streamed or {})
        self._launch(0)

    @classmethod
    def reopen(cls, path: str | Path, rows: int, streamed: Mapping[str, Sequence[Record]] | None = None,
               attrs: Mapping[str, str] | None = None) -> "Recorder":
        """Continue writing a results file after its row ``rows - 1`` (later rows are dropped); the modules'
        streamed records (``streamed``: their names and columns) are continued where the modules resume;
        ``attrs`` replace the file's attributes of those names (the experiment as resumed)."""
        self = cls.__new__(cls)
        self.path = Path(path)
        size = self.path.stat().st_size
        claimed = int(read_attributes(self.path).get("completed_steps", 0))
        refusal = _space_error(self.path, int(RESUME_ROWS * size / max(claimed, 1)))  # room for a block of rows
        if refusal is not None:
            raise ResultsFileError(refusal)
        try:
            f = h5py.File(self.path, "r+", libver="latest", rdcc_nbytes=CHUNK_CACHE_BYTES)
        except OSError:  # a writer killed in SWMR mode leaves the file marked open for writing: copied anew
            refusal = _space_error(self.path, size)
            if refusal is not None:
                raise ResultsFileError(refusal) from None
            _rewrite(self.path)
            f = h5py.File(self.path, "r+", libver="latest", rdcc_nbytes=CHUNK_CACHE_BYTES)
        with f:
            def truncate(name: str, obj: Any) -> None:
                if _per_step(name, obj):
                    obj.resize(rows, axis=0)

            f.visititems(truncate)
            _create_streamed(f, streamed or {})
            f.attrs.update(attrs or {})
            f.attrs["status"] = "running"
            f.attrs.pop("stop", None)
            f.attrs["completed_steps"] = rows
        self._launch(rows)
        return self

    def _launch(self, rows: int) -> None:
        """Start the writer process over the file as it is closed now, holding ``rows`` rows."""
        self.rows = rows
        """rows on disk (the file's completed_steps)"""
        self.failure: str | None = None
        self.activity = _Activity()
        """when the writer process wrote (what real-time lateness is compared with)"""
        self._submitted = self._due = rows
        """rows sent to the writer; rows submitted (sent, or due at the next collect of a paced run)"""
        self._paced = False
        self._counts = dict.fromkeys(COUNTS, 0)
        self._behind = dict.fromkeys(("writer_hurried", "writer_behind"), False)
        """whether a paced writer is :data:`BEHIND_ROWS`, :data:`DEFERRED_ROWS` behind now"""
        self._pending = 0
        """requests sent to the writer and not answered yet"""
        self._sent = 0
        """requests sent to the writer (its numbers for them: 1, 2, ...)"""
        self._closed = False
        """the writer has closed the file, or has ended"""
        self._window: RowWindow | None = None
        self._observe: Callable[[int, Mapping[str, np.ndarray]], None] | None = None
        self._ring: dict[str, np.ndarray] = {}
        """the rows shared with the writer: arrays like the window's, over a mapping of a file in
        :data:`SHARED_DIR` unlinked as soon as the writer has mapped it too"""
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])  # each writer is a fork of a server that has imported h5py
        requests, self._requests = context.Pipe(duplex=False)
        self._replies, replies = context.Pipe(duplex=False)
        grants, self._grants = context.Pipe(duplex=False)
        os.set_blocking(self._grants.fileno(), False)  # a grant the writer has no room for is dropped, see _grant
        self._process = context.Process(target=_serve, args=(str(self.path), requests, replies, grants),
                                        name=f"results writer {self.path.name}")
        # multiprocessing would run the coordinator's main script again in the writer (a script without the
        # `if __name__ == "__main__":` guard would start its whole run there): the writer is told of none
        with _LAUNCHING:
            main, sys.modules["__main__"] = sys.modules["__main__"], _NO_MAIN
            try:
                self._process.start()
            finally:
                sys.modules["__main__"] = main
        requests.close()
        replies.close()
        grants.close()
        multiprocessing.util.Finalize(self, _close_pipes, args=((self._requests, self._grants),), exitpriority=10)
        """the pipes close, so the writer ends, at the coordinator's exit before multiprocessing joins it"""

    # -- the step loop's side ----------------------------------------------------------------------
    def start(self, window: RowWindow, observe: Callable[[int, Mapping[str, np.ndarray]], None] | None = None,
              paced: bool = False) -> None:
        """Share a ring of ``window``'s size with the writer and wait until it has the file open for
        writing; ``observe(first_row, rows)`` sees every block written (called here, from the window).

        ``paced``: a real-time loop, which calls :meth:`collect` while it sleeps; :meth:`submit` then leaves
        the rows to it (and sends them itself only when :data:`DEFERRED_ROWS` wait), and the writer works only
        in the loop's sleep, a piece at a time (see :meth:`collect`)."""
        self._window, self._observe = window, observe
        layout = [(key, values.shape, values.dtype.str) for key, values in window.arrays.items()]
        size = _shared_bytes(layout)
        folder = SHARED_DIR or tempfile.gettempdir()
        try:
            descriptor, name = tempfile.mkstemp(prefix=f".{self.path.name}-rows-", dir=folder)
        except OSError as exc:
            self.failure = _sharing_error(folder, size, exc)
            return
        try:
            os.posix_fallocate(descriptor, 0, size)  # every page now: a page found missing later is a SIGBUS
            self.activity.board, self._ring = _shared_arrays(mmap.mmap(descriptor, 0), layout)
        except OSError as exc:  # a full /dev/shm, a file-size limit (RLIMIT_FSIZE) below the ring
            self.failure = _sharing_error(folder, size, exc)
        finally:
            os.close(descriptor)
        try:
            if self.failure is None:
                self._send(("window", name, layout, paced))
                self._wait(lambda: self._pending == 0)
        finally:
            os.unlink(name)  # the writer has mapped it, or never will
        self._paced = paced

    def submit(self, rows: int) -> None:
        """Send the window's rows up to ``rows - 1`` to the writer (waits while :data:`QUEUE_WRITES` wait); in a
        paced run the next :meth:`collect` sends them, unless the writer is :data:`DEFERRED_ROWS` behind: the
        loop has not slept enough for it, and it is let write beside the loop (counted in :meth:`counts`)."""
        self._due = max(self._due, rows)
        if not self._paced:
            self._send_rows()
            return
        self._take()
        if self._count_episode("writer_behind", self._due - self.rows >= DEFERRED_ROWS):
            self.let_write()

    def collect(self, until: float) -> None:
        """(a paced run, while the loop sleeps until wall time ``until``, s of ``time.perf_counter``) Take the
        writer's replies; if they brought no rows to observe, send the rows due; let the writer work until then.

        A paced writer does its work in pieces (a dataset's rows, a flush, ...) and starts a piece only within
        such a grant, :data:`PIECE_S` before its end at the latest (at its end when it has fallen
        :data:`BEHIND_ROWS` behind): it runs while the loop and the daemons are idle, not beside a step.
        A loop that waits for the writer (its window or queue full, a checkpoint, the end) lets it run freely."""
        if not self._take() and self._due > self._submitted and self._pending < QUEUE_WRITES:
            self._send_rows()
        if self._pending:
            self._grant(until)

    def counts(self) -> dict[str, int]:
        """A paced run's counters (:data:`COUNTS`)."""
        return dict(self._counts)

    def let_write(self) -> None:
        """(a paced run that stops stepping for a while: a hold) Send the rows due and let the writer do all it
        has been sent, on any core, without waiting for it."""
        if self._paced and self.failure is None:
            self._send_rows()
            self._grant(FREE)

    def checkpoint(self, step: int, step_id: int, state: Mapping[str, np.ndarray], modules: Mapping[str, bytes]) -> None:
        """Send a consistent restart point after ``step`` (its rows are sent first)."""
        self._due = max(self._due, step + 1)
        self._send_rows()
        if self.failure is None:
            self._send(("checkpoint", step, step_id, dict(state), dict(modules)))

    def records(self, module: str, records: Sequence[Record]) -> None:
        """Send a block of ``module``'s streamed records (written at their ``first_row``)."""
        self._take()
        if self.failure is None and records:
            self._send(("records", module, list(records)))

    def wait_written(self, rows: int) -> None:
        """Block until ``rows`` rows (submitted) are on disk or the writer failed."""
        self._send_rows()
        self._wait(lambda: self.rows >= rows or self.failure is not None)

    def _send_rows(self) -> None:
        """Copy the rows due into the shared ring and ask the writer to write them."""
        if self._due > self._submitted and self.failure is None and self._window is not None:
            window = self._window  # the slots of these rows held rows written already (the loop waits for them)
            for key, values in window.arrays.items():
                for _, slot, count in window.segments(self._submitted, self._due):
                    self._ring[key][slot:slot + count] = values[slot:slot + count]
            self._submitted = self._due
            self._send(("rows", self._due))

    def close(self, status: str, summary: Mapping[str, Any] | None = None,
              stop: Mapping[str, Any] | None = None) -> None:
        """Write what is sent, then mark the run ``completed`` or ``stopped: reason`` and close.

        ``stop`` (attribute "stop", JSON) says why and where a stopped run stopped: reason, step, time_s,
        module.  After a failure nothing more is written: a file found full keeps its rows and gets the
        status (the reserve is there for it); an abandoned file is only released.
        """
        if self._process is None:
            return
        self._send_rows()
        self._send(("close", status, summary, stop), queued=False)
        self._wait(lambda: self._closed)
        self._process.join(JOIN_S)
        self._process = None
        _close_pipes((self._requests, self._replies, self._grants))
        self.activity.board, self._ring = None, {}  # the mapping goes with its last array

    def _send(self, request: tuple[Any, ...], queued: bool = True) -> None:
        """Send a request to the writer, after waiting for room among the requests it has not answered."""
        if queued:
            self._wait(lambda: self._pending < QUEUE_WRITES or self.failure is not None)
        if self._closed:
            return
        try:
            self._requests.send(request)
        except OSError:  # the writer has ended
            self._lost()
            return
        self._pending += 1
        self._sent += 1

    def _grant(self, until: float) -> None:
        """Let a paced writer work on the requests sent so far until wall time ``until`` (s): start pieces
        :data:`PIECE_S` before it unless it has fallen behind (:data:`BEHIND_ROWS`); on the core this loop runs
        on, which it is leaving to sleep (a grant without end: on any core).

        On the core just left the writer wakes at once and runs warm: woken on the other, idle core of a 2-vCPU
        VM, its first pieces took 1.6 times longer (p50 417 vs 257 us, two runs in a row) and it fell behind."""
        if self._closed:
            return
        hurried = self._count_episode("writer_hurried", self._due - self.rows >= BEHIND_ROWS)
        core = _current_cpu() if until != FREE else -1
        grant = GRANT.pack(until, 0.0 if hurried else PIECE_S, self._sent, core)
        while True:
            try:
                self._grants.send_bytes(grant)  # one write of less than PIPE_BUF bytes: all of it, or none
                return
            except BlockingIOError:  # the writer, in a long piece, has not read its grants (64 KiB of them)
                if until != FREE:
                    return  # dropped: the next sleep grants again
                select.select([], [self._grants], [], 1.0)
            except OSError:  # the writer has ended: its replies' pipe says so
                return

    def _count_episode(self, key: str, now: bool) -> bool:
        """Count an episode of ``key`` (one of ``_behind``) if it begins ``now``; whether it lasts."""
        if now and not self._behind[key]:
            self._counts[key] += 1
        self._behind[key] = now
        return now

    def _wait(self, done: Callable[[], bool]) -> None:
        """Take the writer's replies until ``done()``; a writer that ended ends the wait (its pipe closes).  A
        paced writer is let do all it has been sent without waiting for the loop's sleep."""
        self._take()
        if not done() and self._paced:
            self._counts["loop_writer_waits"] += 1
            self._grant(FREE)
        while not done() and not self._closed:
            self._replies.poll(None)  # a reply, or the end of the pipe
            self._take()

    def _take(self) -> bool:
        """Take the replies the writer has sent (never waits): rows on disk (observed, then counted), failure;
        whether rows were observed."""
        observed = False
        try:
            while not self._closed and self._replies.poll():
                kind, rows, failure = self._replies.recv()
                self._pending -= 1
                if rows > self.rows:
                    if self._observe is not None and self._window is not None:
                        window = self._window
                        for row, slot, count in window.segments(self.rows, rows):
                            self._observe(row, {k: v[slot:slot + count] for k, v in window.arrays.items()})
                        observed = True
                    self.rows = rows
                self.failure = self.failure or failure
                if kind == "closed":
                    self._closed = True
        except (EOFError, OSError):
            self._lost()
        self.activity.sync()
        return observed

    def _lost(self) -> None:
        """The writer process ended without closing the file: a failure line."""
        self._closed = True
        process = self._process
        if process is not None:
            process.join(JOIN_S)
        code = process.exitcode if process is not None else None
        how = (f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 else
               f"exit code {code}" if code is not None else "it did not answer")
        self.failure = self.failure or (f"results file: the writer process ended ({how}) after writing at least "
                                        f"{self.rows} rows ({self.path} is as a crash leaves it; resume continues "
                                        "it from its last checkpoint)")


_SCHED_GETCPU = getattr(ctypes.CDLL(None), "sched_getcpu", None)
"""the C library's ``sched_getcpu`` (glibc, musl), where it has one"""

SHARED_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None
"""where the file of the rows shared with the writer is made (memory; None: the temporary folder)"""

WRITER_NICE = 10
"""niceness the writer process adds to its own (os.nice): on a machine with few cores the step loop and the
daemons win the CPU when they want it, the writer takes what is left (a block of 1024 rows costs it a few ms).
In a paced (real-time) run the writer goes further, to SCHED_IDLE: it runs only on a core nothing else wants"""

_NO_MAIN = types.ModuleType("__main__")
"""the main module the writer process is told the coordinator has: none to import"""

_LAUNCHING = threading.Lock()
"""one writer started at a time (each puts the coordinator's main module back)"""

GRANT = struct.Struct("ddqq")
"""a grant to a paced writer: start pieces until this wall time (s, ``time.perf_counter``) less this reserve (s),
on requests up to this number, on this core (-1: any)"""

COUNTS = ("loop_writer_waits", "writer_hurried", "writer_behind")
"""a paced run's counts of its writer: the loop waited for it (letting it work freely: its window or queue
full, a checkpoint, the end); it fell :data:`BEHIND_ROWS` behind (and started pieces to the end of each
grant); it fell :data:`DEFERRED_ROWS` behind (and wrote beside the loop)"""

FREE = float("inf")
"""a grant without end: the writer does all the requests it covers"""

PIECE_S = 4.5e-4
"""the time a paced writer keeps for a piece of work (s): it starts one only if the grant lasts that much longer.
A piece takes 40-80 us on a core that has been running, 250-500 us (p90) on one that has just woken up"""

WARM_PIECE_S = 1.5e-4
"""the time kept for a piece that follows another at once (s): on a core already running, pieces take 40-80 us"""

WARM_GAP_S = 1e-4
"""how soon after a piece the next one counts as following it (s)"""

BEHIND_ROWS = 2048
"""rows due and not on disk beyond which a paced writer has fallen behind (its loop's sleeps too short for
:data:`PIECE_S`): it then starts pieces until the end of each grant, at the risk of a piece overlapping a step,
rather than make the loop wait for a whole window (:data:`hybridsim.coordinator.window.WINDOW_ROWS`)"""

JOIN_S = 5.0
"""how long to wait for the writer process to end once its pipe says it has (s)"""

BOARD = 3 + 2 * INTERVALS
"""float64 slots at the start of the shared memory where the writer publishes its activity: writes done,
their total time (s), the start of the current one (0 when idle), then the last INTERVALS (start, end)"""


class _Activity(Intervals):
    """The writer process's busy intervals as it publishes them in shared memory (:data:`BOARD`; wall times
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


def _current_cpu() -> int:
    """The core the calling thread runs on (the C library's ``sched_getcpu``; -1 where there is none)."""
    return _SCHED_GETCPU() if _SCHED_GETCPU is not None else -1


def _close_pipes(pipes: Sequence[Connection]) -> None:
    """Close the coordinator's ends of the writer's pipes."""
    for pipe in pipes:
        pipe.close()


def _sharing_error(folder: str, size: int, exc: OSError) -> str:
    return (f"results file: no memory to share the rows with the writer process ({size} bytes in {folder}: "
            f"{exc.strerror}; free space or raise the limit, and resume)")


def _shared_bytes(layout: Sequence[tuple[str, tuple[int, ...], str]]) -> int:
    return 8 * BOARD + sum(int(np.prod(shape)) * np.dtype(dtype).itemsize for _, shape, dtype in layout)


def _shared_arrays(buffer: mmap.mmap, layout: Sequence[tuple[str, tuple[int, ...], str]]
                   ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The activity board and the ring of rows (arrays of ``layout``: name, shape, dtype) in ``buffer``."""
    board = np.ndarray((BOARD,), np.float64, buffer)
    arrays, offset = {}, board.nbytes
    for key, shape, dtype in layout:
        arrays[key] = np.ndarray(shape, np.dtype(dtype), buffer, offset)
        offset += arrays[key].nbytes
    return board, arrays


# -- the writer process -------------------------------------------------------------------------------
def _serve(path: str, requests: Connection, replies: Connection, grants: Connection) -> None:
    """(writer process) Write what the coordinator sends until it says close, or its pipe closes; in a paced
    run, a piece at a time within the coordinator's grants."""
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_IGN)  # the coordinator stops the run and closes the file
    os.nice(WRITER_NICE)
    inbox = _Inbox(requests)
    writer = _Writer(Path(path), _Gate(grants, inbox))
    try:
        while (request := inbox.take()) is not None:  # None: the coordinator has ended; what is flushed stays
            if request[0] == "close":
                writer.close(*request[1:])
                replies.send(("closed", writer.rows, writer.failure))
                return
            writer.handle(request)
            replies.send(("done", writer.rows, writer.failure))
    except BrokenPipeError:  # the coordinator has ended while the writer answered
        return
    finally:
        writer.release()


class _Inbox:
    """(writer process) The coordinator's requests, received as soon as they come, also while a request waits
    for a grant: a request larger than the pipe's buffer (a checkpoint, a block of records) must never wait
    for the writer to finish the one before, which may wait for the loop's next sleep."""

    def __init__(self, requests: Connection) -> None:
        self.connection = requests
        self.ended = False
        """the coordinator has closed its end (it has ended)"""
        self._queue: collections.deque[tuple[Any, ...]] = collections.deque()

    def drain(self) -> None:
        """Receive every request that has come (never waits but for the rest of one being sent)."""
        try:
            while not self.ended and self.connection.poll():
                self._queue.append(self.connection.recv())
        except (EOFError, OSError):
            self.ended = True

    def take(self) -> tuple[Any, ...] | None:
        """The next request, waiting for it; None once the coordinator has ended and every request is taken."""
        if not self._queue and not self.ended:
            try:
                self._queue.append(self.connection.recv())
            except (EOFError, OSError):
                self.ended = True
        return self._queue.popleft() if self._queue else None


class _Gate:
    """(writer process) When a paced writer may start its next piece of work: within the coordinator's
    latest grant (:data:`GRANT`: before its wall time less its reserve, or :data:`WARM_PIECE_S` right after
    another piece, on a request it covers), on the core the grant names.  Until the run is paced, and after
    the coordinator has ended (a pipe closed), always."""

    def __init__(self, grants: Connection, inbox: _Inbox) -> None:
        self.paced = False
        self._grants, self._inbox = grants, inbox
        self._until, self._reserve, self._through = 0.0, 0.0, 0
        self._ended = 0.0
        """when the last piece ended (wall time, s)"""
        self._cores = os.sched_getaffinity(0)
        self._core = -1
        """the core the writer keeps to (-1: any of ``_cores``)"""

    def wait(self, request: int) -> None:
        """Return when a piece of request number ``request`` may start."""
        while self.paced and not self._inbox.ended:
            try:
                while self._grants.poll():  # the newest grant holds
                    self._until, self._reserve, self._through, core = GRANT.unpack(self._grants.recv_bytes())
                    self._keep_to(core)
            except (EOFError, OSError):  # the coordinator has ended: finish the request at hand
                break
            now = time.perf_counter()
            reserve = min(self._reserve, WARM_PIECE_S) if now - self._ended < WARM_GAP_S else self._reserve
            if request <= self._through and now + reserve < self._until:
                return
            if self._inbox.connection in multiprocessing.connection.wait([self._grants, self._inbox.connection]):
                self._inbox.drain()
        self.paced = False

    def ended(self, when: float) -> None:
        """A piece has ended at wall time ``when`` (s)."""
        self._ended = when

    def _keep_to(self, core: int) -> None:
        """Run on ``core`` from now on (-1: on any core the writer started with)."""
        if core != self._core:
            with contextlib.suppress(OSError):  # a core this process may not use
                os.sched_setaffinity(0, self._cores if core < 0 else {core})
                self._core = core


class _Writer:
    """(writer process) The results file open for SWMR writing; rows come from the shared ring.  Each write is
    a series of pieces (:meth:`handle`), each started only when :class:`_Gate` allows."""

    def __init__(self, path: Path, gate: _Gate) -> None:
        self.path = path
        self._gate = gate
        self._requests = 0
        """requests received that write (the coordinator's numbers for them)"""
        self.rows = 0
        self.failure: str | None = None
        self._abandoned = False
        self._datasets: dict[str, h5py.Dataset] = {}
        """every dataset the writer touches, kept open until the file closes: closing one flushes its
        metadata, which must not happen in the middle of a failed write"""
        self._board: np.ndarray | None = None
        self._ring: dict[str, np.ndarray] = {}
        self._file: h5py.File | None = None
        self._completed: h5py.h5a.AttrID | None = None
        """the file's attribute completed_steps, kept open: rewritten after every block"""
        try:
            self._file = h5py.File(path, "r+", libver="latest", rdcc_nbytes=CHUNK_CACHE_BYTES)
            self._descriptor = self._file.id.get_vfd_handle()
            """the file's descriptor, taken now: after a failed write HDF5 may not answer for it"""
            self.rows = int(self._file.attrs["completed_steps"])
            self._file.swmr_mode = True
            self._completed = h5py.h5a.open(self._file.id, b"completed_steps")  # (SWMR starts with none open)
        except Exception as exc:  # noqa: BLE001 - HDF5 reports errors as several types
            self.failure = _write_error(path, exc)

    def handle(self, request: tuple[Any, ...]) -> None:
        """Do one request: attach the shared memory ("window"), or write rows, a checkpoint or records, a piece
        at a time (each one an interval on the activity board)."""
        kind, *arguments = request
        self._requests += 1
        if kind == "window":
            name, layout, paced = arguments
            with open(name, "r+b") as shared:
                self._board, self._ring = _shared_arrays(mmap.mmap(shared.fileno(), 0), layout)
            if paced:  # a waking step loop or daemon takes the CPU from it at once (a niced one ran on up to a slice)
                self._gate.paced = True
                with contextlib.suppress(OSError):
                    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            return
        work = {"rows": self._write_rows, "records": self._write_records,
                "checkpoint": self._write_checkpoint}[kind](*arguments)
        more = True
        while more and self.failure is None:
            self._gate.wait(self._requests)
            began = self._began()
            try:
                more = next(work, False) is None
            except Exception as exc:  # noqa: BLE001 - HDF5 reports write errors as several types
                self._abandon(exc)
            finally:
                self._gate.ended(self._ended(began))

    def _began(self) -> float:
        now = time.perf_counter()
        if self._board is not None:
            self._board[2] = now
        return now

    def _ended(self, began: float) -> float:
        """Publish the piece that began at ``began`` and ends now; now (wall time, s)."""
        now = time.perf_counter()
        board = self._board
        if board is None:
            return now
        j = 3 + 2 * (int(board[0]) % INTERVALS)
        board[j:j + 2] = began, now
        board[1] += now - began
        board[0] += 1  # published after its interval
        board[2] = 0.0
        return now

    # Each write is a generator: the work up to each ``yield`` is one piece.
    def _write_rows(self, stop: int) -> Iterator[None]:
        start = self.rows
        ring = self._ring
        if stop <= start or self._refuse(sum(values[0].nbytes for values in ring.values()) * (stop - start)):
            return
        for key, values in ring.items():
            dataset = self._dataset(key).id
            dataset.set_extent((stop,) + values.shape[1:])
            for row, slot, count in segments(start, stop, values.shape[0]):
                _write_at(dataset, row, values[slot:slot + count])
            yield
        self._file.flush()  # type: ignore[union-attr]
        yield
        self._completed.write(np.array(stop, dtype=np.int64))  # type: ignore[union-attr]
        self._file.flush()  # type: ignore[union-attr]
        self.rows = stop

    def _write_checkpoint(self, step: int, step_id: int, state: Mapping[str, np.ndarray],
                          modules: Mapping[str, bytes]) -> Iterator[None]:
        if self._refuse(2 * sum(len(blob) for blob in modules.values()) + 8 * sum(v.size for v in state.values())):
            return
        current = self._dataset("checkpoint/current")
        slot = "slot1" if current[0] == 0 else "slot0"
        for key, value in state.items():
            self._dataset(f"checkpoint/{slot}/integrator/{key}")[...] = value
        yield
        for name, blob in modules.items():
            dataset = self._dataset(f"checkpoint/{slot}/modules/{name}")
            dataset.resize(len(blob), axis=0)
            dataset[:] = np.frombuffer(blob, dtype=np.uint8)
            yield
        self._file.flush()  # type: ignore[union-attr]
        yield
        current[...] = [int(slot[-1]), step, step_id]
        self._file.flush()  # type: ignore[union-attr]

    def _write_records(self, module: str, records: Sequence[Record]) -> Iterator[None]:
        if self._refuse(sum(8 * np.size(r.values) for r in records)):
            return
        for record in records:
            _store_streamed(self._dataset(f"modules/{module}/records/{record.name}"), record)
            yield
        self._file.flush()  # type: ignore[union-attr]

    def _dataset(self, name: str) -> h5py.Dataset:
        if name not in self._datasets:
            self._datasets[name] = self._file[name]  # type: ignore[index]
        return self._datasets[name]

    def _refuse(self, needed: int) -> bool:
        """Stop writing (with the one-line failure) if the disk has no room for ``needed`` bytes and the reserve."""
        self.failure = _space_error(self.path, needed)
        return self.failure is not None

    def _abandon(self, exc: BaseException) -> None:
        """A write failed: point the file's descriptor at /dev/null, record the line, release the file."""
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, self._descriptor)
        os.close(null)
        self._abandoned = True
        self.failure = _write_error(self.path, exc)
        self.release()

    def close(self, status: str, summary: Mapping[str, Any] | None, stop: Mapping[str, Any] | None) -> None:
        """Record the run's status (unless the file was abandoned or never opened) and close the file."""
        if self._file is None or self._abandoned or not self._file.id.valid:
            return
        try:
            self._file.attrs["status"] = status
            if summary is not None:
                self._file.attrs["summary"] = json.dumps(summary)
            if stop is not None:
                self._file.attrs["stop"] = json.dumps(stop)
            self._file.close()
        except Exception as exc:  # noqa: BLE001 - HDF5 reports write errors as several types
            self._abandon(exc)

    def release(self) -> None:
        """Close the file as it stands (an abandoned one writes nothing: its descriptor is /dev/null)."""
        if self._file is not None:
            with contextlib.suppress(Exception):
                self._file.close()
            self._file = None


def _write_at(dataset: h5py.h5d.DatasetID, row: int, values: np.ndarray) -> None:
    """Write ``values`` (C-contiguous rows) into ``dataset`` from ``row`` on, through HDF5's own calls: h5py's
    indexing costs two to three times more per call, most of a paced writer's piece."""
    space = dataset.get_space()
    space.select_hyperslab((row,) + (0,) * (values.ndim - 1), values.shape)
    dataset.write(h5py.h5s.create_simple(values.shape), space, values)


def _create_streamed(f: h5py.File, streamed: Mapping[str, Sequence[Record]]) -> None:
    """Create the datasets of the modules' streamed records that ``f`` lacks (empty, growing; unfilled rows NaN)."""
    for module, records in streamed.items():
        for record in records:
            key = f"modules/{module}/records/{record.name}"
            if key in f:
                continue
            width = len(record.columns)
            dataset = f.create_dataset(key, shape=(0, width), maxshape=(None, width), chunks=(4096, width),
                                       dtype=np.float64, fillvalue=np.nan)
            dataset.attrs.update({"units": list(record.units), "columns": list(record.columns),
                                  "description": record.description})


def _store_streamed(dataset: h5py.Dataset, record: Record) -> None:
    """Rows of a streamed record at its ``first_row``; rows after them (an earlier run's, before a resume) go."""
    values = np.asarray(record.values, dtype=float).reshape(-1, dataset.shape[1])
    stop = int(record.first_row or 0) + values.shape[0]
    dataset.resize(stop, axis=0)
    dataset[stop - values.shape[0]:stop] = values


def _rewrite(path: Path) -> None:
    """Copy a results file whose writer died (still marked open for SWMR writing) into a clean one."""
    fresh = path.with_name(f".{path.name}.resumed")
    with h5py.File(path, "r", libver="latest", swmr=True) as old, h5py.File(fresh, "w", libver="latest") as new:
        for key, value in old.attrs.items():
            new.attrs[key] = value
        for name in old:
            old.copy(old[name], new, name=name)
    os.replace(fresh, path)


@dataclass(frozen=True)
class Checkpoint:
    """The last consistent restart point of a results file."""

    step: int
    """time-step index n of the checkpointed (committed) step"""
    step_id: int
    """the module step ID committed at step n"""
    integrator: dict[str, np.ndarray]
    modules: dict[str, bytes]


def read_checkpoint(path: str | Path) -> Checkpoint | None:
    """The last complete checkpoint of a results file, or None if it has none."""
    with h5py.File(path, "r", libver="latest", swmr=True) as f:
        if "checkpoint/current" not in f:
            return None
        slot, step, step_id = (int(v) for v in f["checkpoint/current"][()])
        if slot < 0:
            return None
        group = f[f"checkpoint/slot{slot}"]
        integrator = {k: v[()] for k, v in group["integrator"].items()}
        modules = {k: v[()].tobytes() for k, v in group["modules"].items()} if "modules" in group else {}
        return Checkpoint(step, step_id, integrator, modules)


def write_records(path: str | Path, records: Mapping[str, Sequence[Record]], errors: Mapping[str, str]) -> None:
    """Store modules' own records in a closed results file: ``/modules/<name>/records/<record>`` with
    ``units``, ``columns`` and ``description``; a module that could not give them gets ``records_error``."""
    with h5py.File(path, "r+", libver="latest") as f:
        for name, module_records in records.items():
            _create_streamed(f, {name: [r for r in module_records if r.first_row is not None]})
            for record in module_records:
                key = f"modules/{name}/records/{record.name}"
                if record.first_row is not None:
                    _store_streamed(f[key], record)
                    continue
                if key in f:
                    del f[key]
                dataset = f.create_dataset(key, data=np.asarray(record.values, dtype=float))
                dataset.attrs.update({"units": list(record.units), "columns": list(record.columns),
                                      "description": record.description})
        for name, error in errors.items():
            f.require_group(f"modules/{name}").attrs["records_error"] = error


def annotate(path: str | Path, key: str, value: Any) -> None:
    """Add an attribute (JSON for anything but a string) to a closed results file."""
    with h5py.File(path, "r+", libver="latest") as f:
        f.attrs[key] = value if isinstance(value, str) else json.dumps(value)


def read_attributes(path: str | Path) -> dict[str, Any]:
    """The attributes of a results file (experiment, status, summary, ...) without its datasets."""
    with h5py.File(path, "r", libver="latest", swmr=True) as f:
        return _attributes(f)


def _attributes(f: h5py.File) -> dict[str, Any]:
    return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}


def _per_step(name: str, obj: Any) -> bool:
    """Whether ``obj`` is a per-step dataset (it grows one row per step; checkpoints and records excluded)."""
    return (isinstance(obj, h5py.Dataset) and obj.maxshape[:1] == (None,) and not name.startswith("checkpoint/")
            and "/records/" not in name)


def read_results(path: str | Path) -> dict[str, Any]:
    """All datasets and attributes of a results file as numpy arrays and Python values.

    Per-step datasets hold the ``completed_steps`` rows the file claims: rows a failed write left
    beyond them are not returned.
    """
    out: dict[str, Any] = {}
    with h5py.File(path, "r", libver="latest", swmr=True) as f:
        rows = int(f.attrs.get("completed_steps", 0))

        def read(name: str, obj: Any) -> None:
            if isinstance(obj, h5py.Dataset) and not name.startswith("checkpoint/"):
                out[name] = obj[:rows] if _per_step(name, obj) else obj[()]

        f.visititems(read)
        out["attrs"] = _attributes(f)
    out["dofs"] = json.loads(out["attrs"]["dofs"])
    return out


def read_rows(path: str | Path, first: int, stop: int) -> dict[str, np.ndarray]:
    """Rows ``first .. stop-1`` of every per-step dataset, and the ``model/`` matrices, of a results file."""
    out: dict[str, np.ndarray] = {}
    with h5py.File(path, "r", libver="latest", swmr=True) as f:
        def read(name: str, obj: Any) -> None:
            if _per_step(name, obj):
                out[name] = obj[first:stop]
            elif isinstance(obj, h5py.Dataset) and name.startswith("model/"):
                out[name] = obj[()]

        f.visititems(read)
    return out


def scan_rows(path: str | Path, stop: int, observe: Callable[[int, Mapping[str, np.ndarray]], None],
              block: int = 65536) -> None:
    """Call ``observe(first_row, rows)`` over rows 0 .. stop-1 of a results file, ``block`` rows at a time."""
    for first in range(0, stop, block):
        observe(first, read_rows(path, first, min(first + block, stop)))
